//go:build !nodev

// The demo runs the embedded dev stack (internal/devstack: the Temporal
// server, the Web UI, a Kafka broker) in this process. A starter built
// with -tags nodev leaves it out (demo_nodev.go): a smaller binary that
// links no server.

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

type demoFlags struct {
	spec       specFlags
	events     []string
	keep       bool
	partitions int32
	timeout    time.Duration
	seed       int64
	dataDir    string
}

func (a *app) demoCmd() *cobra.Command {
	var f demoFlags
	var out jsonLinesFlag
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole pipeline in one process on a sample or your own Debezium events",
		Long: `demo starts an embedded Temporal dev server (with the Web UI), an embedded Kafka
broker and a local SQLite Iceberg catalog, produces Debezium change events to a
topic in file order, runs the table workflow with --batch-size, waits until it
has caught up, and prints the mirror table as JSON lines sorted by key. Before
them its log counts the live and soft-deleted rows, names the soft-deleted
rows that hold only their key (deletes of keys the stream never created) and
shows the first three live rows.

Without --events it uses the bundled generator of a realistic Debezium
PostgreSQL stream for an orders table, with duplicates, late and out-of-order
deliveries, deletes of unseen keys and tombstones, and checks the mirror
against the generator's expected state.

--events takes files of Debezium values: one JSON value per line or
concatenated pretty-printed objects (a line null is a tombstone), or
RisingWave's KEY^VALUE lines.`,
		Example: "  starter demo\n  starter demo --events testdata/debezium/flink/debezium-data-schema-include.txt --key id --batch-size 4\n  starter demo --keep   # then open the Web UI",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check("demo"); err != nil {
				return err
			}
			return a.demo(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	out.bind(cmd)
	f.spec.bind(cmd, payload.TableSpec{MaxEvents: 100, MaxWait: 300 * time.Millisecond}.Defaults())
	fl := cmd.Flags()
	fl.StringSliceVar(&f.events, "events", nil, "files of Debezium change-event values to produce, in order (default: the generated sample stream)")
	fl.BoolVar(&f.keep, "keep", false, "keep the stack and the Web UI up after printing, until Ctrl-C (fixed ports 7233/8233/19092)")
	fl.Int32Var(&f.partitions, "partitions", 1, "partitions of the demo topic (records are partitioned by key)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "give up when the pipeline has not caught up by then")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the generated sample stream")
	fl.StringVar(&f.dataDir, "demo-dir", "", "keep the demo's Temporal database, Kafka log, catalog and warehouse in this directory (default: a temp dir, removed at exit)")
	return cmd
}

func (a *app) demo(ctx context.Context, out, log io.Writer, f demoFlags) error {
	var recs []demoRecord
	var expected []sample.Row
	topic := sample.Topic
	if f.spec.table == "" {
		f.spec.table = "shop.orders"
	}
	if len(f.events) == 0 {
		if f.spec.key == "" {
			f.spec.key = "order_id"
		}
		stream := sample.Generate(sample.Options{Seed: f.seed, Inserts: 40, Updates: 60, Deletes: 10, Duplicates: 8,
			Late: 6, OutOfOrder: 6, UnseenDeletes: 3, Tombstones: true, Envelope: true})
		for _, m := range stream.Delivered {
			recs = append(recs, demoRecord{Key: m.Key, Value: m.Value})
		}
		expected = stream.Expected()
		fmt.Fprintf(log, "demo: generated a Debezium PostgreSQL stream for shop.public.orders: %d source changes, %d records delivered (with duplicates, late and out-of-order records, tombstones)\n",
			len(stream.Clean), len(stream.Delivered))
	} else {
		base := strings.TrimSuffix(filepath.Base(f.events[0]), filepath.Ext(f.events[0]))
		topic = "demo." + sanitize(base)
		if f.spec.table == "shop.orders" {
			f.spec.table = "demo." + sanitize(base)
		}
		var err error
		if recs, err = loadEventFiles(f.events, splitKey(f.spec.key)); err != nil {
			return err
		}
		fmt.Fprintf(log, "demo: read %d records from %s\n", len(recs), strings.Join(f.events, ", "))
	}
	spec, err := f.spec.spec(topic)
	if err != nil {
		return err
	}

	devOpts := devstack.StackOptions{DataDir: f.dataDir, UIPort: 0, SearchAttributes: workflows.SearchAttributeTypes}
	if f.keep {
		devOpts.GRPCPort, devOpts.KafkaPort = 7233, 19092
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	dev, err := devstack.StartStack(ctx, devOpts)
	if err != nil {
		return fmt.Errorf("start the embedded stack: %w", err)
	}
	defer dev.Stop()
	fmt.Fprintf(log, "demo: Temporal %s (Web UI %s), Kafka %s, Iceberg catalog in %s\n",
		dev.Settings.TemporalAddress, dev.Temporal.UIURL(), strings.Join(dev.Settings.KafkaBrokers, ","), dev.Settings.DataDir)
	r, err := runner.Start(ctx, dev.Settings, quiet)
	if err != nil {
		return err
	}
	defer r.Stop()

	if err := r.Kafka.CreateTopic(ctx, topic, f.partitions); err != nil {
		return err
	}
	krecs := make([]*kgo.Record, len(recs))
	for i, rec := range recs {
		krecs[i] = &kgo.Record{Topic: topic, Key: rec.Key, Value: rec.Value}
	}
	if err := r.Kafka.Produce(ctx, krecs...); err != nil {
		return err
	}
	ends, err := r.Kafka.EndOffsets(ctx, topic)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "demo: produced %d records to topic %s (%d partitions)\n", len(recs), topic, f.partitions)

	start := time.Now()
	if _, err := startTable(ctx, r.Client, spec); err != nil {
		return err
	}
	fmt.Fprintf(log, "demo: started workflow %s, batches of at most %d records\n", workflows.WorkflowID(spec.Table), spec.MaxEvents)
	st, err := waitCaughtUp(ctx, r, spec.Table, lake.Offsets(ends), f.timeout, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "demo: caught up in %s: %s, %s, %s (%d applied, %d stale, %d duplicate), %d quarantined, %s skipped\n",
		time.Since(start).Round(time.Millisecond), human.Count(st.Totals.Batches, "batch", "batches"), human.Count(st.Totals.Records, "record", "records"),
		human.Count(st.Totals.Changes, "change", "changes"), st.Totals.Applied, st.Totals.Stale, st.Totals.Duplicates, st.Totals.Quarantined,
		human.Count(st.Totals.Tombstones, "tombstone", "tombstones"))

	name, _ := lake.ParseTableName(spec.Table)
	tbl, err := lake.LoadTable(ctx, r.Catalog, name.Mirror())
	if err != nil {
		return err
	}
	if tbl == nil {
		if st.Totals.Quarantined > 0 {
			return fmt.Errorf("no mirror table was created: all %d row changes went to the quarantine table %s", st.Totals.Quarantined, strings.Join(name.Quarantine(), "."))
		}
		return fmt.Errorf("no mirror table was created: the events held no row changes")
	}
	keys, err := lakecat.KeyColumnsOf(tbl)
	if err != nil {
		return err
	}
	rows, cols, err := lake.ReadRows(ctx, tbl, keys)
	if err != nil {
		return err
	}
	delCol, err := lakecat.SoftDeleteColumn(tbl.Schema())
	if err != nil {
		return err
	}
	sys, err := lakecat.SystemColumnsOf(tbl.Schema())
	if err != nil {
		return err
	}
	src, err := lakecat.SourceColumns(tbl.Schema(), sys)
	if err != nil {
		return err
	}
	srcNames := make([]string, len(src))
	for i, c := range src {
		srcNames[i] = c.Name
	}
	if err := writeDemoSummary(log, spec.Table, rows, cols, keys, srcNames, delCol); err != nil {
		return err
	}
	if err := lake.WriteJSONLines(out, rows, cols); err != nil {
		return err
	}
	if expected != nil {
		if diff := compareExpected(rows, delCol, expected); diff != "" {
			return fmt.Errorf("the mirror differs from the generator's expected state:\n%s", diff)
		}
		fmt.Fprintf(log, "demo: the mirror equals the generator's expected state (%d keys)\n", len(expected))
	}
	if f.keep {
		fmt.Fprintf(log, "demo: stack kept up: Web UI %s, Temporal %s, Kafka %s; read the tables with: starter dump %s --data-dir %s [--history|--bronze|--quarantine]. Ctrl-C to stop.\n",
			dev.Temporal.UIURL(), dev.Settings.TemporalAddress, strings.Join(dev.Settings.KafkaBrokers, ","), spec.Table, dev.Settings.DataDir)
		<-ctx.Done() // Ctrl-C (run cancels the context): the normal end of --keep
		return nil
	}
	_ = r.Client.SignalWorkflow(ctx, workflows.WorkflowID(spec.Table), "", workflows.SignalStop, nil)
	return nil
}

// waitCaughtUp polls the status query until the workflow's offsets reach
// ends on every partition.
func waitCaughtUp(ctx context.Context, r *runner.Runner, table string, ends lake.Offsets, timeout time.Duration, log io.Writer) (workflows.Status, error) {
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		st, err := queryStatus(ctx, r.Client, table)
		if err == nil {
			if st.Phase == workflows.PhaseBlocked || st.Phase == workflows.PhaseSchemaBlocked {
				return st, fmt.Errorf("the pipeline is %s: %s", st.Phase, st.LastError)
			}
			if b := st.LastBatch; b != nil && b.BatchID != last { // each applied batch once (BatchSeq counts planned ones)
				last = b.BatchID
				fmt.Fprintf(log, "demo: batch %s: %s, %d applied, %d stale, %d duplicate, %d quarantined; mirror +%s, %s\n",
					b.BatchID, human.Count(b.Records, "record", "records"), b.Mirror.Applied, b.Mirror.Stale, b.Mirror.Duplicates, b.Quarantined,
					human.Count(b.Mirror.RowsWritten, "row", "rows"), human.Count(b.Mirror.PositionDeletes, "position delete", "position deletes"))
			}
			done := true
			for p, end := range ends {
				if st.Offsets[p] < end {
					done = false
				}
			}
			if done {
				return st, nil
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				return st, fmt.Errorf("the pipeline did not catch up within %s (phase %s, offsets %v of %v)", timeout, st.Phase, st.Offsets, ends)
			}
			return st, fmt.Errorf("the pipeline did not catch up within %s (last status error: %v)", timeout, err)
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
