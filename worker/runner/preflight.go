package runner

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/lake"
)

// PreflightTimeout bounds each of Preflight's checks.
const PreflightTimeout = 10 * time.Second

// Preflight checks a worker's wiring before it serves the task queue:
//
//   - Kafka: a broker of s.KafkaBrokers answers (with the TLS and SASL
//     settings);
//   - the catalog: it opens and lists its namespaces;
//   - Temporal: the frontend answers;
//   - the catalog is the tables': every running table workflow that
//     records a catalog (TableSpec.Catalog, in its memo) records this
//     worker's (s.Catalog.Identity()); and when no running table records
//     one, every other lakemirror worker polling the task queue uses this
//     worker's catalog too (the catalog fingerprint in its identity).
//
// Without the last check, a worker started with another catalog would
// join the task queue silently and commit some of a table's batches to
// the other catalog. It returns the first failure, naming what is wrong
// and how to fix it, and warnings (other workers polling with another
// catalog than the tables', which this worker matches; tables whose
// memo records no catalog yet are not warnings).
func Preflight(ctx context.Context, s config.Settings) (warnings []string, err error) {
	if err := checkKafka(ctx, s); err != nil {
		return nil, err
	}
	if err := checkCatalog(ctx, s); err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	c, err := DialContext(dctx, s, nil)
	if err != nil {
		return nil, fmt.Errorf("the Temporal server at %s (namespace %s) is not reachable: %v\n  fix: set --temporal-address and --namespace (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE) and the TLS or API-key settings", s.TemporalAddress, s.Namespace, DialCause(err))
	}
	defer c.Close()
	return checkSameCatalog(dctx, c, s.Catalog.Identity())
}

func checkKafka(ctx context.Context, s config.Settings) error {
	brokers := strings.Join(s.KafkaBrokers, ",")
	kc, err := NewKafka(s)
	if err != nil {
		return fmt.Errorf("the Kafka brokers %q: %w\n  fix: set --kafka-brokers (KAFKA_BROKERS) and the Kafka TLS/SASL settings", brokers, err)
	}
	defer kc.Close()
	kctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	if err := kc.Kgo().Ping(kctx); err != nil {
		return fmt.Errorf("no Kafka broker of %s answers within %s: %v\n  fix: set --kafka-brokers (KAFKA_BROKERS) to reachable brokers, with the Kafka TLS/SASL settings they need", brokers, PreflightTimeout, err)
	}
	return nil
}

func checkCatalog(ctx context.Context, s config.Settings) error {
	cctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	id := s.Catalog.Identity()
	cat, err := lake.OpenCatalog(cctx, s.Catalog)
	if err == nil {
		defer func() {
			if cl, ok := cat.(interface{ Close() error }); ok {
				_ = cl.Close()
			}
		}()
		_, err = cat.ListNamespaces(cctx, nil)
	}
	if err != nil {
		return fmt.Errorf("the Iceberg catalog %q is not reachable: %s\n  fix: set --catalog-type, --catalog-uri, --warehouse and --catalog-props (CATALOG_TYPE, CATALOG_URI, WAREHOUSE, CATALOG_PROPS)", id, s.Catalog.Redact(err.Error()))
	}
	return nil
}

// checkSameCatalog is Preflight's catalog comparison against the running
// tables' memos and the other workers' identities.
func checkSameCatalog(ctx context.Context, c client.Client, ours string) (warnings []string, err error) {
	runs, err := RunningTables(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("list the running tables: %w", err)
	}
	var mismatched []string
	recorded := 0
	for _, r := range runs {
		if r.Spec.Catalog == "" {
			continue
		}
		recorded++
		if r.Spec.Catalog != ours {
			mismatched = append(mismatched, fmt.Sprintf("table %s records catalog %q", r.Table, r.Spec.Catalog))
		}
	}
	sort.Strings(mismatched)
	var others []string
	for _, tq := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		resp, err := c.DescribeTaskQueue(ctx, activities.TaskQueue, tq)
		if err != nil {
			return nil, fmt.Errorf("describe task queue %q: %w", activities.TaskQueue, err)
		}
		for _, p := range resp.GetPollers() {
			pi := ParsePoller(p.GetIdentity())
			if pi.Catalog != "" && pi.Catalog != CatalogHash(ours) {
				others = append(others, fmt.Sprintf("worker %s polls task queue %q with catalog fingerprint %s", pi.Host, activities.TaskQueue, pi.Catalog))
			}
		}
	}
	others = dedup(others)
	const fix = "\n  a worker must use the catalog of the tables it serves, or a table's batches would commit to two catalogs\n  fix: start this worker with the tables' catalog settings (CATALOG_TYPE, CATALOG_URI, WAREHOUSE), or, if they name the same catalog under other addresses, give every worker the same --catalog-id (LAKEMIRROR_CATALOG_ID)"
	switch {
	case len(mismatched) > 0:
		if len(mismatched) > 5 {
			mismatched = append(mismatched[:5], fmt.Sprintf("and %d more", len(mismatched)-5))
		}
		return nil, fmt.Errorf("this worker's catalog is %q (fingerprint %s), but %s%s", ours, CatalogHash(ours), strings.Join(mismatched, "; "), fix)
	case len(others) > 0 && recorded == 0:
		return nil, fmt.Errorf("this worker's catalog is %q (fingerprint %s), but %s%s", ours, CatalogHash(ours), strings.Join(others, "; "), fix)
	case len(others) > 0:
		for _, o := range others {
			warnings = append(warnings, fmt.Sprintf("%s, not this worker's and the running tables' %s: that worker refuses their activities (CatalogMismatch) until it is fixed", o, CatalogHash(ours)))
		}
	}
	return warnings, nil
}

func dedup(xs []string) []string {
	sort.Strings(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// DialCause is a DialContext error without its "runner: connect to
// Temporal at X: " prefix, for messages that name the address themselves.
func DialCause(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "runner: connect to Temporal at "); ok {
		if _, after, ok := strings.Cut(rest, ": "); ok {
			return after
		}
	}
	return msg
}
