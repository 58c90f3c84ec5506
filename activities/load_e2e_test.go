//go:build e2e

package activities

// The direct initial load (LoadTable: pgx reads of the source table in
// key order) at scale, in process, with CPU time and an optional profile.
// It runs only when asked:
//
//	LAKEMIRROR_PERF_LOAD_ROWS=1000000 [LAKEMIRROR_PERF_LOAD_CHUNK=10000] \
//	  [LAKEMIRROR_PERF_MIRROR_ONLY=1] [LAKEMIRROR_PERF_CPUPROFILE=FILE] \
//	  go test -tags e2e -run TestPerfDirectLoad -v -timeout 0 ./activities/
//
// The source table is the benchmark's orders shape (order_id bigint key,
// customer_id, status, amount numeric(12,2), note text, updated_at
// timestamptz), filled by generate_series in a private PostgreSQL
// (pgtest). It prints one PERF JSON line: rows, seconds, CPU-seconds of
// this process (PostgreSQL's apart), rows per second and per CPU-second.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/source/pgtest"
)

func TestPerfDirectLoad(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("LAKEMIRROR_PERF_LOAD_ROWS"))
	if rows == 0 {
		t.Skip("LAKEMIRROR_PERF_LOAD_ROWS not set")
	}
	chunk, _ := strconv.Atoi(os.Getenv("LAKEMIRROR_PERF_LOAD_CHUNK"))
	mirrorOnly := os.Getenv("LAKEMIRROR_PERF_MIRROR_ONLY") == "1"
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE public.orders (order_id bigint PRIMARY KEY, customer_id bigint NOT NULL,
		status text NOT NULL, amount numeric(12,2), note text, updated_at timestamptz NOT NULL);
		INSERT INTO public.orders SELECT i, i % 100000, (ARRAY['new','paid','shipped','done'])[1 + i % 4],
			(i % 100000) / 100.0, 'note ' || md5(i::text), timestamptz '2026-01-01' + i * interval '1 second'
		FROM generate_series(1, `+strconv.Itoa(rows)+`) AS i`); err != nil {
		t.Fatal(err)
	}
	f := newRecFixture(t, dsn, "public.orders", nil)
	f.spec.WithoutBronze, f.spec.WithoutHistory = mirrorOnly, mirrorOnly
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
	line, _ := json.Marshal(map[string]any{"phase": "direct_load", "rows": res.Rows, "chunks": res.Chunks, "mirror_only": mirrorOnly,
		"seconds": secs, "cpu_s": cpu, "rows_per_s": float64(res.Rows) / secs, "rows_per_cpu_s": float64(res.Rows) / cpu, "max_rss_mib": maxRSSMiB()})
	t.Logf("PERF %s", line)
}

// A chunk whose write fails ends the load with that error (the source's
// read stops at the next chunk, not at the table's end), the chunks
// before it stay committed, and a retry resumes after them: chunks are
// read and rendered while the one before is written, in order.
func TestDirectLoadWriteFailureResumes(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE public.orders (order_id int PRIMARY KEY, status text NOT NULL);
		INSERT INTO public.orders SELECT i, 's' || i FROM generate_series(1, 95) AS i`); err != nil {
		t.Fatal(err)
	}
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
