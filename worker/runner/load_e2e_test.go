//go:build e2e

package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/source/pgtest"
	"github.com/lakemirror/lakemirror/workflows"
)

func pgExec(t *testing.T, dsn string, sql ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range sql {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// pgRows renders the source table like mirrorRows renders the mirror.
func pgRows(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT id, name, amount::text, to_char(created at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM public.accounts ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var id int64
		var name, amount, created string
		if err := rows.Scan(&id, &name, &amount, &created); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s %s %s", id, name, amount, created))
	}
	return strings.Join(out, "\n")
}

func liveMirror(t *testing.T, r *Runner, table string) (live string, deleted []string) {
	t.Helper()
	name, _ := lake.ParseTableName(table)
	tbl, err := r.Catalog.LoadTable(context.Background(), name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(context.Background(), tbl, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, row := range rows {
		if row[lake.ColDeleted] == true {
			deleted = append(deleted, fmt.Sprint(row["id"]))
			continue
		}
		out = append(out, fmt.Sprintf("%v %v %v %v", row["id"], row["name"], row["amount"], row["created"]))
	}
	return strings.Join(out, "\n"), deleted
}

// A direct initial load from a real PostgreSQL server, in chunks, with a
// crash after a chunk's commit (the retry resumes after the last committed
// chunk); then a re-snapshot after rows were deleted and changed at the
// source while their events were lost: ghost rows are soft-deleted,
// changed rows repaired, the others unchanged.
func TestDirectLoadAndResnapshot(t *testing.T) {
	ctx := context.Background()
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	var ddl []string
	ddl = append(ddl, `CREATE TABLE public.accounts (id bigint PRIMARY KEY, name text NOT NULL, amount numeric(12,2), created timestamptz)`)
	for i := 1; i <= 57; i++ {
		ddl = append(ddl, fmt.Sprintf(`INSERT INTO public.accounts VALUES (%d, 'acct-%d', %d.%02d, '1969-12-31 23:00:00+00'::timestamptz + interval '%d hours')`, i, i, i*10, i, i))
	}
	pgExec(t, dsn, ddl...)

	r := startRunner(t)
	defer r.Stop()
	r.Activities.Sources = map[string]string{"shopdb": dsn}
	var once sync.Once
	r.Activities.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
		if b.Load != nil && b.Load.Read == 20 && table == "mirror" {
			var err error
			once.Do(func() { err = errors.New("simulated crash after the second chunk's mirror commit") })
			return err
		}
		return nil
	}
	spec := activities.TableSpec{Table: "e2e.accounts", Topic: "shop.public.accounts", KeyColumns: []string{"id"},
		Source: "shopdb", SourceTable: "public.accounts", LoadChunk: 10, MaxEvents: 50, MaxWait: 200 * time.Millisecond}
	if err := r.Kafka.CreateTopic(ctx, spec.Topic, 1); err != nil {
		t.Fatal(err)
	}
	startWorkflow(t, r.Client, spec)
	var st workflows.Status
	waitFor(t, "the initial load", func() bool {
		st = status(t, r.Client, spec.Table)
		return st.LastLoad != nil
	})
	if l := st.LastLoad; l.Rows != 57 || !l.Resumed || l.LoadID != activities.InitialLoadID {
		t.Fatalf("load %+v", *l)
	}
	live, deleted := liveMirror(t, r, spec.Table)
	if want := pgRows(t, dsn); live != want || len(deleted) != 0 {
		t.Fatalf("mirror after the initial load:\n%s\nwant\n%s\ndeleted %v", live, want, deleted)
	}
	checkLoadHistory(t, r, spec.Table, 57)

	// events lost while the connector was down: the source changes, nothing is streamed
	pgExec(t, dsn, `DELETE FROM public.accounts WHERE id IN (3, 30, 57)`,
		`UPDATE public.accounts SET name = 'renamed', amount = 1.50 WHERE id = 12`,
		`INSERT INTO public.accounts VALUES (100, 'new', 0.01, '2001-01-01T00:00:00Z')`)
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalResnapshot, workflows.ResnapshotDirect); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the re-snapshot", func() bool {
		st = status(t, r.Client, spec.Table)
		return st.LastLoad != nil && strings.HasPrefix(st.LastLoad.LoadID, "resnapshot-1-")
	})
	if l := st.LastLoad; l.Ghosts != 3 || l.Rows != 55 {
		t.Fatalf("re-snapshot %+v", *l)
	}
	live, deleted = liveMirror(t, r, spec.Table)
	if want := pgRows(t, dsn); live != want {
		t.Fatalf("mirror after the re-snapshot:\n%s\nwant\n%s", live, want)
	}
	if strings.Join(deleted, ",") != "3,30,57" {
		t.Fatalf("soft-deleted %v, want the ghost rows 3,30,57", deleted)
	}
	stopWorkflow(t, r.Client, spec.Table)
}

// checkLoadHistory: every loaded row opened one current version.
func checkLoadHistory(t *testing.T, r *Runner, table string, n int) {
	t.Helper()
	name, _ := lake.ParseTableName(table)
	tbl, err := r.Catalog.LoadTable(context.Background(), name.History())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(context.Background(), tbl, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n {
		t.Fatalf("history has %d versions after the load, want %d", len(rows), n)
	}
	for _, row := range rows {
		if row[lake.ColIsCurrent] != true {
			t.Fatalf("a loaded row's version is not current: %v", row)
		}
	}
}

// A direct initial load that keeps failing (issue 34 item 7: the source
// database does not exist, PostgreSQL SQLSTATE 3D000, which retrying may
// fix) shows the table as retrying with the load's error, and a stop
// signal completes the workflow while the load is retried. Before, the
// table showed phase snapshot with no error while Temporal retried the
// load forever, and a stop took no effect.
func TestFailingLoadShowsItsErrorAndStops(t *testing.T) {
	ctx := context.Background()
	pg := pgtest.Start(t)
	if !strings.Contains(pg.DSN, "/postgres?") {
		t.Fatalf("unexpected DSN form %s", pg.DSN)
	}
	r := startRunner(t)
	defer r.Stop()
	r.Activities.Sources = map[string]string{"shopdb": strings.Replace(pg.DSN, "/postgres?", "/nosuchdb?", 1)}
	spec := activities.TableSpec{Table: "e2e.failload", Topic: "shop.public.failload", KeyColumns: []string{"id"},
		Source: "shopdb", SourceTable: "public.accounts", LoadChunk: 10, MaxEvents: 50, MaxWait: 200 * time.Millisecond}
	if err := r.Kafka.CreateTopic(ctx, spec.Topic, 1); err != nil {
		t.Fatal(err)
	}
	startWorkflow(t, r.Client, spec)
	var st workflows.Status
	waitFor(t, "the load's error in status", func() bool {
		st = status(t, r.Client, spec.Table)
		return st.Phase == workflows.PhaseRetrying && st.LastError != ""
	})
	if !strings.Contains(st.LastError, `database "nosuchdb" does not exist`) || st.LastLoad != nil {
		t.Fatalf("status while the load fails: phase %s, error %q, last load %v", st.Phase, st.LastError, st.LastLoad)
	}
	if err := r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalStop, nil); err != nil {
		t.Fatal(err)
	}
	// a guard against waiting forever, not a timing assertion
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := r.Client.GetWorkflow(wctx, workflows.WorkflowID(spec.Table), "").Get(wctx, nil); err != nil {
		t.Fatalf("the stop did not complete the workflow while its load was retried: %v", err)
	}
	if st = status(t, r.Client, spec.Table); st.Phase != workflows.PhaseStopped || st.Totals.LoadedRows != 0 {
		t.Fatalf("after the stop: phase %s, loaded rows %d", st.Phase, st.Totals.LoadedRows)
	}
}
