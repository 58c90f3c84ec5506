package schemas

// A breaker's check of keyOnlyImage against the real captures: every
// row image of the schema-envelope captures, sent as a full-image delete
// (MySQL's binlog_row_image=FULL, PostgreSQL's REPLICA IDENTITY FULL),
// must keep its values.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

func TestBreakKeyOnlyCapturesKeepFullImages(t *testing.T) {
	for _, c := range []struct {
		rel, key string
		lines    bool
	}{
		{"flink/debezium-data-schema-include.txt", "id", true},
		{"flink/debezium-postgres-data-schema-include.txt", "id", true},
		{"risingwave/debezium_log.1", "id", true},
		{"debezium-server-iceberg/serde-unnested-delete-val-withschema.json", "id", false},
		{"debezium-server-iceberg/serde-unnested-order-val-withschema.json", "order_number", false},
	} {
		var raws [][]byte
		if c.lines {
			for _, r := range fixtureLines(t, c.rel) {
				raws = append(raws, r.value)
			}
		} else {
			raws = append(raws, readFixture(t, c.rel))
		}
		n := 0
		for i, raw := range raws {
			var env map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&env); err != nil {
				t.Fatal(err)
			}
			p := env["payload"].(map[string]any)
			img := p["after"]
			if img == nil {
				img = p["before"]
			}
			p["before"], p["after"], p["op"] = img, nil, "d"
			b, _ := json.Marshal(env)
			d := NewDecoder(DecoderOptions{KeyColumns: []string{c.key}})
			got, err := d.Decode(Record{Topic: c.rel, Value: b})
			if err != nil {
				t.Fatalf("%s %d: %v", c.rel, i, err)
			}
			// the same image as an upsert's after image
			p["before"], p["after"], p["op"] = nil, img, "c"
			b, _ = json.Marshal(env)
			up, err := NewDecoder(DecoderOptions{KeyColumns: []string{c.key}}).Decode(Record{Topic: c.rel, Value: b})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := fmt.Sprint(got.Event.Before.Vals), fmt.Sprint(up.Event.After.Vals); g != w {
				t.Errorf("%s %d: full delete image decoded\n %s\nwant\n %s", c.rel, i, g, w)
			}
			n++
		}
		t.Logf("%s: %d images", c.rel, n)
	}
}

// The flattened capture (ExtractNewRecordState, delete.handling.mode
// rewrite) as a delete: the default replica identity's image (Debezium
// fills the required columns with 0 and the epoch) is key-only, the
// row's own values are a full image.
func TestBreakKeyOnlyFlattenedCapture(t *testing.T) {
	raw := readFixture(t, "debezium-server-iceberg/unwrap-with-schema.json")
	for _, c := range []struct {
		payload map[string]any
		full    bool
	}{
		{map[string]any{"id": 10003, "order_date": 0, "purchaser": 0, "quantity": 0, "product_id": 0}, false},
		{map[string]any{"id": 10003, "order_date": 16850, "purchaser": 1002, "quantity": 2, "product_id": 106}, true},
		{map[string]any{"id": 10003, "order_date": 0, "purchaser": 0, "quantity": 2, "product_id": 0}, true},
	} {
		var env map[string]any
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		p := env["payload"].(map[string]any)
		for k, v := range c.payload {
			p[k] = v
		}
		p["__op"], p["__deleted"] = "d", "true"
		b, _ := json.Marshal(env)
		got, err := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}}).Decode(Record{Topic: "x", Value: b})
		if err != nil {
			t.Fatal(err)
		}
		if got.Event.Before == nil {
			t.Fatalf("%v: no before image: %+v", c.payload, got.Event)
		}
		if f := got.Event.Before.HasValuesBeyond([]string{"id"}); f != c.full {
			t.Errorf("%v: full %v, want %v: %v", c.payload, f, c.full, got.Event.Before.Vals)
		}
	}
}
