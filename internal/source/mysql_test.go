//go:build e2e

package source

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/source/mysqltest"
	"github.com/lakemirror/lakemirror/schemas"
)

const mysqlTypesDDL = `CREATE TABLE types (
	id BIGINT PRIMARY KEY, t TINYINT, s SMALLINT UNSIGNED, m MEDIUMINT, i INT UNSIGNED, f FLOAT, d DOUBLE,
	dec1 DECIMAL(10,2), dec2 DECIMAL(30,5), c CHAR(3), v VARCHAR(10), tx TEXT, e ENUM('a','b'), b VARBINARY(4), bl BLOB,
	dt DATE, tm TIME(3), dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(3) NULL);
INSERT INTO types VALUES (1, -5, 65000, -8000000, 4000000000, 1.5, 2.25, 12345678.90, 1234567890123456789012345.67891,
	'ab', 'vé', 'text', 'b', 0x00ff, 0x01, '2026-12-02', '12:34:56.789', '2026-12-02 01:02:03', '2026-12-02 01:02:03.456789',
	'2026-12-02 01:02:03.5');
INSERT INTO types (id) VALUES (2);`

// MySQL's reads against a real MariaDB: every supported type decoded to
// its exact value, the binlog position, keyset chunks and keyed reads,
// and repair events that the schemas decoder reads back to the same row
// at the read's position.
func TestMySQLTypesAndRepairRoundTrip(t *testing.T) {
	srv := mysqltest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsn := srv.CreateDatabase(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(mysqlTypesDDL); err != nil {
		t.Fatal(err)
	}
	var dbName string
	if err := db.QueryRow("SELECT DATABASE()").Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	m, err := OpenMySQL(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	info, err := m.Describe(ctx, dbName, "types", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(info.Key, []string{"id"}) || len(info.Columns) != 20 {
		t.Fatalf("key %v, %d columns", info.Key, len(info.Columns))
	}
	rows, last, pos, err := m.ReadChunkAt(ctx, info, nil, 1)
	if err != nil || len(rows) != 1 || !last[0].Equal(cdc.Int(1)) {
		t.Fatalf("first chunk: %d rows, last %v, %v", len(rows), last, err)
	}
	if !strings.HasPrefix(pos.Text, "mysql-bin.000001:") || pos.File != "mysql-bin.000001" || pos.Seq != cdc.MySQLSeq(1, pos.Pos-1, 0) {
		t.Fatalf("position %+v", pos)
	}
	want := []cdc.Value{cdc.Int(1), cdc.Int(-5), cdc.Int(65000), cdc.Int(-8000000), cdc.Int(4000000000), cdc.Float(1.5), cdc.Float(2.25),
		cdc.Decimal(1234567890, 2), cdc.BigDecimal("123456789012345678901234567891", 5), cdc.String("ab"), cdc.String("vé"), cdc.String("text"),
		cdc.String("b"), cdc.Bytes([]byte{0, 0xff}), cdc.Bytes([]byte{1}), cdc.Date(20789), cdc.Time(45296789000),
		cdc.Timestamp(1796173323000000), cdc.Timestamp(1796173323456789), cdc.TimestampTZ(1796173323500000)}
	for i, v := range rows[0].Vals {
		if !v.Equal(want[i]) {
			t.Errorf("column %s (%s): %s, want %s", info.Columns[i].Name, info.Columns[i].PGType, show(v), show(want[i]))
		}
	}
	more, last2, _, err := m.ReadChunkAt(ctx, info, last, 5)
	if err != nil || len(more) != 1 || !last2[0].Equal(cdc.Int(2)) || !more[0].Vals[1].Equal(cdc.Null()) || !more[0].Vals[19].Equal(cdc.Null()) {
		t.Fatalf("second chunk: %v %v %v", more, last2, err)
	}
	keyed, kpos, err := m.ReadKeys(ctx, info, [][]cdc.Value{{cdc.Int(2)}, {cdc.Int(7)}})
	if err != nil || len(keyed) != 1 || !keyed[0].Vals[0].Equal(cdc.Int(2)) || kpos.Seq < pos.Seq {
		t.Fatalf("keyed read: %v %+v %v", keyed, kpos, err)
	}

	r, err := NewRenderer(info, "shop")
	if err != nil {
		t.Fatal(err)
	}
	dec := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: info.Key})
	for _, row := range append(rows, more...) {
		for _, op := range []string{"r", "d"} {
			v, err := r.RepairValue(row, pos, op, 1_700_000_000_000_000)
			if err != nil {
				t.Fatal(err)
			}
			out, err := dec.Decode(schemas.Record{Topic: info.Topic("shop"), Value: v})
			if err != nil {
				t.Fatalf("decode: %v\n%s", err, v)
			}
			ev := out.Event
			img := ev.After
			if op == "d" {
				img = ev.Before
			}
			if out.RawOp != op || ev.Seq != pos.Seq || img == nil {
				t.Fatalf("op %s: decoded %s at %x", op, out.RawOp, ev.Seq)
			}
			for i, c := range info.Columns {
				if !img.Vals[i].Equal(row.Vals[i]) {
					t.Errorf("op %s column %s: decoded %s, read %s", op, c.Name, show(img.Vals[i]), show(row.Vals[i]))
				}
			}
		}
	}

	if _, err := db.Exec("CREATE TABLE bits (id INT PRIMARY KEY, flags BIT(3))"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Describe(ctx, dbName, "bits", nil); !errors.Is(err, ErrDefinition) || !strings.Contains(err.Error(), `"flags" (bit(3)): not supported`) {
		t.Fatalf("a BIT column: %v", err)
	}
}
