package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/buildinfo"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// Statuses of a doctor check.
const (
	checkOK   = "OK"
	checkWarn = "WARN"
	checkFail = "FAIL"
)

// checkResult is one line of `starter doctor` (and one element of its
// --output json array).
type checkResult struct {
	Check  string `json:"check"`         // temporal, namespace, search-attributes, worker, versions, worker-catalog, tables, kafka, topics, catalog, iceberg-tables, warehouse
	Status string `json:"status"`        // OK, WARN or FAIL
	Detail string `json:"detail"`        // what was found
	Fix    string `json:"fix,omitempty"` // how to fix it (WARN, FAIL)
}

// doctorTimeout bounds each of doctor's checks.
const doctorTimeout = 10 * time.Second

func (a *app) doctorCmd() *cobra.Command {
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the wiring: Temporal, the worker, versions, Kafka, the catalog and the warehouse",
		Long: `doctor checks what the pipeline needs, with this command's connection settings, and
prints one line per check: OK, WARN (works, but something is off or could not be
checked) or FAIL (the pipeline cannot work), with what is wrong and how to fix it:

  temporal           the frontend answers at --temporal-address
  namespace          --namespace exists
  search-attributes  LakemirrorTable, LakemirrorTopic, LakemirrorPhase (Keyword) and
                     LakemirrorPaused (Bool) are registered in it
  worker             workers poll the task queue "lakemirror"
  versions           the workers' builds (from their Temporal identity) and this starter's
  worker-catalog     the workers use one catalog, and this starter's settings name it
  tables             the running table workflows
  kafka              a broker of --kafka-brokers answers
  topics             the running tables' topics exist
  catalog            the Iceberg catalog opens and lists its namespaces
  iceberg-tables     the running tables' Iceberg tables load
  warehouse          a small object can be written to, read from and removed from the
                     warehouse (or, when the warehouse is a name, a table's location)

Exit code 1 when a check FAILs, else 0. --output json prints the checks as a JSON
array of {check, status, detail, fix}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			results := a.doctor(cmd.Context())
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), results); err != nil {
					return err
				}
			} else {
				printChecks(cmd.OutOrStdout(), results)
			}
			failed := 0
			for _, r := range results {
				if r.Status == checkFail {
					failed++
				}
			}
			if cmd.Context().Err() != nil {
				return cmd.Context().Err()
			}
			if failed > 0 {
				return fmt.Errorf("doctor: %d of %d checks failed", failed, len(results))
			}
			return nil
		},
	}
	out.bind(cmd)
	return cmd
}

// printChecks prints one line per check, the fix indented below it.
func printChecks(w io.Writer, results []checkResult) {
	for _, r := range results {
		fmt.Fprintf(w, "%-4s  %s: %s\n", r.Status, r.Check, r.Detail)
		if r.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", r.Fix)
		}
	}
}

// doctor runs the checks in order; a check whose prerequisite failed is
// reported as WARN "not checked".
func (a *app) doctor(ctx context.Context) []checkResult {
	var res []checkResult
	add := func(check, status, detail, fix string) {
		res = append(res, checkResult{Check: check, Status: status, Detail: detail, Fix: fix})
	}
	notChecked := func(because string, checks ...string) {
		for _, c := range checks {
			add(c, checkWarn, "not checked: "+because, "")
		}
	}
	addr, ns := a.settings.TemporalAddress, a.settings.Namespace
	workerHint := fmt.Sprintf("start the worker (`worker` with TEMPORAL_ADDRESS=%s TEMPORAL_NAMESPACE=%s), or `go run ./worker/dev` for the embedded dev stack", addr, ns)

	// Temporal
	var runs []runner.TableRun
	var c client.Client
	{
		dctx, cancel := context.WithTimeout(ctx, doctorTimeout)
		var err error
		c, err = runner.DialContext(dctx, a.settings, nil)
		cancel()
		if err != nil {
			add("temporal", checkFail, fmt.Sprintf("cannot reach Temporal at %s: %s", addr, runner.DialCause(err)), devHint)
			notChecked("Temporal is not reachable", "namespace", "search-attributes", "worker", "versions", "worker-catalog", "tables")
		} else {
			defer c.Close()
			add("temporal", checkOK, "reachable at "+addr, "")
		}
	}
	if c != nil {
		tctx, cancel := context.WithTimeout(ctx, doctorTimeout)
		defer cancel()
		if _, err := c.WorkflowService().DescribeNamespace(tctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns}); err != nil {
			var nf *serviceerror.NamespaceNotFound
			if errors.As(err, &nf) {
				add("namespace", checkFail, fmt.Sprintf("namespace %s does not exist on Temporal at %s", ns, addr),
					fmt.Sprintf("create it (temporal operator namespace create --namespace %s) or name yours with --namespace or TEMPORAL_NAMESPACE", ns))
			} else {
				add("namespace", checkWarn, fmt.Sprintf("cannot describe namespace %s: %v", ns, err), "")
			}
			notChecked("no namespace", "search-attributes", "worker", "versions", "worker-catalog", "tables")
			c = nil
		} else {
			add("namespace", checkOK, "namespace "+ns+" exists", "")
		}
		if c != nil {
			res = append(res, checkSearchAttributes(tctx, c, ns))
			res = append(res, a.checkWorkers(tctx, c, workerHint)...)
			var err error
			if runs, err = runner.RunningTables(tctx, c); err != nil {
				add("tables", checkFail, fmt.Sprintf("cannot list the table workflows: %v", err), "")
			} else {
				var names []string
				for _, r := range runs {
					names = append(names, r.Table)
				}
				sort.Strings(names)
				detail := "no running tables"
				if len(names) > 0 {
					detail = fmt.Sprintf("%d running: %s", len(names), strings.Join(names, ", "))
				}
				add("tables", checkOK, detail, "")
			}
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Table < runs[j].Table })

	// Kafka
	res = append(res, a.checkKafka(ctx, runs)...)
	// the catalog and the warehouse, credentials the storage clients quote in errors redacted
	for _, r := range a.checkCatalog(ctx, runs) {
		r.Detail = a.settings.Catalog.Redact(r.Detail)
		res = append(res, r)
	}
	return res
}

// checkSearchAttributes compares the namespace's custom search attributes
// with the ones the table workflows set.
func checkSearchAttributes(ctx context.Context, c client.Client, ns string) checkResult {
	r := checkResult{Check: "search-attributes"}
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		r.Status, r.Detail = checkWarn, fmt.Sprintf("cannot list the search attributes of %s: %v", ns, err)
		return r
	}
	var missing, wrong, fixes, ok []string
	for _, name := range slices.Sorted(maps.Keys(workflows.SearchAttributeTypes)) {
		want := workflows.SearchAttributeTypes[name]
		got, found := have.GetCustomAttributes()[name]
		typ := strings.TrimPrefix(want.String(), "INDEXED_VALUE_TYPE_")
		typ = strings.ToUpper(typ[:1]) + strings.ToLower(typ[1:])
		switch {
		case !found:
			missing = append(missing, name)
			fixes = append(fixes, fmt.Sprintf("temporal operator search-attribute create --namespace %s --name %s --type %s", ns, name, typ))
		case got != want:
			wrong = append(wrong, fmt.Sprintf("%s is %s, not %s", name, strings.TrimPrefix(got.String(), "INDEXED_VALUE_TYPE_"), strings.TrimPrefix(want.String(), "INDEXED_VALUE_TYPE_")))
		default:
			ok = append(ok, fmt.Sprintf("%s (%s)", name, typ))
		}
	}
	switch {
	case len(missing) > 0 || len(wrong) > 0:
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, "missing in namespace "+ns+": "+strings.Join(missing, ", "))
		}
		if len(wrong) > 0 {
			parts = append(parts, "registered with another type: "+strings.Join(wrong, "; "))
		}
		r.Status, r.Detail = checkFail, strings.Join(parts, "; ")+" (starter start sets them, the workflows upsert them)"
		r.Fix = strings.Join(fixes, "; ")
		if len(wrong) > 0 {
			r.Fix = strings.TrimPrefix(r.Fix+"; a search attribute of another type must be removed first (temporal operator search-attribute remove) or use another namespace", "; ")
		}
	default:
		r.Status, r.Detail = checkOK, strings.Join(ok, ", ")+" registered"
	}
	return r
}

// checkWorkers reports the pollers of the task queue, their builds and
// their catalogs.
func (a *app) checkWorkers(ctx context.Context, c client.Client, hint string) []checkResult {
	byHost := map[string]runner.Poller{}
	for _, tq := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		resp, err := c.DescribeTaskQueue(ctx, activities.TaskQueue, tq)
		if err != nil {
			return []checkResult{{Check: "worker", Status: checkFail, Detail: fmt.Sprintf("cannot describe task queue %q: %v", activities.TaskQueue, err)},
				{Check: "versions", Status: checkWarn, Detail: "not checked: no pollers"}, {Check: "worker-catalog", Status: checkWarn, Detail: "not checked: no pollers"}}
		}
		for _, p := range resp.GetPollers() {
			pi := runner.ParsePoller(p.GetIdentity())
			byHost[pi.Identity] = pi
		}
	}
	if len(byHost) == 0 {
		return []checkResult{{Check: "worker", Status: checkFail, Detail: fmt.Sprintf("no worker is polling task queue %q: table workflows make no progress and status cannot answer", activities.TaskQueue), Fix: hint},
			{Check: "versions", Status: checkWarn, Detail: "not checked: no worker"}, {Check: "worker-catalog", Status: checkWarn, Detail: "not checked: no worker"}}
	}
	ps := slices.SortedFunc(maps.Values(byHost), func(x, y runner.Poller) int { return strings.Compare(x.Identity, y.Identity) })
	var hosts []string
	for _, p := range ps {
		hosts = append(hosts, p.Host)
	}
	out := []checkResult{{Check: "worker", Status: checkOK, Detail: fmt.Sprintf("%d polling task queue %q: %s", len(ps), activities.TaskQueue, strings.Join(hosts, ", "))}}

	mine := buildinfo.Get().Short()
	var differ, unknown []string
	builds := map[string]bool{}
	for _, p := range ps {
		switch {
		case p.Build == "":
			unknown = append(unknown, p.Host)
		case p.Build != mine:
			differ = append(differ, fmt.Sprintf("%s runs %s", p.Host, p.Build))
		}
		if p.Build != "" {
			builds[p.Build] = true
		}
	}
	v := checkResult{Check: "versions", Status: checkOK, Detail: "the workers run " + mine + ", as this starter"}
	switch {
	case len(differ) > 0 || len(unknown) > 0:
		var parts []string
		if len(differ) > 0 {
			parts = append(parts, strings.Join(differ, ", ")+"; this starter is "+mine)
		}
		if len(unknown) > 0 {
			parts = append(parts, strings.Join(unknown, ", ")+" do not report a lakemirror build (a worker from before builds were reported, or not lakemirror's)")
		}
		v.Status, v.Detail = checkWarn, strings.Join(parts, "; ")
		v.Fix = "run one build of worker and starter (compare `worker --version` and `starter --version`); a worker of another build may not know this starter's requests"
		if len(builds) > 1 {
			v.Fix = fmt.Sprintf("the workers run %d builds: finish the rollout; ", len(builds)) + v.Fix
		}
	}
	out = append(out, v)

	ours := a.settings.Catalog.Identity()
	catalogs := map[string][]string{}
	for _, p := range ps {
		if p.Catalog != "" {
			catalogs[p.Catalog] = append(catalogs[p.Catalog], p.Host)
		}
	}
	wc := checkResult{Check: "worker-catalog"}
	switch {
	case len(catalogs) > 1:
		var parts []string
		for _, fp := range slices.Sorted(maps.Keys(catalogs)) {
			parts = append(parts, fmt.Sprintf("%s with catalog fingerprint %s", strings.Join(catalogs[fp], ", "), fp))
		}
		wc.Status, wc.Detail = checkFail, "the workers use different catalogs: "+strings.Join(parts, "; ")
		wc.Fix = "every worker must use the tables' catalog: restart the others with its CATALOG_* settings (a worker refuses tables of another catalog, CatalogMismatch)"
	case len(catalogs) == 0:
		wc.Status, wc.Detail = checkWarn, "the workers do not report their catalog (a worker from before catalogs were reported)"
	default:
		fp := slices.Collect(maps.Keys(catalogs))[0]
		if fp == runner.CatalogHash(ours) {
			wc.Status, wc.Detail = checkOK, fmt.Sprintf("the workers and this starter use catalog %q", ours)
		} else {
			wc.Status = checkWarn
			wc.Detail = fmt.Sprintf("the workers use catalog fingerprint %s, this starter's settings name %q (fingerprint %s): status, dump and the catalog checks below read another catalog than the workers write", fp, ours, runner.CatalogHash(ours))
			wc.Fix = "give this starter the workers' --catalog-type, --catalog-uri, --warehouse and --catalog-props (CATALOG_*), or their --data-dir for the default SQLite catalog"
		}
	}
	return append(out, wc)
}

// checkKafka checks the brokers and the running tables' topics.
func (a *app) checkKafka(ctx context.Context, runs []runner.TableRun) []checkResult {
	brokers := strings.Join(a.settings.KafkaBrokers, ",")
	fix := "set --kafka-brokers (KAFKA_BROKERS) to the brokers the worker uses, with their TLS/SASL settings (KAFKA_TLS, KAFKA_SASL_*)"
	kc, err := runner.NewKafka(a.settings)
	if err != nil {
		return []checkResult{{Check: "kafka", Status: checkFail, Detail: fmt.Sprintf("brokers %q: %v", brokers, err), Fix: fix},
			{Check: "topics", Status: checkWarn, Detail: "not checked: no Kafka"}}
	}
	defer kc.Close()
	kctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	if err := kc.Kgo().Ping(kctx); err != nil {
		return []checkResult{{Check: "kafka", Status: checkFail, Detail: fmt.Sprintf("no broker of %s answers: %v", brokers, err), Fix: fix},
			{Check: "topics", Status: checkWarn, Detail: "not checked: Kafka is not reachable"}}
	}
	out := []checkResult{{Check: "kafka", Status: checkOK, Detail: "brokers " + brokers + " answer"}}
	var missing, failed []string
	topics := 0
	for _, r := range runs {
		if r.Spec.Topic == "" {
			continue
		}
		topics++
		_, err := kc.EndOffsets(kctx, r.Spec.Topic)
		switch {
		case errors.Is(err, kafka.ErrUnknownTopic):
			missing = append(missing, fmt.Sprintf("%s waits for topic %s, which does not exist", r.Table, r.Spec.Topic))
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s: topic %s: %v", r.Table, r.Spec.Topic, err))
		}
	}
	t := checkResult{Check: "topics", Status: checkOK, Detail: fmt.Sprintf("the topics of the %d running tables exist", topics)}
	switch {
	case len(failed) > 0:
		t.Status, t.Detail = checkFail, strings.Join(append(failed, missing...), "; ")
		t.Fix = "check the brokers and the principal's ACLs (Describe on the topics)"
	case len(missing) > 0:
		t.Status, t.Detail = checkWarn, strings.Join(missing, "; ")
		t.Fix = "create the topic, or check the connector's topic.prefix and table.include.list against the table's topic (`starter status TABLE`)"
	case topics == 0:
		t.Detail = "no running tables"
	}
	return append(out, t)
}

// checkCatalog checks the catalog, the running tables' Iceberg tables and
// that the warehouse is writable.
func (a *app) checkCatalog(ctx context.Context, runs []runner.TableRun) []checkResult {
	id := a.settings.Catalog.Identity()
	fix := "set --catalog-type, --catalog-uri, --warehouse and --catalog-props (CATALOG_TYPE, CATALOG_URI, WAREHOUSE, CATALOG_PROPS) as the worker has them"
	if path := a.settings.Catalog.LocalCatalogMissing(); path != "" {
		return []checkResult{{Check: "catalog", Status: checkWarn, Detail: "this starter has no catalog: the default SQLite catalog " + path + " does not exist",
			Fix: "run doctor where the worker keeps its data (--data-dir, LAKEMIRROR_DATA_DIR), or give the worker's catalog settings: " + fix},
			{Check: "iceberg-tables", Status: checkWarn, Detail: "not checked: no catalog"}, {Check: "readers", Status: checkWarn, Detail: "not checked: no catalog"},
			{Check: "warehouse", Status: checkWarn, Detail: "not checked: no catalog"}}
	}
	cctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	cat, err := lake.OpenCatalog(cctx, a.settings.Catalog)
	if err == nil {
		if cl, ok := cat.(interface{ Close() error }); ok {
			defer cl.Close()
		}
		_, err = cat.ListNamespaces(cctx, nil)
	}
	if err != nil {
		return []checkResult{{Check: "catalog", Status: checkFail, Detail: fmt.Sprintf("catalog %q is not reachable: %v", id, err), Fix: fix},
			{Check: "iceberg-tables", Status: checkWarn, Detail: "not checked: the catalog is not reachable"}, {Check: "readers", Status: checkWarn, Detail: "not checked: the catalog is not reachable"},
			{Check: "warehouse", Status: checkWarn, Detail: "not checked: the catalog is not reachable"}}
	}
	out := []checkResult{{Check: "catalog", Status: checkOK, Detail: fmt.Sprintf("catalog %q answers", id)}}

	var loaded []*table.Table
	var notYet, failed []string
	for _, r := range runs {
		name, err := lake.ParseTableName(r.Table)
		if err != nil {
			continue
		}
		idents := map[string]table.Identifier{"bronze": name.Bronze(), "mirror": name.Mirror(), "history": name.History()}
		for _, kind := range r.Spec.Tables() {
			tbl, err := lake.LoadTable(cctx, cat, idents[kind])
			switch {
			case err != nil:
				failed = append(failed, fmt.Sprintf("%s: %v", lake.IdentString(idents[kind]), err))
			case tbl == nil && kind == "mirror":
				notYet = append(notYet, r.Table)
			case tbl != nil:
				loaded = append(loaded, tbl)
			}
		}
	}
	it := checkResult{Check: "iceberg-tables", Status: checkOK, Detail: fmt.Sprintf("%d Iceberg tables of %d running tables load", len(loaded), len(runs))}
	switch {
	case len(failed) > 0:
		it.Status, it.Detail = checkFail, "cannot load "+strings.Join(failed, "; ")
		it.Fix = "check the catalog's and the storage's permissions and health"
	case len(notYet) > 0:
		it.Status = checkWarn
		it.Detail = fmt.Sprintf("no mirror table in catalog %q for %s: nothing applied yet, or the workers write another catalog", id, strings.Join(notYet, ", "))
		it.Fix = "see the worker-catalog check; `starter status TABLE` shows whether batches were applied"
	case len(runs) == 0:
		it.Detail = "no running tables"
	}
	out = append(out, it)
	out = append(out, checkReaders(loaded))
	return append(out, a.checkWarehouse(ctx, loaded))
}

// checkReaders says what the readers of the loaded mirror and history
// tables need, by the delete format each has (its format version,
// lake.DeleteFormatOf; layout.DeleteFormat.Readers), the tables of one
// format listed together. Bronze (no deletes) is left out. OK always:
// it informs, it does not judge the readers it cannot see.
func checkReaders(loaded []*table.Table) checkResult {
	r := checkResult{Check: "readers", Status: checkOK}
	byFormat := map[layout.DeleteFormat][]string{}
	for _, tbl := range loaded {
		name := lake.IdentString(tbl.Identifier())
		if strings.HasSuffix(name, "_bronze") {
			continue
		}
		f := lake.DeleteFormatOf(tbl)
		byFormat[f] = append(byFormat[f], name)
	}
	var parts []string
	for _, f := range layout.DeleteFormats {
		if names := byFormat[f]; len(names) > 0 {
			sort.Strings(names)
			parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(names, ", "), f.Readers()))
		}
	}
	if len(parts) == 0 {
		r.Detail = "no mirror or history table loaded"
		return r
	}
	r.Detail = strings.Join(parts, "; ")
	return r
}

// checkWarehouse writes, reads and removes a probe object in the
// warehouse location, or in a table's location when the warehouse is a
// name (REST catalogs), through the table's FileIO (with the catalog's
// vended credentials).
func (a *app) checkWarehouse(ctx context.Context, loaded []*table.Table) checkResult {
	r := checkResult{Check: "warehouse"}
	wctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	fsys, loc, ok, err := lakecat.WarehouseIO(wctx, a.settings.Catalog)
	if !ok && len(loaded) > 0 {
		loc = loaded[0].Location()
		fsys, err = loaded[0].FS(wctx)
		ok = true
	}
	switch {
	case !ok:
		r.Status, r.Detail = checkWarn, fmt.Sprintf("not checked: the warehouse %q is not a location and no table is loaded to write next to", loc)
		return r
	case err != nil:
		r.Status, r.Detail, r.Fix = checkFail, err.Error(), "check --warehouse and the storage properties (--catalog-props s3.*, gcs.*, adls.*: endpoint, region, credentials)"
		return r
	}
	path, err := lakecat.ProbeWrite(wctx, fsys, loc)
	if err != nil {
		r.Status, r.Detail = checkFail, fmt.Sprintf("%s is not writable from here: %v", loc, err)
		r.Fix = "check the storage credentials (--catalog-props s3.*, gcs.*, adls.*, the environment's AWS_*, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*, or the catalog's vended credentials) and the permissions on the location"
		return r
	}
	r.Status, r.Detail = checkOK, fmt.Sprintf("%s is writable (wrote, read and removed %s)", loc, path[len(strings.TrimSuffix(loc, "/"))+1:])
	return r
}
