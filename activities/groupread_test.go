package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/schemas"
)

// The group's consumer reads its transaction topic (kfake) from the
// group's next offset to the end: ENDs with their commit positions
// (cut.CommitPosition of their PostgreSQL ids) and per-table counts, the
// real END of the kafka-connect-iceberg-sink capture among them; BEGINs
// counted; the first record that does not decode holds the read there
// (Next), the records after it not taken (nor examined); an
// END whose id gives no commit position holds it too; a read bounded by
// MaxRecords says More. A next offset past the topic's end (the topic
// created again) and a topic of two partitions are refused.
func TestReadGroupTransactions(t *testing.T) {
	ctx := context.Background()
	_, kc := kfakeBroker(t)
	b, err := os.ReadFile(filepath.Join("..", "testdata", "debezium", "kafka-connect-iceberg-sink", "debezium-metadata-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := schemas.SplitValues(b)
	if err != nil || len(vals) != 1 {
		t.Fatalf("fixture: %d values, %v", len(vals), err)
	}
	const topic = "srv.transaction"
	if err := kc.CreateTopic(ctx, topic, 1); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for _, v := range []string{
		`{"status":"BEGIN","id":"571:53195829","event_count":null,"data_collections":null,"ts_ms":1486500577125}`,
		`{"status":"END","id":"571:53195832","event_count":3,"data_collections":[{"data_collection":"public.accounts","event_count":2},{"data_collection":"public.transfers","event_count":1}],"ts_ms":1486500577691}`,
		`{"status":"BEGIN","id":"12117:67299600","event_count":null,"data_collections":null,"ts_ms":1680821545900}`,
		string(vals[0]), // END 12117:67299632, public.mine: 1
		`not json {`,
		`{"status":"END","id":"12200:70000000","event_count":1,"data_collections":[{"data_collection":"public.accounts","event_count":1}],"ts_ms":1680821546000}`,
		`{"status":"END","id":"3e11fa47-71ca-11e1-9e33-c80aa9429562:23","event_count":1,"data_collections":[{"data_collection":"shop.orders","event_count":1}],"ts_ms":1680821547000}`,
	} {
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(`{"id":"x"}`), Value: []byte(v)})
	}
	if err := kc.Produce(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	a := New(mustCatalog(t), kc)
	pos := func(lsn uint64) string { return cdc.PostgresSeq(lsn, 0).Hex() }
	end1 := payload.GroupEnd{Partition: 0, Offset: 1, ID: "571:53195832", Commit: pos(53195832),
		Counts: map[string]int64{"public.accounts": 2, "public.transfers": 1}, TsMs: 1486500577691}
	end3 := payload.GroupEnd{Partition: 0, Offset: 3, ID: "12117:67299632", Commit: pos(67299632), Counts: map[string]int64{"public.mine": 1}, TsMs: 1680821545908}
	end5 := payload.GroupEnd{Partition: 0, Offset: 5, ID: "12200:70000000", Commit: pos(70000000), Counts: map[string]int64{"public.accounts": 1}, TsMs: 1680821546000}
	garbage := payload.GroupKept{Partition: 0, Offset: 4, Value: "not json {",
		Reason: `transaction metadata: not JSON: cannot parse JSON: unexpected value found: "not json {"; unparsed tail: "not json {"`}
	gtid := payload.GroupKept{Partition: 0, Offset: 6,
		Reason: `END "3e11fa47-71ca-11e1-9e33-c80aa9429562:23": the id gives no commit position (PostgreSQL txId:LSN and SQL Server commit LSNs do; MySQL, MariaDB and Oracle ids do not: such a group cuts by position)`}
	ends := payload.Offsets{0: 7}
	for _, c := range []struct {
		name string
		req  GroupReadRequest
		want GroupReadResult
	}{
		{"from the log start, held at the garbage", GroupReadRequest{Group: "shop", Topic: topic},
			GroupReadResult{Ends: []payload.GroupEnd{end1, end3}, Begins: 2, Kept: []payload.GroupKept{garbage},
				Next: payload.Offsets{0: 4}, EndOffsets: ends, Connector: "postgresql"}},
		{"bounded", GroupReadRequest{Group: "shop", Topic: topic, MaxRecords: 2},
			GroupReadResult{Ends: []payload.GroupEnd{end1}, Begins: 1, Next: payload.Offsets{0: 2}, EndOffsets: ends, More: true, Connector: "postgresql"}},
		{"past the garbage, held at the GTID", GroupReadRequest{Group: "shop", Topic: topic, From: payload.Offsets{0: 5}},
			GroupReadResult{Ends: []payload.GroupEnd{end5}, Kept: []payload.GroupKept{gtid}, Next: payload.Offsets{0: 6}, EndOffsets: ends, Connector: "postgresql"}},
		{"at the end", GroupReadRequest{Group: "shop", Topic: topic, From: payload.Offsets{0: 7}},
			GroupReadResult{Next: payload.Offsets{0: 7}, EndOffsets: ends}},
	} {
		got, err := a.ReadGroupTransactions(ctx, c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", c.name, got, c.want)
		}
	}

	_, err = a.ReadGroupTransactions(ctx, GroupReadRequest{Group: "shop", Topic: topic, From: payload.Offsets{0: 9}})
	var reset *temporal.ApplicationError
	if !errors.As(err, &reset) || reset.Type() != ErrTypeLogReset || !reset.NonRetryable() ||
		reset.Message() != "group shop: transaction topic srv.transaction partition 0 ends at offset 7, below the group's next offset 9: the topic was deleted and created again; the group cannot tell which transactions it has read" {
		t.Fatalf("a next offset past the end: %v", err)
	}

	if err := kc.CreateTopic(ctx, "two.transaction", 2); err != nil {
		t.Fatal(err)
	}
	_, err = a.ReadGroupTransactions(ctx, GroupReadRequest{Group: "shop", Topic: "two.transaction"})
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != ErrTypeBadSpec || !ae.NonRetryable() ||
		ae.Message() != "group shop: transaction topic two.transaction has 2 partitions: its END records are in commit order only within one, so the group cannot cut by them; give the connector a transaction topic of one partition" {
		t.Fatalf("two partitions: %v", err)
	}
	if _, err := a.ReadGroupTransactions(ctx, GroupReadRequest{Group: "shop", Topic: "none.transaction"}); !errors.Is(err, kafka.ErrUnknownTopic) {
		t.Fatalf("a topic that does not exist: %v, want kafka.ErrUnknownTopic", err)
	}
}
