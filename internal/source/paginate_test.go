//go:build e2e

package source

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Keyset pagination over composite keys: every chunk size, ReadChunk and
// Snapshot, from the start and resumed from a middle key, read the rows
// exactly in PostgreSQL's ORDER BY of the key, each once.

const paginateDDL = `
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
-- An enum key: its order (sad < ok < happy) is not its labels' text order.
CREATE TABLE pg3 (grp int4, m mood, name text COLLATE "C", id int NOT NULL UNIQUE, PRIMARY KEY (grp, m, name));
INSERT INTO pg3
SELECT g, (ARRAY['sad','ok','happy']::mood[])[1 + i % 3],
       (ARRAY['', 'B', 'a', 'ä', 'Z', 'a b', 'é', 'n1', 'n10', 'n2', 'zz'])[1 + (i * 7) % 11],
       g * 100 + i
FROM generate_series(1, 4) g, generate_series(0, 10) i;

-- Many key types, every leading column with few distinct values so that
-- ties are broken by each later column.
CREATE TABLE kt (
	i2 int2, n numeric, d date, ts timestamptz, u uuid, by bytea, c char(3), f float8, f4 float4,
	b bool, v varchar(4), tsw timestamp, tm time, id int NOT NULL UNIQUE,
	PRIMARY KEY (i2, n, d, ts, u, by, c, f, f4, b, v, tsw, tm));
INSERT INTO kt
SELECT (i % 4) - 2,
       (ARRAY[1.50, -2, 100.25])[1 + i % 3],
       CASE WHEN i & 1 = 0 THEN date '1969-12-31' ELSE date '2000-01-01' END,
       CASE WHEN i & 2 = 0 THEN timestamptz '1969-12-31 23:59:59.5+00' ELSE timestamptz '1969-12-31 23:59:59.500001+00' END,
       CASE WHEN i & 4 = 0 THEN 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid ELSE 'ffffffff-0000-0000-0000-000000000000'::uuid END,
       CASE WHEN i & 8 = 0 THEN '\x00'::bytea ELSE '\x00ff'::bytea END,
       CASE WHEN i & 16 = 0 THEN 'a' ELSE 'a b' END,
       CASE WHEN i & 32 = 0 THEN -0.5 ELSE 1e300 END,
       CASE WHEN i & 64 = 0 THEN 0.1 ELSE 3.4e38 END,
       i % 5 = 0,
       CASE WHEN i % 7 < 3 THEN 'x' ELSE 'xy' END,
       timestamp '1900-01-01' + (i % 2) * interval '1 microsecond',
       time '00:00' + i * interval '1 second',
       i
FROM generate_series(0, 127) i;
`

// orderedIDs is the id column in the table's key order, per PostgreSQL.
func orderedIDs(t *testing.T, conn *pgx.Conn, table string, key []string) []int64 {
	t.Helper()
	order := ""
	for i, k := range key {
		if i > 0 {
			order += ", "
		}
		order += ident(k)
	}
	rows, err := conn.Query(context.Background(), fmt.Sprintf("SELECT id FROM %s ORDER BY %s", ident(table), order))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func idsOf(t *testing.T, info TableInfo, rows []*cdc.Row) []int64 {
	t.Helper()
	out := make([]int64, len(rows))
	for i, r := range rows {
		v, ok := r.Get("id")
		if !ok || v.Kind != cdc.KindInt {
			t.Fatalf("row without id: %v", r.Vals)
		}
		out[i] = v.I
	}
	return out
}

func TestPaginateCompositeKeys(t *testing.T) {
	db := newDB(t)
	ctx := ctxT(t)
	db.exec(t, paginateDDL)
	for _, table := range []string{"pg3", "kt"} {
		info, err := db.src.Describe(ctx, "public", table, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := orderedIDs(t, db.conn, table, info.Key)
		if len(want) < 40 {
			t.Fatalf("%s: only %d rows", table, len(want))
		}
		var keys [][]cdc.Value // key of each row, from the chunk-size-1 pass
		for _, size := range []int{1, 3, 1000} {
			var got []int64
			var after []cdc.Value
			calls := 0
			for {
				rows, last, err := db.src.ReadChunk(ctx, info, after, size)
				if err != nil {
					t.Fatalf("%s size %d: %v", table, size, err)
				}
				calls++
				if len(rows) > size {
					t.Fatalf("%s size %d: chunk of %d rows", table, size, len(rows))
				}
				if len(rows) == 0 {
					if last != nil {
						t.Fatalf("%s: empty chunk with last %v", table, last)
					}
					break
				}
				if size == 1 {
					keys = append(keys, last)
				}
				got = append(got, idsOf(t, info, rows)...)
				after = last
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s size %d: read ids\n %v\nwant\n %v", table, size, got, want)
			}
			if wantCalls := (len(want)+size-1)/size + 1; calls != wantCalls {
				t.Errorf("%s size %d: %d calls, want %d", table, size, calls, wantCalls)
			}

			var snap []int64
			chunks := 0
			if _, err := db.src.Snapshot(ctx, info, size, func(c Chunk) error {
				chunks++
				snap = append(snap, idsOf(t, info, c.Rows)...)
				if c.Read != int64(len(snap)) || c.Final != (len(snap) == len(want)) {
					t.Errorf("%s size %d: chunk Read %d Final %v after %d rows", table, size, c.Read, c.Final, len(snap))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(snap, want) || chunks != (len(want)+size-1)/size {
				t.Fatalf("%s size %d: Snapshot read %d chunks, ids %v", table, size, chunks, snap)
			}
		}

		// Resume from a middle key.
		mid := len(want) / 2
		rows, _, err := db.src.ReadChunk(ctx, info, keys[mid], 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got := idsOf(t, info, rows); !reflect.DeepEqual(got, want[mid+1:]) {
			t.Fatalf("%s: resumed after row %d: %v, want %v", table, mid, got, want[mid+1:])
		}
		var resumed []int64
		if _, err := db.src.SnapshotFrom(ctx, info, keys[mid], 3, func(c Chunk) error {
			resumed = append(resumed, idsOf(t, info, c.Rows)...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(resumed, want[mid+1:]) {
			t.Fatalf("%s: SnapshotFrom after row %d: %v, want %v", table, mid, resumed, want[mid+1:])
		}
	}
}

// TestPaginateQuotedNamesAndPartitions: mixed-case and spaced names, a
// partitioned table, and key columns given explicitly in another order
// than the primary key's.
func TestPaginateQuotedNamesAndPartitions(t *testing.T) {
	db := newDB(t)
	ctx := ctxT(t)
	db.exec(t, `
		CREATE SCHEMA "Sales Data";
		CREATE TABLE "Sales Data"."Order Lines" ("Region" text, "line no" int, id int NOT NULL, PRIMARY KEY ("Region", "line no"))
			PARTITION BY LIST ("Region");
		CREATE TABLE "Sales Data".eu PARTITION OF "Sales Data"."Order Lines" FOR VALUES IN ('EU');
		CREATE TABLE "Sales Data".us PARTITION OF "Sales Data"."Order Lines" FOR VALUES IN ('US');
		INSERT INTO "Sales Data"."Order Lines" SELECT r, n, n * 10 + length(r) FROM unnest(ARRAY['US','EU']) r, generate_series(1, 7) n;`)
	info, err := db.src.Describe(ctx, "Sales Data", "Order Lines", []string{"line no", "Region"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Topic("srv") != "srv.Sales Data.Order Lines" {
		t.Errorf("topic %q", info.Topic("srv"))
	}
	var got [][2]string
	var after []cdc.Value
	for {
		rows, last, err := db.src.ReadChunk(ctx, info, after, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			break
		}
		for _, r := range rows {
			reg, _ := r.Get("Region")
			n, _ := r.Get("line no")
			got = append(got, [2]string{fmt.Sprint(n.I), reg.S})
		}
		after = last
	}
	var want [][2]string
	for n := 1; n <= 7; n++ {
		want = append(want, [2]string{fmt.Sprint(n), "EU"}, [2]string{fmt.Sprint(n), "US"})
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}
