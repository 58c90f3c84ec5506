//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/buildinfo"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/worker/runner"
)

// doctorJSON runs doctor --output json and returns its exit code and checks.
func doctorJSON(t *testing.T, args ...string) (int, []checkResult, string) {
	t.Helper()
	code, stdout, stderr := cli(t, append([]string{"doctor", "--output", "json"}, args...)...)
	var res []checkResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("doctor output: %v\n%s\n%s", err, stdout, stderr)
	}
	return code, res, stderr
}

// compareChecks compares doctor's checks with want; a want detail that
// starts with "~" is a regular expression.
func compareChecks(t *testing.T, what string, got, want []checkResult) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d checks, want %d:\n%+v", what, len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		detailOK := g.Detail == w.Detail
		if re, ok := strings.CutPrefix(w.Detail, "~"); ok {
			detailOK = regexp.MustCompile("^" + re + "$").MatchString(g.Detail)
		}
		if g.Check != w.Check || g.Status != w.Status || !detailOK || g.Fix != w.Fix {
			t.Errorf("%s: check %d:\n got %+v\nwant %+v", what, i, g, w)
		}
	}
}

// doctor against the embedded dev stack: everything OK with a worker and
// a running table; WARN for a table whose topic does not exist; FAIL for
// missing search attributes, no worker, Kafka not reachable, a warehouse
// that cannot be written; WARN for another build and another catalog of
// a polling worker. Exit code 1 exactly when a check fails.
func TestDoctor(t *testing.T) {
	st := testStack(t)
	s := st.Settings
	addr, brokers := s.TemporalAddress, strings.Join(s.KafkaBrokers, ",")
	host := runner.ParsePoller(runner.Identity("", "")).Host
	build := buildinfo.Get().Short()
	catID := s.Catalog.Identity()

	// everything in place
	args := namespace(t, st, "cli-doctor")
	s.Namespace = "cli-doctor"
	r, err := runner.Start(context.Background(), s, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	for _, cmd := range [][]string{{"produce", "cli.public.doc"}, {"start", "cli.public.doc", "--table", "cli.doc", "--key", "order_id", "--schedules=false"}, {"wait", "cli.doc", "--timeout", "1m"}} {
		if code, _, stderr := cli(t, append(cmd, args...)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", cmd, code, stderr)
		}
	}
	defer func() {
		_ = r.Client.TerminateWorkflow(context.Background(), "lakemirror-table-cli.doc", "", "test ends")
	}()
	good := []checkResult{
		{"temporal", checkOK, "reachable at " + addr, ""},
		{"namespace", checkOK, "namespace cli-doctor exists", ""},
		{"search-attributes", checkOK, "LakemirrorPaused (Bool), LakemirrorPhase (Keyword), LakemirrorTable (Keyword), LakemirrorTopic (Keyword) registered", ""},
		{"worker", checkOK, `1 polling task queue "lakemirror": ` + host, ""},
		{"versions", checkOK, "the workers run " + build + ", as this starter", ""},
		{"worker-catalog", checkOK, fmt.Sprintf("the workers and this starter use catalog %q", catID), ""},
		{"tables", checkOK, "1 running: cli.doc", ""},
		{"kafka", checkOK, "brokers " + brokers + " answer", ""},
		{"topics", checkOK, "the topics of the 1 running tables exist", ""},
		{"catalog", checkOK, fmt.Sprintf("catalog %q answers", catID), ""},
		{"iceberg-tables", checkOK, "3 Iceberg tables of 1 running tables load", ""},
		{"readers", checkOK, "cli.doc, cli.doc_history: " + layout.DeletePosition.Readers(), ""},
		{"warehouse", checkOK, "~" + regexp.QuoteMeta("file://"+filepath.Join(s.DataDir, "warehouse")) + ` is writable \(wrote, read and removed \.lakemirror-probe-\d+\)`, ""},
	}
	code, res, stderr := doctorJSON(t, args...)
	if code != exitOK || stderr != "" {
		t.Fatalf("all good: exit %d, %s", code, stderr)
	}
	compareChecks(t, "all good", res, good)
	code, stdout, _ := cli(t, append([]string{"doctor"}, args...)...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != exitOK || len(lines) != 13 || lines[0] != "OK    temporal: reachable at "+addr || lines[6] != "OK    tables: 1 running: cli.doc" {
		t.Errorf("text: exit %d:\n%s", code, stdout)
	}

	// a table whose topic does not exist: WARN, exit 0
	if code, _, stderr := cli(t, append([]string{"start", "cli.public.nosuch", "--table", "cli.nosuch", "--schedules=false"}, args...)...); code != exitOK {
		t.Fatalf("start: %s", stderr)
	}
	defer func() {
		_ = r.Client.TerminateWorkflow(context.Background(), "lakemirror-table-cli.nosuch", "", "test ends")
	}()
	warn := append([]checkResult(nil), good...)
	warn[6].Detail = "2 running: cli.doc, cli.nosuch"
	warn[8] = checkResult{"topics", checkWarn, "cli.nosuch waits for topic cli.public.nosuch, which does not exist",
		"create the topic, or check the connector's topic.prefix and table.include.list against the table's topic (`starter status TABLE`)"}
	warn[10] = checkResult{"iceberg-tables", checkWarn, fmt.Sprintf("no mirror table in catalog %q for cli.nosuch: nothing applied yet, or the workers write another catalog", catID),
		"see the worker-catalog check; `starter status TABLE` shows whether batches were applied"}
	code, res, _ = doctorJSON(t, args...)
	if code != exitOK {
		t.Errorf("a missing topic: exit %d, want 0 (a warning)", code)
	}
	compareChecks(t, "missing topic", res, warn)

	// a namespace without the search attributes, no worker, no Kafka, no catalog here
	ctx := context.Background()
	if err := st.Temporal.CreateNamespace(ctx, "cli-doctor-bare", nil); err != nil {
		t.Fatal(err)
	}
	noKafka, empty := closedAddr(t), t.TempDir()
	code, res, stderr = doctorJSON(t, "--temporal-address", addr, "--namespace", "cli-doctor-bare", "--kafka-brokers", noKafka, "--data-dir", empty)
	if code != exitFailure || stderr != "starter: doctor: 3 of 13 checks failed\n" {
		t.Errorf("things missing: exit %d, stderr %q", code, stderr)
	}
	sa := "temporal operator search-attribute create --namespace cli-doctor-bare --name %s --type %s"
	compareChecks(t, "things missing", res, []checkResult{
		{"temporal", checkOK, "reachable at " + addr, ""},
		{"namespace", checkOK, "namespace cli-doctor-bare exists", ""},
		{"search-attributes", checkFail, "missing in namespace cli-doctor-bare: LakemirrorPaused, LakemirrorPhase, LakemirrorTable, LakemirrorTopic (starter start sets them, the workflows upsert them)",
			strings.Join([]string{fmt.Sprintf(sa, "LakemirrorPaused", "Bool"), fmt.Sprintf(sa, "LakemirrorPhase", "Keyword"), fmt.Sprintf(sa, "LakemirrorTable", "Keyword"), fmt.Sprintf(sa, "LakemirrorTopic", "Keyword")}, "; ")},
		{"worker", checkFail, `no worker is polling task queue "lakemirror": table workflows make no progress and status cannot answer`,
			"start the worker (`worker` with TEMPORAL_ADDRESS=" + addr + " TEMPORAL_NAMESPACE=cli-doctor-bare), or `go run ./worker/dev` for the embedded dev stack"},
		{"versions", checkWarn, "not checked: no worker", ""},
		{"worker-catalog", checkWarn, "not checked: no worker", ""},
		{"tables", checkOK, "no running tables", ""},
		{"kafka", checkFail, "~no broker of " + regexp.QuoteMeta(noKafka) + " answers: .*connection refused",
			"set --kafka-brokers (KAFKA_BROKERS) to the brokers the worker uses, with their TLS/SASL settings (KAFKA_TLS, KAFKA_SASL_*)"},
		{"topics", checkWarn, "not checked: Kafka is not reachable", ""},
		{"catalog", checkWarn, "this starter has no catalog: the default SQLite catalog " + filepath.Join(empty, "catalog.db") + " does not exist",
			"run doctor where the worker keeps its data (--data-dir, LAKEMIRROR_DATA_DIR), or give the worker's catalog settings: set --catalog-type, --catalog-uri, --warehouse and --catalog-props (CATALOG_TYPE, CATALOG_URI, WAREHOUSE, CATALOG_PROPS) as the worker has them"},
		{"iceberg-tables", checkWarn, "not checked: no catalog", ""},
		{"readers", checkWarn, "not checked: no catalog", ""},
		{"warehouse", checkWarn, "not checked: no catalog", ""},
	})

	// a warehouse in object storage that cannot be written (nothing listens)
	dir := t.TempDir()
	s3 := closedAddr(t)
	code, res, _ = doctorJSON(t, "--temporal-address", addr, "--namespace", "cli-doctor-bare", "--kafka-brokers", brokers,
		"--catalog-uri", "file:"+filepath.Join(dir, "catalog.db"), "--warehouse", "s3://lake/wh",
		"--catalog-props", "s3.endpoint=http://"+s3+",s3.region=us-east-1,s3.access-key-id=k,s3.secret-access-key=s,s3.force-virtual-addressing=false")
	if code != exitFailure {
		t.Errorf("unwritable warehouse: exit %d", code)
	}
	if w := res[len(res)-1]; w.Check != "warehouse" || w.Status != checkFail || !strings.HasPrefix(w.Detail, "s3://lake/wh is not writable from here: lake: read s3://lake/wh/.lakemirror-probe-") ||
		w.Fix != "check the storage credentials (--catalog-props s3.*, gcs.*, adls.*, the environment's AWS_*, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*, or the catalog's vended credentials) and the permissions on the location" {
		t.Errorf("unwritable warehouse: %+v", w)
	}

	// a worker of another build and another catalog
	if err := st.Temporal.CreateNamespace(ctx, "cli-doctor-old", nil); err != nil {
		t.Fatal(err)
	}
	oc, err := client.Dial(client.Options{HostPort: addr, Namespace: "cli-doctor-old", Identity: "4242@elsewhere lakemirror/v0.9.0 catalog/0123456789ab"})
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	ow := worker.New(oc, activities.TaskQueue, worker.Options{})
	ow.RegisterActivityWithOptions(func(context.Context) error { return nil }, activity.RegisterOptions{Name: "Probe"})
	if err := ow.Start(); err != nil {
		t.Fatal(err)
	}
	defer ow.Stop()
	waitUntil(t, "the other worker polls", func() bool {
		_, res, _ := doctorJSON(t, "--temporal-address", addr, "--namespace", "cli-doctor-old", "--kafka-brokers", brokers, "--data-dir", s.DataDir)
		return res[3].Status == checkOK
	})
	code, res, _ = doctorJSON(t, "--temporal-address", addr, "--namespace", "cli-doctor-old", "--kafka-brokers", brokers, "--data-dir", s.DataDir)
	if code != exitFailure { // the namespace has no search attributes
		t.Errorf("another build: exit %d", code)
	}
	compareChecks(t, "another build", res[3:6], []checkResult{
		{"worker", checkOK, `1 polling task queue "lakemirror": 4242@elsewhere`, ""},
		{"versions", checkWarn, "4242@elsewhere runs v0.9.0; this starter is " + build,
			"run one build of worker and starter (compare `worker --version` and `starter --version`); a worker of another build may not know this starter's requests"},
		{"worker-catalog", checkWarn, fmt.Sprintf("the workers use catalog fingerprint 0123456789ab, this starter's settings name %q (fingerprint %s): status, dump and the catalog checks below read another catalog than the workers write", catID, runner.CatalogHash(catID)),
			"give this starter the workers' --catalog-type, --catalog-uri, --warehouse and --catalog-props (CATALOG_*), or their --data-dir for the default SQLite catalog"},
	})
}
