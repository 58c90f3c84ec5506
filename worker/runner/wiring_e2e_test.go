//go:build e2e

package runner

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// startWithMemo starts a table workflow the way `starter start` does:
// the spec in the memo, the table and topic search attributes.
func startWithMemo(t *testing.T, c client.Client, spec activities.TableSpec) {
	t.Helper()
	_, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: workflows.WorkflowID(spec.Table), TaskQueue: activities.TaskQueue, WorkflowExecutionErrorWhenAlreadyStarted: true,
		Memo: map[string]any{"spec": spec},
	}, workflows.TableWorkflowName, workflows.TableInput{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
}

func memoSpec(t *testing.T, c client.Client, table string) activities.TableSpec {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(table), "")
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := MemoSpec(d.GetWorkflowExecutionInfo().GetMemo())
	if !ok {
		t.Fatalf("%s: no spec in the memo", table)
	}
	return spec
}

// The memo's spec (the Web UI's view of the table's configuration) follows
// the workflow: it records the catalog of the worker that recovered the
// table, and a settings change shows in it at once.
func TestMemoFollowsSettingsAndCatalog(t *testing.T) {
	r := startRunner(t)
	defer r.Stop()
	ctx := context.Background()
	spec := activities.TableSpec{Table: "e2e.memo", Topic: "e2e.public.memo", KeyColumns: []string{"order_id"}, MaxEvents: 40, MaxWait: 200 * time.Millisecond}
	ends := produce(t, r, spec.Topic, 1, faultyStream(5).Delivered[:30])
	startWithMemo(t, r.Client, spec)
	waitCaughtUp(t, r.Client, spec.Table, ends)
	id := stack.Settings.Catalog.Identity()
	if st := status(t, r.Client, spec.Table); st.Spec.Catalog != id {
		t.Fatalf("status spec catalog %q, want %q", st.Spec.Catalog, id)
	}
	if m := memoSpec(t, r.Client, spec.Table); m.Catalog != id || m.MaxEvents != 40 {
		t.Fatalf("memo spec: catalog %q, max events %d; want %q, 40", m.Catalog, m.MaxEvents, id)
	}
	seven, wait := 7, 3*time.Second
	h, err := r.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.WorkflowID(spec.Table), UpdateName: workflows.UpdateSettings,
		Args: []any{workflows.SettingsRequest{SettingsChange: payload.SettingsChange{MaxEvents: &seven, MaxWait: &wait}}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if m := memoSpec(t, r.Client, spec.Table); m.MaxEvents != 7 || m.MaxWait != 3*time.Second || m.Catalog != id || m.Table != spec.Table {
		t.Fatalf("memo spec after settings: %+v; want max events 7, max wait 3s, catalog %q", m, id)
	}
	// the run continues as new: the input the Web UI shows holds the
	// settings in effect, and the memo stays
	waitFor(t, "a run whose input has the new settings", func() bool {
		in := runInput(t, r.Client, spec.Table)
		return in.Spec.MaxEvents == 7 && in.Spec.MaxWait == 3*time.Second && in.State != nil && in.State.Runs == 1
	})
	if m := memoSpec(t, r.Client, spec.Table); m.MaxEvents != 7 || m.Catalog != id {
		t.Fatalf("memo spec in the new run: %+v", m)
	}
	stopWorkflow(t, r.Client, spec.Table)
}

// runInput returns the input of table's latest run (its first event's).
func runInput(t *testing.T, c client.Client, table string) workflows.TableInput {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), workflows.WorkflowID(table), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	e, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	var in workflows.TableInput
	if err := converter.GetDefaultDataConverter().FromPayloads(e.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in); err != nil {
		t.Fatal(err)
	}
	return in
}

// closedAddr is a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Preflight passes a worker wired like the tables, and refuses one whose
// Kafka or catalog is not reachable, or whose catalog is not the catalog a
// running table records, naming both.
func TestPreflight(t *testing.T) {
	ctx := context.Background()
	if w, err := Preflight(ctx, stack.Settings); err != nil || len(w) > 0 {
		t.Fatalf("the stack's own settings: warnings %v, %v", w, err)
	}
	r := startRunner(t)
	defer r.Stop()
	spec := activities.TableSpec{Table: "e2e.wired", Topic: "e2e.public.wired", KeyColumns: []string{"order_id"}, MaxEvents: 40, MaxWait: 200 * time.Millisecond}
	produce(t, r, spec.Topic, 1, []sample.Message{})
	startWithMemo(t, r.Client, spec)
	defer stopWorkflow(t, r.Client, spec.Table)
	waitFor(t, "the table records its catalog", func() bool { return memoSpec(t, r.Client, spec.Table).Catalog != "" })

	other := stack.Settings
	other.Catalog.LocalDir = t.TempDir()
	_, err := Preflight(ctx, other)
	ours, theirs := other.Catalog.Identity(), stack.Settings.Catalog.Identity()
	want := fmt.Sprintf("this worker's catalog is %q (fingerprint %s), but table e2e.wired records catalog %q\n  a worker must use the catalog of the tables it serves, or a table's batches would commit to two catalogs\n  fix: start this worker with the tables' catalog settings (CATALOG_TYPE, CATALOG_URI, WAREHOUSE), or, if they name the same catalog under other addresses, give every worker the same --catalog-id (LAKEMIRROR_CATALOG_ID)",
		ours, CatalogHash(ours), theirs)
	if err == nil || err.Error() != want {
		t.Fatalf("another catalog: %v\nwant: %s", err, want)
	}
	// the same catalog under an explicit id that the table does not record
	other.Catalog.ID = theirs
	if _, err := Preflight(ctx, other); err != nil {
		t.Fatalf("--catalog-id naming the tables' catalog: %v", err)
	}

	noKafka := stack.Settings
	noKafka.KafkaBrokers = []string{closedAddr(t)}
	if _, err := Preflight(ctx, noKafka); err == nil || !strings.HasPrefix(err.Error(), "no Kafka broker of "+noKafka.KafkaBrokers[0]+" answers within 10s: ") ||
		!strings.HasSuffix(err.Error(), "\n  fix: set --kafka-brokers (KAFKA_BROKERS) to reachable brokers, with the Kafka TLS/SASL settings they need") {
		t.Fatalf("Kafka not reachable: %v", err)
	}
	noCatalog := stack.Settings
	noCatalog.Catalog.Type, noCatalog.Catalog.URI = "rest", "http://"+closedAddr(t)
	if _, err := Preflight(ctx, noCatalog); err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("the Iceberg catalog %q is not reachable: ", noCatalog.Catalog.Identity())) {
		t.Fatalf("catalog not reachable: %v", err)
	}
	noTemporal := stack.Settings
	noTemporal.TemporalAddress = closedAddr(t)
	if _, err := Preflight(ctx, noTemporal); err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("the Temporal server at %s (namespace default) is not reachable: ", noTemporal.TemporalAddress)) {
		t.Fatalf("Temporal not reachable: %v", err)
	}
}
