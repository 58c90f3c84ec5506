//go:build e2e

package devstack

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

var (
	saTable  = temporal.NewSearchAttributeKeyKeyword("CdcTable")
	saPaused = temporal.NewSearchAttributeKeyBool("CdcPaused")
)

func greetActivity(_ context.Context, name string) (string, error) { return "hello " + name, nil }

func greetWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, greetActivity, name).Get(ctx, &out)
	return out, err
}

func startTemporal(t *testing.T, opts TemporalOptions) *Temporal {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	began := time.Now()
	ts, err := StartTemporal(ctx, opts)
	if err != nil {
		t.Fatalf("StartTemporal: %v", err)
	}
	t.Logf("StartTemporal took %v (frontend %s, UI %q)", time.Since(began).Round(time.Millisecond), ts.HostPort(), ts.UIURL())
	t.Cleanup(func() { _ = ts.Stop() })
	return ts
}

func dial(t *testing.T, ts *Temporal) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace(), Logger: quietSDKLogger()})
	if err != nil {
		t.Fatalf("dial %s: %v", ts.HostPort(), err)
	}
	t.Cleanup(c.Close)
	return c
}

// runGreet runs greetWorkflow(arg) with id on task queue "t" with a fresh
// worker and checks the result.
func runGreet(t *testing.T, c client.Client, id, arg string, sas temporal.SearchAttributes) {
	t.Helper()
	w := worker.New(c, "t", worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(greetActivity)
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "t", TypedSearchAttributes: sas}, greetWorkflow, arg)
	if err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if want := "hello " + arg; got != want {
		t.Fatalf("workflow result = %q, want %q", got, want)
	}
}

// listClosed polls ListWorkflow(query) until it returns want executions, all
// closed (visibility is asynchronous: the open record comes first), or 10 s
// pass, and returns the last answer.
func listClosed(t *testing.T, c client.Client, ns, query string, want int) *workflowservice.ListWorkflowExecutionsResponse {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: ns, Query: query})
		if err != nil {
			t.Fatalf("ListWorkflow(%s): %v", query, err)
		}
		closed := 0
		for _, ex := range resp.GetExecutions() {
			if ex.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				closed++
			}
		}
		if (len(resp.GetExecutions()) == want && closed == want) || time.Now().After(deadline) {
			return resp
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func checkCustomSearchAttributes(t *testing.T, c client.Client, ns string, want map[string]enumspb.IndexedValueType) {
	t.Helper()
	resp, err := c.OperatorService().ListSearchAttributes(context.Background(), &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		t.Fatalf("ListSearchAttributes: %v", err)
	}
	got := resp.GetCustomAttributes()
	if len(got) != len(want) {
		t.Fatalf("custom search attributes = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("custom search attribute %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}

func TestTemporalInMemoryWithUI(t *testing.T) {
	ts := startTemporal(t, TemporalOptions{
		SearchAttributes: map[string]enumspb.IndexedValueType{
			"CdcTable":  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
			"CdcPaused": enumspb.INDEXED_VALUE_TYPE_BOOL,
		},
	})
	if ts.Namespace() != "default" {
		t.Fatalf("Namespace() = %q, want %q", ts.Namespace(), "default")
	}
	host, port, err := net.SplitHostPort(ts.HostPort())
	if err != nil || host != "127.0.0.1" || port == "0" || port == "" {
		t.Fatalf("HostPort() = %q (%v), want 127.0.0.1:<port>", ts.HostPort(), err)
	}
	if !strings.HasPrefix(ts.UIURL(), "http://127.0.0.1:") || ts.UIURL() == "http://127.0.0.1:"+port {
		t.Fatalf("UIURL() = %q, want http://127.0.0.1:<another port>", ts.UIURL())
	}

	c := dial(t, ts)
	checkCustomSearchAttributes(t, c, "default", map[string]enumspb.IndexedValueType{
		"CdcTable":  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"CdcPaused": enumspb.INDEXED_VALUE_TYPE_BOOL,
	})
	began := time.Now()
	runGreet(t, c, "wf-orders", "orders", temporal.NewSearchAttributes(saTable.ValueSet("orders"), saPaused.ValueSet(false)))
	t.Logf("workflow round trip took %v", time.Since(began).Round(time.Millisecond))

	resp := listClosed(t, c, "default", `CdcTable = "orders"`, 1)
	if n := len(resp.GetExecutions()); n != 1 {
		t.Fatalf(`ListWorkflow(CdcTable = "orders") returned %d executions, want 1`, n)
	}
	ex := resp.GetExecutions()[0]
	if ex.GetExecution().GetWorkflowId() != "wf-orders" || ex.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED || ex.GetType().GetName() != "greetWorkflow" {
		t.Fatalf("listed execution = %s %s %s, want wf-orders COMPLETED greetWorkflow",
			ex.GetExecution().GetWorkflowId(), ex.GetStatus(), ex.GetType().GetName())
	}
	if resp := listClosed(t, c, "default", `CdcTable = "customers"`, 0); len(resp.GetExecutions()) != 0 {
		t.Fatalf(`ListWorkflow(CdcTable = "customers") returned %d executions, want 0`, len(resp.GetExecutions()))
	}

	httpResp, err := http.Get(ts.UIURL() + "/")
	if err != nil {
		t.Fatalf("GET UI: %v", err)
	}
	body, _ := io.ReadAll(httpResp.Body)
	_ = httpResp.Body.Close()
	if httpResp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/ = %d, want 200", ts.UIURL(), httpResp.StatusCode)
	}
	if !strings.Contains(string(body), "<html") {
		t.Fatalf("GET %s/ body has no <html: %.200q", ts.UIURL(), body)
	}

	began = time.Now()
	if err := ts.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("Stop took %v", time.Since(began).Round(time.Millisecond))
	if err := ts.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	_, uiPort, _ := net.SplitHostPort(strings.TrimPrefix(ts.UIURL(), "http://"))
	for _, p := range []string{port, uiPort} {
		n, _ := strconv.Atoi(p)
		if err := checkPortsFree("127.0.0.1", n); err != nil {
			t.Fatalf("after Stop: %v", err)
		}
	}
}

func TestTemporalDBFileSurvivesRestart(t *testing.T) {
	dbFile := filepath.Join(t.TempDir(), "temporal.db")
	ports, err := freePorts("127.0.0.1", 4)
	if err != nil {
		t.Fatal(err)
	}
	opts := TemporalOptions{
		GRPCPort:         ports[0],
		HTTPPort:         ports[1],
		UIPort:           -1,
		MetricsPort:      ports[2],
		DBFile:           dbFile,
		Namespace:        "cdc",
		SearchAttributes: map[string]enumspb.IndexedValueType{"CdcTable": enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	}
	ts := startTemporal(t, opts)
	if ts.UIURL() != "" {
		t.Fatalf("UIURL() = %q with UIPort -1, want \"\"", ts.UIURL())
	}
	if want := fmt.Sprintf("127.0.0.1:%d", ports[0]); ts.HostPort() != want {
		t.Fatalf("HostPort() = %q, want %q", ts.HostPort(), want)
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[2])
	if err := waitHTTPOK(t.Context(), metricsURL); err != nil {
		t.Fatalf("metrics: %v", err)
	}
	c := dial(t, ts)
	runGreet(t, c, "wf-persist", "persist", temporal.NewSearchAttributes(saTable.ValueSet("orders")))
	listClosed(t, c, "cdc", `CdcTable = "orders"`, 1)
	c.Close()
	if err := ts.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// The file is in write-ahead-log mode: bytes 18 and 19 of an SQLite
	// database header (file format write and read versions) are 2 for WAL,
	// 1 for a rollback journal (sqlite.org/fileformat.html, 1.3).
	hdr := make([]byte, 20)
	if f, err := os.Open(dbFile); err != nil {
		t.Fatal(err)
	} else {
		_, err := io.ReadFull(f, hdr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if hdr[18] != 2 || hdr[19] != 2 {
		t.Fatalf("database header versions %d/%d, want 2/2 (journal_mode=wal)", hdr[18], hdr[19])
	}

	// Same file, same ports (so Stop must have released them), one more
	// search attribute: it is added to the existing namespace at start.
	opts.SearchAttributes = map[string]enumspb.IndexedValueType{
		"CdcTable":    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"CdcBatchSeq": enumspb.INDEXED_VALUE_TYPE_INT,
	}
	ts2 := startTemporal(t, opts)
	c2 := dial(t, ts2)
	desc, err := c2.DescribeWorkflowExecution(context.Background(), "wf-persist", "")
	if err != nil {
		t.Fatalf("DescribeWorkflowExecution after restart: %v", err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("status after restart = %s, want COMPLETED", st)
	}
	resp := listClosed(t, c2, "cdc", `CdcTable = "orders"`, 1)
	if n := len(resp.GetExecutions()); n != 1 || resp.GetExecutions()[0].GetExecution().GetWorkflowId() != "wf-persist" {
		t.Fatalf("ListWorkflow after restart = %d executions, want [wf-persist]", n)
	}
	checkCustomSearchAttributes(t, c2, "cdc", opts.SearchAttributes)
	if err := waitHTTPOK(t.Context(), metricsURL); err != nil {
		t.Fatalf("metrics after restart: %v", err)
	}
	// The added attribute is usable right away.
	runGreet(t, c2, "wf-seq", "seq", temporal.NewSearchAttributes(
		saTable.ValueSet("orders"), temporal.NewSearchAttributeKeyInt64("CdcBatchSeq").ValueSet(7)))
	resp = listClosed(t, c2, "cdc", `CdcTable = "orders" AND CdcBatchSeq = 7`, 1)
	if n := len(resp.GetExecutions()); n != 1 || resp.GetExecutions()[0].GetExecution().GetWorkflowId() != "wf-seq" {
		t.Fatalf("ListWorkflow(CdcBatchSeq = 7) = %d executions, want [wf-seq]", n)
	}
}

func TestTemporalTwoConcurrentServers(t *testing.T) {
	var wg sync.WaitGroup
	servers := make([]*Temporal, 2)
	errs := make([]error, 2)
	for i, ns := range []string{"ns-a", "ns-b"} {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			servers[i], errs[i] = StartTemporal(ctx, TemporalOptions{Namespace: ns, UIPort: -1})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
		t.Cleanup(func() { _ = servers[i].Stop() })
	}
	if servers[0].HostPort() == servers[1].HostPort() {
		t.Fatalf("both servers on %s", servers[0].HostPort())
	}
	for i, ts := range servers {
		c := dial(t, ts)
		runGreet(t, c, "wf", ts.Namespace(), temporal.SearchAttributes{})
		other := servers[1-i].Namespace()
		_, err := c.WorkflowService().DescribeNamespace(context.Background(), &workflowservice.DescribeNamespaceRequest{Namespace: other})
		if err == nil {
			t.Fatalf("server %d knows namespace %q of the other server: databases are shared", i, other)
		}
	}
	for i, ts := range servers {
		if err := ts.Stop(); err != nil {
			t.Fatalf("Stop server %d: %v", i, err)
		}
	}
}
