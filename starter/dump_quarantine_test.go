package main

import (
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
)

// dump --quarantine names a quarantined record's key "col=value" (key_text,
// after kafka_key) when its Kafka key decodes to the mirror's key columns,
// and leaves the rows whose key does not decode (garbage bytes, an erased
// key's tombstone stored without a key) as they were.
func TestNameQuarantineKeys(t *testing.T) {
	cols := []string{"kafka_topic", "kafka_partition", "kafka_offset", "kafka_key", "kafka_value", "stage", "reason"}
	rows := []lake.Row{
		{"kafka_topic": "shop.public.orders", "kafka_partition": 0, "kafka_offset": 7, "kafka_key": `{"order_id":2001}`, "kafka_value": "not json", "stage": "decode", "reason": "not JSON"},
		{"kafka_topic": "shop.public.orders", "kafka_partition": 0, "kafka_offset": 8, "kafka_key": `{"schema":{"type":"struct","fields":[{"field":"order_id","type":"int32"}]},"payload":{"order_id":2002}}`, "kafka_value": nil, "stage": "purged", "reason": "purged key"},
		{"kafka_topic": "shop.public.orders", "kafka_partition": 0, "kafka_offset": 9, "kafka_key": "2001", "kafka_value": "x", "stage": "decode", "reason": "not JSON"},
		{"kafka_topic": "shop.public.orders", "kafka_partition": 0, "kafka_offset": 10, "kafka_key": "/wBnYXJiYWdl", "kafka_value": "x", "stage": "decode", "reason": "not JSON"},
		{"kafka_topic": "shop.public.orders", "kafka_partition": 0, "kafka_offset": 11, "kafka_key": nil, "kafka_value": nil, "stage": "purged", "reason": "erased"},
	}
	got := nameQuarantineKeys(rows, cols, []string{"order_id"})
	var b strings.Builder
	if err := lake.WriteJSONLines(&b, rows, got); err != nil {
		t.Fatal(err)
	}
	want := `{"kafka_topic":"shop.public.orders","kafka_partition":0,"kafka_offset":7,"kafka_key":"{\"order_id\":2001}","key_text":"order_id=2001","kafka_value":"not json","stage":"decode","reason":"not JSON"}
{"kafka_topic":"shop.public.orders","kafka_partition":0,"kafka_offset":8,"kafka_key":"{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"order_id\",\"type\":\"int32\"}]},\"payload\":{\"order_id\":2002}}","key_text":"order_id=2002","kafka_value":null,"stage":"purged","reason":"purged key"}
{"kafka_topic":"shop.public.orders","kafka_partition":0,"kafka_offset":9,"kafka_key":"2001","kafka_value":"x","stage":"decode","reason":"not JSON"}
{"kafka_topic":"shop.public.orders","kafka_partition":0,"kafka_offset":10,"kafka_key":"/wBnYXJiYWdl","kafka_value":"x","stage":"decode","reason":"not JSON"}
{"kafka_topic":"shop.public.orders","kafka_partition":0,"kafka_offset":11,"kafka_key":null,"kafka_value":null,"stage":"purged","reason":"erased"}
`
	if b.String() != want {
		t.Errorf("dump --quarantine rows:\n%s\nwant:\n%s", b.String(), want)
	}
	if strings.Join(cols, ",") != "kafka_topic,kafka_partition,kafka_offset,kafka_key,kafka_value,stage,reason" {
		t.Errorf("the caller's columns changed: %v", cols)
	}

	// No key decodes: the columns, and so every line, stay as they were.
	plain := []lake.Row{{"kafka_key": "garbage", "stage": "decode"}}
	if got := nameQuarantineKeys(plain, []string{"kafka_key", "stage"}, []string{"order_id"}); strings.Join(got, ",") != "kafka_key,stage" || len(plain[0]) != 2 {
		t.Errorf("undecodable keys only: columns %v, row %v", got, plain[0])
	}
}
