// Package telemetry defines the pipeline's Prometheus metrics and serves
// them. Metric names are constants so dashboards, alert rules and the test
// that checks them refer to what the code exports.
package telemetry

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metric names (all carry the label "table", the mirror's ns.table, but
// the worker's index budget and the group cut's lag, which carries
// "group").
const (
	MetricRecords       = "lakemirror_records_total"                         // Kafka records fetched and applied
	MetricEventsApplied = "lakemirror_events_applied_total"                  // row changes that passed the sequence guard, by op (c, u, d, r)
	MetricEventsDropped = "lakemirror_events_dropped_total"                  // row changes that were no-ops, by reason (duplicate, stale)
	MetricTombstones    = "lakemirror_tombstones_total"                      // Kafka tombstones skipped
	MetricQuarantined   = "lakemirror_quarantined_total"                     // records kept in the quarantine table, by reason
	MetricRowsWritten   = "lakemirror_rows_written_total"                    // rows written, by table kind (bronze, mirror, history)
	MetricCommits       = "lakemirror_commits_total"                         // Iceberg commits, by table kind
	MetricCommitErrors  = "lakemirror_commit_conflicts_total"                // failed Iceberg commits (conflicts and catalog errors), retried
	MetricRebuiltKeys   = "lakemirror_rebuilt_keys_total"                    // late keys rebuilt from all their changes (in their batch, or from bronze)
	MetricUnwovenKeys   = "lakemirror_unwoven_keys_total"                    // late keys whose late change could not be woven into the history (no bronze, a rebuilt local state)
	MetricUnknownValues = "lakemirror_unknown_values_total"                  // TOAST/LOB placeholders written as NULL: the value was never known
	MetricKeysMovedOnto = "lakemirror_keys_moved_onto_live_total"            // primary-key changes onto a key another row held (a key swap in one statement)
	MetricStateRebuilds = "lakemirror_state_rebuilds_total"                  // a worker built a table's local state from the tables (not in memory, no usable sidecar), by reason
	MetricStateLoads    = "lakemirror_state_loads_total"                     // a worker loaded a table's local state from its sidecar file instead of building it
	MetricStateReleases = "lakemirror_state_releases_total"                  // a worker freed an idle table's local state (--release-idle-state)
	MetricBatchRecords  = "lakemirror_batch_records"                         // histogram: records per batch
	MetricBatchDuration = "lakemirror_batch_duration_seconds"                // histogram: apply time per batch
	MetricLag           = "lakemirror_kafka_lag_records"                     // gauge: high watermark − next offset, by partition
	MetricWatermark     = "lakemirror_applied_position"                      // gauge: last word of the highest applied _seq (LSN, binlog pos, ...)
	MetricSourceTime    = "lakemirror_applied_source_timestamp_seconds"      // gauge: newest applied source commit time
	MetricFreshness     = "lakemirror_freshness_seconds"                     // gauge: now − newest applied source commit time
	MetricLastBatchTime = "lakemirror_last_batch_timestamp_seconds"          // gauge: when the last batch finished
	MetricRetentionGaps = "lakemirror_retention_gaps_total"                  // next offset deleted by Kafka retention before it was applied
	MetricValFailed     = "lakemirror_validation_failed"                     // gauge: 1 when the last validation run's check failed, 0 when it passed, by check
	MetricValLastRun    = "lakemirror_validation_last_run_timestamp_seconds" // gauge: when the last validation run checked
	MetricValFindings   = "lakemirror_validation_findings"                   // gauge: keys (or partitions) the last run's check named, by check
	MetricValSettling   = "lakemirror_validation_settling_seconds"           // gauge: the last reconciliation's settling period
	MetricIndexBytes    = "lakemirror_state_index_bytes"                     // gauge: a table's key index, by medium (ram, disk), on the worker holding it
	MetricStateLogBytes = "lakemirror_state_log_bytes"                       // gauge: a table's chain log on the worker's local disk
	MetricIndexBudget   = "lakemirror_state_index_budget_bytes"              // gauge: the worker's key index RAM budget, by scope (worker, table); no table label
	MetricGroupCutLag   = "lakemirror_group_cut_lag_seconds"                 // gauge: now − the source commit time of a group's newest published cut, by group; no table label
)

// Names lists every metric the pipeline exports (for the dashboard test).
var Names = []string{MetricRecords, MetricEventsApplied, MetricEventsDropped, MetricTombstones, MetricQuarantined,
	MetricRowsWritten, MetricCommits, MetricCommitErrors, MetricRebuiltKeys, MetricUnwovenKeys, MetricUnknownValues, MetricKeysMovedOnto, MetricStateRebuilds, MetricStateLoads, MetricBatchRecords, MetricBatchDuration,
	MetricLag, MetricWatermark, MetricSourceTime, MetricFreshness, MetricLastBatchTime, MetricRetentionGaps,
	MetricValFailed, MetricValLastRun, MetricValFindings, MetricValSettling, MetricIndexBytes, MetricStateLogBytes, MetricIndexBudget, MetricGroupCutLag}

// Metrics is the pipeline's metric set on one registry.
type Metrics struct {
	Registry      *prometheus.Registry
	records       *prometheus.CounterVec
	applied       *prometheus.CounterVec
	dropped       *prometheus.CounterVec
	tombstones    *prometheus.CounterVec
	quarantined   *prometheus.CounterVec
	rows          *prometheus.CounterVec
	commits       *prometheus.CounterVec
	commitErrors  *prometheus.CounterVec
	rebuilt       *prometheus.CounterVec
	unwoven       *prometheus.CounterVec
	unknownValues *prometheus.CounterVec
	movedOnto     *prometheus.CounterVec
	stateBuilds   *prometheus.CounterVec
	stateLoads    *prometheus.CounterVec
	stateReleases *prometheus.CounterVec
	batchRecords  *prometheus.HistogramVec
	batchDuration *prometheus.HistogramVec
	lag           *lagCollector
	watermark     *prometheus.GaugeVec
	sourceTime    *prometheus.GaugeVec
	lastBatch     *prometheus.GaugeVec
	retentionGaps *prometheus.CounterVec
	valFailed     *prometheus.GaugeVec
	valLastRun    *prometheus.GaugeVec
	valFindings   *prometheus.GaugeVec
	valSettling   *prometheus.GaugeVec

	mu     sync.Mutex
	newest map[string]time.Time // per table: newest applied source commit time (for freshness)
	cutAt  map[string]time.Time // per group: the source commit time of its newest published cut
	now    func() time.Time
	lagFn  func() []LagSample   // computes lag at scrape time; nil = only what ObserveLag set
	stFn   func() StateSnapshot // the tables' local state at scrape time; nil = none
	known  map[string]bool      // tables whose rare-event counters were created at 0
}

// LagSample is one partition's lag, in records.
type LagSample struct {
	Table     string
	Partition int32
	Lag       int64
}

// SetLagFunc makes every scrape compute Kafka lag with fn (so a paused or
// idle table shows its real lag, not the lag at its last batch).
func (m *Metrics) SetLagFunc(fn func() []LagSample) {
	m.mu.Lock()
	m.lagFn = fn
	m.mu.Unlock()
}

// StateSample is one table's local state on this worker, in bytes.
type StateSample struct {
	Table                         string
	IndexRAMBytes, IndexDiskBytes int64
	LogBytes                      int64
}

// StateSnapshot is the local state of every table a worker holds and its
// key index budget (0: unbounded).
type StateSnapshot struct {
	Tables                              []StateSample
	WorkerBudgetBytes, TableBudgetBytes int64
}

// SetStateFunc makes every scrape report the tables' local state (key
// index in RAM and on disk, chain log) and the index budget from fn.
func (m *Metrics) SetStateFunc(fn func() StateSnapshot) {
	m.mu.Lock()
	m.stFn = fn
	m.mu.Unlock()
}

// stateCollector reports SetStateFunc's snapshot at scrape.
type stateCollector struct {
	m                  *Metrics
	index, log, budget *prometheus.Desc
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.index
	ch <- c.log
	ch <- c.budget
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	fn := c.m.stFn
	c.m.mu.Unlock()
	if fn == nil {
		return
	}
	s := fn()
	for _, t := range s.Tables {
		ch <- prometheus.MustNewConstMetric(c.index, prometheus.GaugeValue, float64(t.IndexRAMBytes), t.Table, "ram")
		ch <- prometheus.MustNewConstMetric(c.index, prometheus.GaugeValue, float64(t.IndexDiskBytes), t.Table, "disk")
		ch <- prometheus.MustNewConstMetric(c.log, prometheus.GaugeValue, float64(t.LogBytes), t.Table)
	}
	ch <- prometheus.MustNewConstMetric(c.budget, prometheus.GaugeValue, float64(s.WorkerBudgetBytes), "worker")
	ch <- prometheus.MustNewConstMetric(c.budget, prometheus.GaugeValue, float64(s.TableBudgetBytes), "table")
}

// New creates the metric set on a fresh registry (with Go and process
// collectors).
func New() *Metrics {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{Registry: r, newest: map[string]time.Time{}, cutAt: map[string]time.Time{}, now: time.Now}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append([]string{"table"}, labels...))
		r.MustRegister(c)
		return c
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append([]string{"table"}, labels...))
		r.MustRegister(g)
		return g
	}
	m.records = counter(MetricRecords, "Kafka records fetched and applied.")
	m.applied = counter(MetricEventsApplied, "Row changes that passed the sequence guard, by Debezium op.", "op")
	m.dropped = counter(MetricEventsDropped, "Row changes that were no-ops under the sequence guard, by reason (duplicate, stale).", "reason")
	m.tombstones = counter(MetricTombstones, "Kafka tombstones (null values) skipped.")
	m.quarantined = counter(MetricQuarantined, "Records kept in the quarantine table, by reason.", "reason")
	m.rows = counter(MetricRowsWritten, "Rows written to Iceberg, by table kind (bronze, mirror, history).", "kind")
	m.commits = counter(MetricCommits, "Iceberg commits, by table kind.", "kind")
	m.commitErrors = counter(MetricCommitErrors, "Failed Iceberg commits (conflicts, catalog errors); the batch is retried.")
	m.rebuilt = counter(MetricRebuiltKeys, "Late keys whose history and mirror row were rebuilt from all their changes (late path: in their batch, or by RebuildKeys from bronze).")
	m.unwoven = counter(MetricUnwovenKeys, "Late keys whose late change could not be woven into the history: a table without bronze whose worker rebuilt its local state after the key's earlier changes (the history misses the late change's version).")
	m.unknownValues = counter(MetricUnknownValues, "Unavailable-value placeholders (PostgreSQL TOAST, Oracle LOBs) written as NULL because the value was never known: the source sent it only as unchanged for a row the mirror did not hold.")
	m.movedOnto = counter(MetricKeysMovedOnto, "Primary-key changes whose new key held a live row: a key swap or shift in one statement of a deferrable primary key, which Debezium's stream cannot place (a key may end deleted or hold another row's TOAST value; starter resnapshot repairs it).")
	m.stateBuilds = counter(MetricStateRebuilds, "Times a worker built a table's local state (key index and chain log) by reading the tables, by reason (new: the worker had none; snapshot-moved: the table is at another snapshot than the state; invalidated: a failed commit or log; stale-sidecar: the sidecar is for another snapshot).", "reason")
	m.stateLoads = counter(MetricStateLoads, "Times a worker loaded a table's local state from the sidecar file next to the table instead of building it.")
	m.stateReleases = counter(MetricStateReleases, "Times a worker freed a table's local state after the table was idle for --release-idle-state (its next batch loads the sidecar or builds the state again).")
	m.retentionGaps = counter(MetricRetentionGaps, "Times the next offset had been deleted by Kafka retention before it was applied.")
	m.batchRecords = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricBatchRecords, Help: "Kafka records per applied batch.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 10)}, []string{"table"})
	m.batchDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricBatchDuration, Help: "Time to apply one batch (fetch, decode, commits).",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"table"})
	r.MustRegister(m.batchRecords, m.batchDuration)
	m.lag = &lagCollector{m: m, last: map[lagKey]int64{}, desc: prometheus.NewDesc(MetricLag,
		"Kafka high watermark minus the next offset to apply, per partition (computed at scrape when the worker can).", []string{"table", "partition"}, nil)}
	r.MustRegister(m.lag)
	m.watermark = gauge(MetricWatermark, "Last word of the highest applied source position (_seq): LSN, binlog position, SCN.")
	m.sourceTime = gauge(MetricSourceTime, "Newest applied source commit time, seconds since the epoch.")
	m.lastBatch = gauge(MetricLastBatchTime, "When the last batch was applied, seconds since the epoch.")
	m.valFailed = gauge(MetricValFailed, "1 when the table's last validation run found its check failing, 0 when it passed (starter validate).", "check")
	m.valLastRun = gauge(MetricValLastRun, "When the table's last validation run checked, seconds since the epoch.")
	m.valFindings = gauge(MetricValFindings, "How many keys the table's last run of the check named: differences for the reconcile checks (starter reconcile).", "check")
	m.valSettling = gauge(MetricValSettling, "The settling period of the table's last reconciliation: p99 of recent source-commit-to-apply delays, floored and capped.")
	r.MustRegister(&sinceCollector{m: m, times: m.newest, desc: prometheus.NewDesc(MetricFreshness,
		"Seconds between now and the newest applied source commit time.", []string{"table"}, nil)})
	r.MustRegister(&sinceCollector{m: m, times: m.cutAt, desc: prometheus.NewDesc(MetricGroupCutLag,
		"Seconds between now and the source commit time of the source group's newest published consistent cut (what a reader of the cut-<n> or consistent tags misses); grows while no cut is published.", []string{"group"}, nil)})
	r.MustRegister(&stateCollector{m: m,
		index: prometheus.NewDesc(MetricIndexBytes, "A table's key index on the worker holding it, in bytes, by medium: ram (hash table and entries, a spilled index's memtables) and disk (a spilled index's store).", []string{"table", "medium"}, nil),
		log:   prometheus.NewDesc(MetricStateLogBytes, "A table's chain log on the worker's local disk, in bytes.", []string{"table"}, nil),
		budget: prometheus.NewDesc(MetricIndexBudget, "The worker's RAM budget for key indexes, in bytes, by scope: worker (all tables together) and table (one table's, before it spills to disk).",
			[]string{"scope"}, nil)})
	return m
}

type lagKey struct {
	table     string
	partition int32
}

// lagCollector reports per-partition lag: the last observed value,
// refreshed at scrape time by the lag function when one is set.
type lagCollector struct {
	m    *Metrics
	desc *prometheus.Desc
	mu   sync.Mutex
	last map[lagKey]int64
}

func (l *lagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l *lagCollector) Collect(ch chan<- prometheus.Metric) {
	l.m.mu.Lock()
	fn := l.m.lagFn
	l.m.mu.Unlock()
	var fresh []LagSample
	if fn != nil {
		fresh = fn()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range fresh {
		l.last[lagKey{s.Table, s.Partition}] = s.Lag
	}
	for k, v := range l.last {
		ch <- prometheus.MustNewConstMetric(l.desc, prometheus.GaugeValue, float64(v), k.table, strconv.Itoa(int(k.partition)))
	}
}

func (l *lagCollector) set(table string, partition int32, lag int64) {
	l.mu.Lock()
	l.last[lagKey{table, partition}] = lag
	l.mu.Unlock()
}

// sinceCollector computes, at scrape, now − each time of times (a map
// of m's, read under m.mu), labelled by its key: the freshness (per
// table, the newest applied source commit time) and the group cut lag
// (per group, the newest published cut's source commit time), which
// keep growing while nothing moves them.
type sinceCollector struct {
	m     *Metrics
	times map[string]time.Time
	desc  *prometheus.Desc
}

func (c *sinceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *sinceCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	now := c.m.now()
	for label, t := range c.times {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, now.Sub(t).Seconds(), label)
	}
}

// CutPublished records that group published a consistent cut whose
// source commit time (its END's ts_ms) is sourceTime: the group's cut lag
// (MetricGroupCutLag) counts from the newest such time. A zero time (a
// cut per position, without a commit time) records nothing.
func (m *Metrics) CutPublished(group string, sourceTime time.Time) {
	if sourceTime.IsZero() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if sourceTime.After(m.cutAt[group]) {
		m.cutAt[group] = sourceTime
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// Batch is what one applied batch contributes.
type Batch struct {
	Table                               string
	Records, Tombstones                 int
	AppliedByOp                         map[string]int // op → events
	Duplicates, Stale                   int
	BronzeRows, MirrorRows, HistoryRows int
	Commits                             map[string]int // kind → commits
	Duration                            time.Duration
	WatermarkWord                       uint64    // last word of the highest applied _seq; 0 = none applied
	NewestSourceTime                    time.Time // zero = none applied
}

// initTable creates a table's rare-event counters at 0 the first time the
// table is seen, so that increase() over them sees their first event.
func (m *Metrics) initTable(t string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known == nil {
		m.known = map[string]bool{}
	}
	if m.known[t] {
		return
	}
	m.known[t] = true
	for _, stage := range []string{"decode", "conform", "schema", "purged"} {
		m.quarantined.WithLabelValues(t, stage)
	}
	m.retentionGaps.WithLabelValues(t)
	m.commitErrors.WithLabelValues(t)
	m.rebuilt.WithLabelValues(t)
	m.unwoven.WithLabelValues(t)
	m.unknownValues.WithLabelValues(t)
	m.movedOnto.WithLabelValues(t)
	m.stateLoads.WithLabelValues(t)
}

// ObserveBatch records one applied batch.
func (m *Metrics) ObserveBatch(b Batch) {
	t := b.Table
	m.initTable(t)
	m.records.WithLabelValues(t).Add(float64(b.Records))
	m.tombstones.WithLabelValues(t).Add(float64(b.Tombstones))
	for op, n := range b.AppliedByOp {
		m.applied.WithLabelValues(t, op).Add(float64(n))
	}
	m.dropped.WithLabelValues(t, "duplicate").Add(float64(b.Duplicates))
	m.dropped.WithLabelValues(t, "stale").Add(float64(b.Stale))
	m.rows.WithLabelValues(t, "bronze").Add(float64(b.BronzeRows))
	m.rows.WithLabelValues(t, "mirror").Add(float64(b.MirrorRows))
	m.rows.WithLabelValues(t, "history").Add(float64(b.HistoryRows))
	for kind, n := range b.Commits {
		m.commits.WithLabelValues(t, kind).Add(float64(n))
	}
	m.batchRecords.WithLabelValues(t).Observe(float64(b.Records))
	m.batchDuration.WithLabelValues(t).Observe(b.Duration.Seconds())
	m.lastBatch.WithLabelValues(t).Set(float64(m.now().UnixNano()) / 1e9)
	if b.WatermarkWord > 0 {
		m.watermark.WithLabelValues(t).Set(float64(b.WatermarkWord))
	}
	if !b.NewestSourceTime.IsZero() {
		m.mu.Lock()
		if b.NewestSourceTime.After(m.newest[t]) {
			m.newest[t] = b.NewestSourceTime
			m.sourceTime.WithLabelValues(t).Set(float64(b.NewestSourceTime.UnixNano()) / 1e9)
		}
		m.mu.Unlock()
	}
}

// ObserveLag records the lag of each partition (high watermark − next
// offset, in records).
func (m *Metrics) ObserveLag(table string, next, highWatermarks map[int32]int64) {
	m.initTable(table)
	for p, hwm := range highWatermarks {
		m.lag.set(table, p, max(hwm-next[p], 0))
	}
}

// CommitFailed counts a failed Iceberg commit.
func (m *Metrics) CommitFailed(table string) { m.commitErrors.WithLabelValues(table).Inc() }

// Quarantined counts records kept in the quarantine table.
func (m *Metrics) Quarantined(table, reason string, n int) {
	m.quarantined.WithLabelValues(table, reason).Add(float64(n))
}

// Unwoven counts late keys whose late change could not be woven into the
// history.
func (m *Metrics) Unwoven(table string, keys int) {
	m.unwoven.WithLabelValues(table).Add(float64(keys))
}

// UnknownValues counts unavailable-value placeholders (PostgreSQL TOAST,
// Oracle LOBs) written as NULL because no value was known.
func (m *Metrics) UnknownValues(table string, n int) {
	m.unknownValues.WithLabelValues(table).Add(float64(n))
}

// KeysMovedOntoLive counts primary-key changes onto a key another row
// held (merge.MovedOntoLive): a key swap or shift in one statement.
func (m *Metrics) KeysMovedOntoLive(table string, n int) {
	m.movedOnto.WithLabelValues(table).Add(float64(n))
}

// Rebuilt counts keys rebuilt by the late path.
func (m *Metrics) Rebuilt(table string, keys int) {
	m.rebuilt.WithLabelValues(table).Add(float64(keys))
}

// StateRebuilt counts one build of a table's local state from the
// tables, with its reason (tablestate.BuildNew, tablestate.BuildSnapshotMoved, ...).
func (m *Metrics) StateRebuilt(table, reason string) {
	m.stateBuilds.WithLabelValues(table, reason).Inc()
}

// StateLoaded counts one load of a table's local state from its sidecar.
func (m *Metrics) StateLoaded(table string) { m.stateLoads.WithLabelValues(table).Inc() }

// StateReleased counts one release of an idle table's local state
// (activities.ReleaseIdleStates).
func (m *Metrics) StateReleased(table string) { m.stateReleases.WithLabelValues(table).Inc() }

// ObserveValidation records one validation run of table at time at:
// failed maps each check run to whether it failed.
func (m *Metrics) ObserveValidation(table string, at time.Time, failed map[string]bool) {
	for check, f := range failed {
		v := 0.0
		if f {
			v = 1
		}
		m.valFailed.WithLabelValues(table, check).Set(v)
	}
	m.valLastRun.WithLabelValues(table).Set(float64(at.UnixNano()) / 1e9)
}

// ObserveReconcile records one reconciliation run of table: findings
// maps each check run to how many keys it named, settle is the settling
// period it waited.
func (m *Metrics) ObserveReconcile(table string, findings map[string]int, settle time.Duration) {
	for check, n := range findings {
		m.valFindings.WithLabelValues(table, check).Set(float64(n))
	}
	m.valSettling.WithLabelValues(table).Set(settle.Seconds())
}

// RetentionGap counts a detected retention gap.
func (m *Metrics) RetentionGap(table string) { m.retentionGaps.WithLabelValues(table).Inc() }
