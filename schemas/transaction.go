package schemas

import (
	"errors"
	"fmt"

	"github.com/valyala/fastjson"
)

// Transaction is one record of a connector's transaction metadata topic
// (Debezium's provide.transaction.metadata=true, topic
// <topic.prefix>.transaction; Debezium docs, "Transaction metadata"): the
// BEGIN or END of one source transaction. The table topics' change events
// of the transaction carry its ID in their `transaction.id`.
type Transaction struct {
	Status string // "BEGIN" or "END"
	// ID is the connector's transaction id as it gives it: PostgreSQL
	// "txId:LSN", MySQL the GTID or "file:pos", SQL Server the commit
	// LSN, Oracle the XID.
	ID string
	// EventCount is the number of change events of the transaction, in
	// all tables (END only; 0 on a BEGIN).
	EventCount int64
	// Collections is the number of change events per table
	// ("schema.table", the connector's data collection), in the order the
	// connector lists them (END only).
	Collections []CollectionCount
	// TsMs is the connector's processing time of the event, milliseconds
	// since the epoch (`ts_ms`).
	TsMs int64
}

// CollectionCount is one table's share of a transaction's events.
type CollectionCount struct {
	Collection string // "schema.table" (`data_collection`)
	EventCount int64
}

// DecodeTransaction reads one value of a transaction metadata topic, with
// or without the Kafka Connect schema envelope ({"schema":…,"payload":…}).
// Errors: the value is no JSON object, or its status is not BEGIN or END,
// its id is not a non-empty string, or a count is not a non-negative
// integer; the message names the field, never other content.
func DecodeTransaction(value []byte) (Transaction, error) {
	var p fastjson.Parser
	v, err := p.ParseBytes(value)
	if err != nil {
		return Transaction{}, fmt.Errorf("transaction metadata: not JSON: %w", err)
	}
	if v.Type() != fastjson.TypeObject {
		return Transaction{}, fmt.Errorf("transaction metadata: want a JSON object, got %s", jsonTypeName(v))
	}
	if pl := v.Get("payload"); pl != nil && v.Get("schema") != nil {
		v = pl
	}
	var t Transaction
	status, err := stringField(v, "status")
	if err != nil {
		return t, err
	}
	if status != "BEGIN" && status != "END" {
		return t, fmt.Errorf("transaction metadata status %q: want BEGIN or END", status)
	}
	t.Status = status
	if t.ID, err = stringField(v, "id"); err != nil {
		return t, err
	}
	if t.ID == "" {
		return t, errors.New("transaction metadata id: empty")
	}
	if t.EventCount, err = countField(v, "event_count"); err != nil {
		return t, err
	}
	if t.TsMs, err = countField(v, "ts_ms"); err != nil {
		return t, err
	}
	dc := v.Get("data_collections")
	if dc == nil || dc.Type() == fastjson.TypeNull {
		return t, nil
	}
	items, err := dc.Array()
	if err != nil {
		return t, fmt.Errorf("transaction metadata data_collections: want an array, got %s", jsonTypeName(dc))
	}
	for i, it := range items {
		name, err := stringField(it, "data_collection")
		if err != nil {
			return t, fmt.Errorf("transaction metadata data_collections[%d]: %w", i, err)
		}
		n, err := countField(it, "event_count")
		if err != nil {
			return t, fmt.Errorf("transaction metadata data_collections[%d]: %w", i, err)
		}
		t.Collections = append(t.Collections, CollectionCount{Collection: name, EventCount: n})
	}
	return t, nil
}

// stringField is v's string field name.
func stringField(v *fastjson.Value, name string) (string, error) {
	f := v.Get(name)
	if f == nil || f.Type() != fastjson.TypeString {
		return "", fmt.Errorf("transaction metadata %s: want a string, got %s", name, jsonTypeName(f))
	}
	b, _ := f.StringBytes()
	return string(b), nil
}

// countField is v's non-negative integer field name; 0 when absent or
// null.
func countField(v *fastjson.Value, name string) (int64, error) {
	f := v.Get(name)
	if f == nil || f.Type() == fastjson.TypeNull {
		return 0, nil
	}
	n, err := f.Int64()
	if err != nil || n < 0 {
		return 0, fmt.Errorf("transaction metadata %s: want a non-negative integer, got %s", name, jsonTypeName(f))
	}
	return n, nil
}
