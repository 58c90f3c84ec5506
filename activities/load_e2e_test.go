//go:build e2e

package activities

// The direct initial load (LoadTable: pgx reads of the source table in
// key order) at scale, in process, with CPU time and an optional profile.
// It runs only when asked:
//
//	LAKEMIRROR_PERF_LOAD_ROWS=1000000 [LAKEMIRROR_PERF_LOAD_CHUNK=10000] \
//	  [LAKEMIRROR_PERF_MIRROR_ONLY=1 | LAKEMIRROR_PERF_NO_BRONZE=1] \
//	  [LAKEMIRROR_PERF_CPUPROFILE=FILE] \
//	  go test -tags e2e -run TestPerfDirectLoad -v -timeout 0 ./activities/
//
// The source table is the benchmark's orders shape (order_id bigint key,
// customer_id, status, amount numeric(12,2), note text, updated_at
// timestamptz), filled by generate_series in a private PostgreSQL
// (pgtest). It prints one PERF JSON line: rows, seconds, CPU-seconds of
// this process (PostgreSQL's apart), rows per second and per CPU-second.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/source/pgtest"
	"github.com/lakemirror/lakemirror/schemas"
)

func TestPerfDirectLoad(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("LAKEMIRROR_PERF_LOAD_ROWS"))
	if rows == 0 {
		t.Skip("LAKEMIRROR_PERF_LOAD_ROWS not set")
	}
	chunk, _ := strconv.Atoi(os.Getenv("LAKEMIRROR_PERF_LOAD_CHUNK"))
	mirrorOnly := os.Getenv("LAKEMIRROR_PERF_MIRROR_ONLY") == "1"
	noBronze := mirrorOnly || os.Getenv("LAKEMIRROR_PERF_NO_BRONZE") == "1" // mirror and history: the direct-load target
	ctx := context.Background()
	dsn, _, _ := sourceDB(t, nil, `CREATE TABLE public.orders (order_id bigint PRIMARY KEY, customer_id bigint NOT NULL,
		status text NOT NULL, amount numeric(12,2), note text, updated_at timestamptz NOT NULL);
		INSERT INTO public.orders SELECT i, i % 100000, (ARRAY['new','paid','shipped','done'])[1 + i % 4],
			(i % 100000) / 100.0, 'note ' || md5(i::text), timestamptz '2026-01-01' + i * interval '1 second'
		FROM generate_series(1, `+strconv.Itoa(rows)+`) AS i`)
	f := newRecFixture(t, dsn, "public.orders", nil)
	f.spec.WithoutBronze, f.spec.WithoutHistory = noBronze, mirrorOnly
	if p := os.Getenv("LAKEMIRROR_PERF_CPUPROFILE"); p != "" {
		out, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	cpu0, t0 := cpuSeconds(), time.Now()
	res, err := f.a.LoadTable(ctx, LoadRequest{Spec: f.spec, LoadID: InitialLoadID, Chunk: chunk, Position: lake.Offsets{0: 0}})
	if err != nil {
		t.Fatal(err)
	}
	secs, cpu := time.Since(t0).Seconds(), cpuSeconds()-cpu0
	if res.Rows != int64(rows) {
		t.Fatalf("loaded %d rows, want %d", res.Rows, rows)
	}
	line, _ := json.Marshal(map[string]any{"phase": "direct_load", "rows": res.Rows, "chunks": res.Chunks, "mirror_only": mirrorOnly, "bronze": !noBronze,
		"seconds": secs, "cpu_s": cpu, "rows_per_s": float64(res.Rows) / secs, "rows_per_cpu_s": float64(res.Rows) / cpu, "max_rss_mib": maxRSSMiB()})
	t.Logf("PERF %s", line)
}

// A chunk whose write fails ends the load with that error (the source's
// read stops at the next chunk, not at the table's end), the chunks
// before it stay committed, and a retry resumes after them: chunks are
// read and rendered while the one before is written, in order.
func TestDirectLoadWriteFailureResumes(t *testing.T) {
	ctx := context.Background()
	dsn, _, _ := sourceDB(t, nil, `CREATE TABLE public.orders (order_id int PRIMARY KEY, status text NOT NULL);
		INSERT INTO public.orders SELECT i, 's' || i FROM generate_series(1, 95) AS i`)
	f := newRecFixture(t, dsn, "public.orders", nil)
	mirrorCommits := 0
	f.a.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
		if table != "mirror" {
			return nil
		}
		if mirrorCommits++; mirrorCommits == 3 {
			return fmt.Errorf("injected failure after the mirror commit of %s", b.ID)
		}
		return nil
	}
	req := LoadRequest{Spec: f.spec, LoadID: InitialLoadID, Chunk: 10, Position: lake.Offsets{0: 0}}
	res, err := f.a.LoadTable(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "injected failure after the mirror commit of shop.orders#initial.30") {
		t.Fatalf("first attempt: %+v, error %v; want the injected failure of the third chunk", res, err)
	}
	if res.Chunks != 2 || res.Rows != 20 || mirrorCommits != 3 {
		t.Errorf("first attempt: %d chunks, %d rows, %d mirror commits; want 2, 20, 3", res.Chunks, res.Rows, mirrorCommits)
	}
	f.a.AfterCommit = nil
	res, err = f.a.LoadTable(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// the third chunk's mirror committed before the failure: the retry
	// resumes after the lesser cursor (the history's, at 20 rows)
	if !res.Resumed || res.Rows != 95 || res.Chunks != 8 {
		t.Errorf("retry: %+v; want resumed, 95 rows, 8 chunks (rows 21 to 95)", res)
	}
	mirror, err := f.a.Catalog.LoadTable(ctx, f.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(ctx, mirror, []string{"order_id"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 95 {
		t.Fatalf("mirror holds %d rows, want 95", len(rows))
	}
}

// A direct load builds its events from the typed rows it reads
// (source.Renderer.Event) instead of rendering and decoding them: the
// mirror and history it writes are those a stream of the records it keeps
// in bronze writes through the decoder, on a table of many types with
// NULLs, arrays and decimals beyond 38 digits; and a load that keeps no
// bronze writes the same mirror and history (but for the read times) and
// counts its rows.
func TestDirectLoadTypedRowsMatchDecodedRecords(t *testing.T) {
	ctx := context.Background()
	dsn, _, _ := sourceDB(t, nil, `CREATE TABLE public.orders (order_id bigint PRIMARY KEY, f4 real, f8 double precision,
		amount numeric(12,2), big numeric(50,5), anyn numeric, note text, day date, at timestamptz, local timestamp(3),
		u uuid, raw bytea, tags text[], qty int[], doc jsonb, flag boolean);
		INSERT INTO public.orders SELECT i, i / 3.0, i / 7.0, i * 1.25, i * 123456789012345678901234567890123.00001,
			i / 8.0, CASE WHEN i % 4 = 0 THEN NULL ELSE 'n ' || i || ' ✓' END, date '1969-12-25' + i,
			timestamptz '1969-12-31 23:59:59.5+00' + i * interval '1 hour', timestamp '2000-02-29 12:00:00.123' + i * interval '1 ms',
			md5(i::text)::uuid, CASE WHEN i % 5 = 0 THEN NULL ELSE decode(lpad(to_hex(i), 4, '0'), 'hex') END,
			ARRAY['a' || i, NULL], ARRAY[i, -i], jsonb_build_object('k', i, 'a', ARRAY[1, 2]), i % 2 = 0
		FROM generate_series(1, 23) AS i`)
	load := func(f *recFixture) {
		t.Helper()
		res, err := f.a.LoadTable(ctx, LoadRequest{Spec: f.spec, LoadID: InitialLoadID, Chunk: 7, Position: lake.Offsets{0: 0}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows != 23 || res.Chunks != 4 {
			t.Fatalf("load: %+v; want 23 rows in 4 chunks", res)
		}
	}
	loaded := newRecFixture(t, dsn, "public.orders", nil)
	load(loaded)

	// the records the load kept in bronze, streamed as one batch into
	// another catalog: decoded by the schemas decoder
	var recs []schemas.Record
	if err := tableread.ScanBronze(ctx, loaded.a.Catalog, loaded.name, func(rows []tableread.BronzeRow) error {
		for _, r := range rows {
			recs = append(recs, r.Record)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(recs, func(a, b schemas.Record) int { return cmp.Compare(a.Offset, b.Offset) })
	if len(recs) != 23 || recs[0].Offset != 0 || recs[22].Offset != 22 {
		t.Fatalf("bronze holds %d records", len(recs))
	}
	streamed := newRecFixture(t, dsn, "public.orders", nil)
	streamed.offset = 23
	streamed.apply(recs...)

	// a load without bronze: no record rendered
	bare := newRecFixture(t, dsn, "public.orders", nil)
	bare.spec.WithoutBronze = true
	load(bare)

	for _, tc := range []struct {
		what  string
		ident func(lake.TableName) []string
	}{{"mirror", lake.TableName.Mirror}, {"history", lake.TableName.History}} {
		want := loadDump(t, loaded, tc.ident(loaded.name), lakecat.ColIngestedAt)
		if got := loadDump(t, streamed, tc.ident(streamed.name), lakecat.ColIngestedAt); got != want {
			t.Errorf("%s: the load's typed rows\n%s\nthe decoded records\n%s", tc.what, want, got)
		}
		if n := strings.Count(want[:strings.Index(want, "schema ")], "\n"); n != 23 {
			t.Errorf("%s: %d rows, want 23", tc.what, n)
		}
		want = loadDump(t, loaded, tc.ident(loaded.name), lakecat.ColIngestedAt, lakecat.ColSourceTs, lakecat.ColValidFrom)
		if got := loadDump(t, bare, tc.ident(bare.name), lakecat.ColIngestedAt, lakecat.ColSourceTs, lakecat.ColValidFrom); got != want {
			t.Errorf("%s: with bronze\n%s\nwithout bronze\n%s", tc.what, want, got)
		}
	}
}

// loadDump is the rows of a table of f's catalog as JSON lines ordered by
// order_id, without the drop columns, and its schema.
func loadDump(t *testing.T, f *recFixture, ident []string, drop ...string) string {
	t.Helper()
	ctx := context.Background()
	tbl, err := f.a.Catalog.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	rows, cols, err := lake.ReadRows(ctx, tbl, []string{"order_id"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for _, c := range drop {
			delete(r, c)
		}
	}
	var b strings.Builder
	if err := tableread.WriteJSONLines(&b, rows, slices.DeleteFunc(cols, func(c string) bool { return slices.Contains(drop, c) })); err != nil {
		t.Fatal(err)
	}
	b.WriteString("schema " + tbl.Schema().String() + "\n")
	return b.String()
}

// A spec that declares column types (TableSpec.Columns: an unconstrained
// numeric as decimal(20,4), the key too) has its direct load's rows
// decoded like streamed ones, not built from the typed rows (a breaker's
// run, 2026-12-07: the typed rows kept the numerics as text, and the
// table then blocked on its first streamed batch, or a re-snapshot over a
// streamed mirror blocked at once): the mirror holds decimal(20,4)
// values, the load's own records streamed again change nothing, and a
// re-snapshot over a mirror the stream made loads.
func TestDirectLoadDeclaredColumnsAreDecoded(t *testing.T) {
	ctx := context.Background()
	dsn, _, _ := sourceDB(t, nil, `CREATE TABLE public.orders (order_id numeric PRIMARY KEY, anyn numeric);
		INSERT INTO public.orders SELECT i, i / 8.0 FROM generate_series(1, 5) AS i`)
	cols := []cdc.Column{{Name: "order_id", Type: cdc.DecimalType(20, 4)}, {Name: "anyn", Type: cdc.DecimalType(20, 4), Optional: true}}
	bronzeOf := func(f *recFixture) []schemas.Record {
		var recs []schemas.Record
		if err := tableread.ScanBronze(ctx, f.a.Catalog, f.name, func(rows []tableread.BronzeRow) error {
			for _, r := range rows {
				r.Record.Topic = f.spec.Topic // as streamed
				recs = append(recs, r.Record)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(recs, func(a, b schemas.Record) int { return cmp.Compare(a.Offset, b.Offset) })
		return recs
	}
	loaded := newRecFixture(t, dsn, "public.orders", nil)
	loaded.spec.Columns = cols
	if _, err := loaded.a.LoadTable(ctx, LoadRequest{Spec: loaded.spec, LoadID: InitialLoadID, Chunk: 2, Position: lake.Offsets{0: 0}}); err != nil {
		t.Fatal(err)
	}
	want := `{"order_id":"1.0000","anyn":"0.1250"}`
	got := loadDump(t, loaded, loaded.name.Mirror(), lakecat.ColIngestedAt, lakecat.ColSeq, lakecat.ColDeleted, lakecat.ColSourceTs)
	if !strings.HasPrefix(got, want+"\n") || !strings.Contains(got, "anyn: optional decimal(20, 4)") {
		t.Fatalf("mirror after the load:\n%s\nwant the first row %s and anyn decimal(20, 4)", got, want)
	}
	before := loadDump(t, loaded, loaded.name.Mirror(), lakecat.ColIngestedAt)
	recs := bronzeOf(loaded)
	loaded.offset = int64(len(recs))
	loaded.apply(recs...)
	if after := loadDump(t, loaded, loaded.name.Mirror(), lakecat.ColIngestedAt); after != before {
		t.Errorf("mirror after the load\n%s\nafter streaming its own records\n%s", before, after)
	}

	streamed := newRecFixture(t, dsn, "public.orders", nil)
	streamed.spec.Columns = cols
	streamed.offset = int64(len(recs))
	streamed.apply(recs...)
	res, err := streamed.a.LoadTable(ctx, LoadRequest{Spec: streamed.spec, LoadID: "resnapshot-1", Resnapshot: true, Chunk: 2, Position: lake.Offsets{0: streamed.offset}})
	if err != nil || res.Rows != 5 || res.Ghosts != 0 {
		t.Fatalf("re-snapshot over the streamed mirror: %+v, %v; want 5 rows, no ghost", res, err)
	}
}

// A timestamp past the year 294247 (PostgreSQL's reach 294276) has no
// int64 count of µs since 1970: the load fails with ErrDefinition naming
// the column, with and without bronze, and writes nothing of it (before,
// the count wrapped and the row was written in 290278 BC, or refused
// only by chance of a whole-ms check).
func TestDirectLoadTimestampBeyondMicros(t *testing.T) {
	ctx := context.Background()
	dsn, _, exec := sourceDB(t, nil, `SELECT 1`)
	for _, col := range []string{"timestamp(0)", "timestamp", "timestamptz"} {
		for _, bronze := range []bool{true, false} {
			exec(`DROP TABLE IF EXISTS public.orders; CREATE TABLE public.orders (order_id bigint PRIMARY KEY, at ` + col + `);
				INSERT INTO public.orders VALUES (1, '2000-01-01'), (2, '294276-12-31 23:59:59')`)
			f := newRecFixture(t, dsn, "public.orders", nil)
			f.spec.WithoutBronze = !bronze
			res, err := f.a.LoadTable(ctx, LoadRequest{Spec: f.spec, LoadID: InitialLoadID, Chunk: 10, Position: lake.Offsets{0: 0}})
			if err == nil || !strings.Contains(err.Error(), `column "at"`) || !strings.Contains(err.Error(), "294247") || res.Rows != 0 {
				t.Errorf("%s, bronze %v: %+v, %v; want the column's range error and no row", col, bronze, res, err)
			}
			if tbl, err := f.a.Catalog.LoadTable(ctx, f.name.Mirror()); err == nil && tbl.CurrentSnapshot() != nil {
				t.Errorf("%s, bronze %v: the mirror has an Iceberg snapshot", col, bronze)
			}
		}
	}
}

// A load that fails after a chunk's bronze, mirror or history commit and
// is resumed with another chunk size (a load begun by a worker whose
// default chunk was 10,000 rows, resumed by one whose default without
// bronze is 50,000), while the source changes rows between the attempts:
// every table holds each row once (from a breaker's run, 2026-12-07).
func TestDirectLoadResumesWithAnotherChunk(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	for _, bronze := range []bool{true, false} {
		for _, failOn := range []string{"bronze", "mirror", "history"} {
			if failOn == "bronze" && !bronze {
				continue
			}
			t.Run(fmt.Sprintf("bronze=%v/fail=%s", bronze, failOn), func(t *testing.T) {
				dsn, _, exec := sourceDB(t, pg, `CREATE TABLE public.orders (order_id int PRIMARY KEY, status text NOT NULL);
					INSERT INTO public.orders SELECT i, 's' || i FROM generate_series(1, 25) AS i`)
				f := newRecFixture(t, dsn, "public.orders", nil)
				f.spec.WithoutBronze = !bronze
				commits := 0
				f.a.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
					if table == failOn {
						if commits++; commits == 3 {
							return fmt.Errorf("injected after %s of %s", table, b.ID)
						}
					}
					return nil
				}
				req := LoadRequest{Spec: f.spec, LoadID: InitialLoadID, Chunk: 4, Position: lake.Offsets{0: 0}}
				if _, err := f.a.LoadTable(ctx, req); err == nil || !strings.Contains(err.Error(), "injected after "+failOn) {
					t.Fatalf("first attempt: %v; want the injected failure", err)
				}
				f.a.AfterCommit = nil
				exec(`UPDATE public.orders SET status = 'later' WHERE order_id IN (1, 10, 20)`)
				req.Chunk = 0
				res, err := f.a.LoadTable(ctx, req)
				if err != nil || !res.Resumed || res.Rows != 25 {
					t.Fatalf("resumed: %+v, %v; want resumed, 25 rows", res, err)
				}
				for _, ident := range [][]string{f.name.Mirror(), f.name.History()} {
					tbl, err := f.a.Catalog.LoadTable(ctx, ident)
					if err != nil {
						t.Fatal(err)
					}
					rows, _, err := lake.ReadRows(ctx, tbl, []string{"order_id"})
					if err != nil {
						t.Fatal(err)
					}
					seen := map[any]bool{}
					for _, r := range rows {
						seen[r["order_id"]] = true
					}
					if len(rows) != 25 || len(seen) != 25 {
						t.Errorf("%v: %d rows of %d keys, want 25 of 25", ident, len(rows), len(seen))
					}
				}
				if bronze {
					offs := map[int64]int{}
					if err := tableread.ScanBronze(ctx, f.a.Catalog, f.name, func(rows []tableread.BronzeRow) error {
						for _, r := range rows {
							offs[r.Offset]++
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					for o, n := range offs {
						if n != 1 {
							t.Errorf("bronze holds offset %d %d times", o, n)
						}
					}
					if len(offs) != 25 {
						t.Errorf("bronze holds %d offsets, want 25", len(offs))
					}
				}
			})
		}
	}
}

// sourceDB creates a database in pg (in a new PostgreSQL server when pg
// is nil) and runs ddl there; it returns the database's DSN, a
// connection to it (closed with the test) and exec, which runs SQL on it
// and fails the test on an error.
func sourceDB(t *testing.T, pg *pgtest.Server, ddl string) (string, *pgx.Conn, func(string)) {
	t.Helper()
	if pg == nil {
		pg = pgtest.Start(t)
	}
	dsn := pg.CreateDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	exec(ddl)
	return dsn, conn, exec
}
