package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/names"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/retention"
	"github.com/lakemirror/lakemirror/schemas"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// specFlags are the table-spec flags of start and demo.
type specFlags struct {
	table, key                       string
	source, sourceTable, signalTopic string
	definition, historyColumns       string
	collapseTx, bronze, history      bool
	// settings holds the values of payload.Settings' flags
	// (--batch-size, --max-wait, ...), bound by bindSettings.
	settings     payload.TableSpec
	layout       layoutFlags
	deleteFormat string
}

// layoutFlags are the partition, sort and compression flags of the three
// tables (layout.Tables), the partition and sort flags repeatable: one
// field per flag.
type layoutFlags struct {
	mirrorPartition, mirrorSort   []string
	historyPartition, historySort []string
	bronzePartition, bronzeSort   []string
	mirrorCodec, historyCodec     string
	bronzeCodec                   string
}

func (f *layoutFlags) bind(fl *pflag.FlagSet) {
	const fields = "col, identity(col), bucket(N, col), truncate(W, col), year(col), month(col), day(col) or hour(col)"
	const codecs = "zstd[:1-22], snappy, gzip[:1-9] or uncompressed (Iceberg's write.parquet.compression-codec and -level; default: the table's, zstd level 1 on a table lakemirror creates)"
	fl.StringArrayVar(&f.mirrorPartition, "mirror-partition-by", nil, "a partition field of the mirror, repeatable: "+fields)
	fl.StringArrayVar(&f.mirrorSort, "mirror-sort-by", nil, "a sort field of the mirror's files, repeatable: col [asc|desc] [nulls first|nulls last]")
	fl.StringVar(&f.mirrorCodec, "mirror-compression", "", "the Parquet codec of the mirror's files: "+codecs)
	fl.StringArrayVar(&f.historyPartition, "history-partition-by", nil, "a partition field of the history, repeatable (e.g. day(_valid_from))")
	fl.StringArrayVar(&f.historySort, "history-sort-by", nil, "a sort field of the history's files, repeatable")
	fl.StringVar(&f.historyCodec, "history-compression", "", "the Parquet codec of the history's files (as --mirror-compression)")
	fl.StringArrayVar(&f.bronzePartition, "bronze-partition-by", nil, "a partition field of bronze, repeatable (default day(_ingested_at); none for unpartitioned)")
	fl.StringArrayVar(&f.bronzeSort, "bronze-sort-by", nil, "a sort field of bronze's files, repeatable")
	fl.StringVar(&f.bronzeCodec, "bronze-compression", "", "the Parquet codec of bronze's files (as --mirror-compression; bronze holds the raw Kafka records)")
}

// tables is the layout the flags give, checked (layout.Tables.Validate).
func (f *layoutFlags) tables() (layout.Tables, error) {
	t := layout.Tables{
		Mirror:  layout.Spec{PartitionBy: f.mirrorPartition, SortBy: f.mirrorSort, Compression: f.mirrorCodec},
		History: layout.Spec{PartitionBy: f.historyPartition, SortBy: f.historySort, Compression: f.historyCodec},
		Bronze:  layout.Spec{PartitionBy: f.bronzePartition, SortBy: f.bronzeSort, Compression: f.bronzeCodec},
	}.Normalize()
	return t, t.Validate()
}

// changed reports whether a layout flag of the table name (mirror,
// history, bronze) was given.
func (f *layoutFlags) changed(fl *pflag.FlagSet, name string) bool {
	return fl.Changed(name+"-partition-by") || fl.Changed(name+"-sort-by") || fl.Changed(name+"-compression")
}

// noEmptyCodec refuses a compression flag given empty (a usage error
// naming it): a settings update with it would leave the table's codec
// as it is while its spec named none.
func (f *layoutFlags) noEmptyCodec(fl *pflag.FlagSet) error {
	for _, x := range []struct{ name, codec string }{{"mirror", f.mirrorCodec}, {"history", f.historyCodec}, {"bronze", f.bronzeCodec}} {
		if fl.Changed(x.name+"-compression") && strings.TrimSpace(x.codec) == "" {
			return usage("--%s-compression: give a codec (zstd[:1-22], snappy, gzip[:1-9] or uncompressed; tables lakemirror creates start with zstd:1): an empty one would leave the table's codec as it is", x.name)
		}
	}
	return nil
}

// request sets in req the layout of each table with a layout flag: its
// partition and sort flags together make its fields (neither given: its
// current ones), its compression flag its compression (not given: its
// current one). cur gives the table's current layout; it is called only
// when a layout flag was given, and req records what it gave
// (SettingsRequest.LayoutFrom). The caller has refused empty codecs
// (noEmptyCodec). Errors: cur's.
func (f *layoutFlags) request(fl *pflag.FlagSet, req *workflows.SettingsRequest, cur func() (layout.Tables, error)) error {
	t, err := f.tables()
	if err != nil {
		return err
	}
	var now *layout.Tables
	for _, x := range []struct {
		name string
		spec layout.Spec
		dst  **layout.Spec
		cur  func(layout.Tables) layout.Spec
	}{{"mirror", t.Mirror, &req.MirrorLayout, func(t layout.Tables) layout.Spec { return t.Mirror }},
		{"history", t.History, &req.HistoryLayout, func(t layout.Tables) layout.Spec { return t.History }},
		{"bronze", t.Bronze, &req.BronzeLayout, func(t layout.Tables) layout.Spec { return t.Bronze }}} {
		if !f.changed(fl, x.name) {
			continue
		}
		if now == nil {
			c, err := cur()
			if err != nil {
				return err
			}
			now = &c
			req.LayoutFrom = now // the workflow refuses the update if the layout moves meanwhile
		}
		spec, was := x.spec, x.cur(*now)
		if !fl.Changed(x.name+"-partition-by") && !fl.Changed(x.name+"-sort-by") {
			spec.PartitionBy, spec.SortBy = was.PartitionBy, was.SortBy
		}
		if !fl.Changed(x.name + "-compression") {
			spec.Compression = was.Compression
		}
		*x.dst = &spec
	}
	return nil
}

// bind adds the spec flags to cmd; defaults gives the defaults of
// payload.Settings' flags (start: payload.TableSpec{}.Defaults()).
func (f *specFlags) bind(cmd *cobra.Command, defaults payload.TableSpec) {
	fl := cmd.Flags()
	fl.StringVar(&f.table, "table", "", "Iceberg mirror table as namespace.table (default: the topic's last two segments)")
	fl.StringVar(&f.key, "key", "", "comma-separated primary-key columns (default: the fields of the Kafka record key)")
	bindSettings(fl, &f.settings, defaults, false)
	fl.StringVar(&f.source, "source", "", "source database (a name the worker maps to a DSN with -sources) to load the table from directly before streaming")
	fl.StringVar(&f.sourceTable, "source-table", "", "the table in the source database as schema.table (for --source and incremental re-snapshots); with --group, the data collection the group's transaction END events name (default: the topic's last two segments; SQL Server and Db2 name db.schema.table)")
	fl.StringVar(&f.definition, "definition", "", "table definition file (JSON, see schemas/examples/orders.table.json) declaring column types for events without a schema envelope")
	fl.StringVar(&f.historyColumns, "history-columns", "", "comma-separated columns whose change opens a history version (default: all)")
	fl.BoolVar(&f.collapseTx, "history-collapse-tx", false, "one history version per source transaction")
	fl.BoolVar(&f.bronze, "bronze", true, "keep the bronze table (every Kafka record, append-only); --bronze=false gives up the audit copy and, after a worker loses its local state, late changes in history (see docs/operating.md: Which tables)")
	fl.BoolVar(&f.history, "history", true, "keep the SCD type 2 history table; --history=false makes a mirror-only (or bronze + mirror) table")
	fl.StringVar(&f.signalTopic, "signal-topic", "", "the Debezium connector's signal topic (signal.kafka.topic), for resnapshot --incremental")
	f.layout.bind(fl)
	fl.StringVar(&f.deleteFormat, "delete-format", "position", "how the mirror and history remove replaced rows, fixed when they are created: position (Iceberg v2 position deletes, every reader) or dv (Iceberg v3 deletion vectors; docs/readers.md lists the readers)")
}

// bindSettings adds a flag for each setting of payload.Settings (only the
// Live ones with liveOnly), named Setting.Flag and bound to the setting's
// field in dst, with its value in defaults as the flag's default; the
// settings' aliases (--max-events for --batch-size) are accepted as
// other spellings of their flags.
func bindSettings(fl *pflag.FlagSet, dst *payload.TableSpec, defaults payload.TableSpec, liveOnly bool) {
	for i := range payload.Settings {
		s := &payload.Settings[i]
		if liveOnly && !s.Live {
			continue
		}
		switch p := s.Ptr(dst).(type) {
		case *int:
			fl.IntVar(p, s.Flag(), s.Get(defaults).(int), s.Doc)
		case *time.Duration:
			fl.DurationVar(p, s.Flag(), s.Get(defaults).(time.Duration), s.Doc)
		case *string:
			fl.StringVar(p, s.Flag(), s.Get(defaults).(string), s.Doc)
		}
	}
	fl.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if s := payload.LookupSetting(name); s != nil {
			return pflag.NormalizedName(s.Flag())
		}
		return pflag.NormalizedName(name)
	})
}

// settingError is a setting's refusal (a *payload.SettingError) as a
// usage error naming its flag: "--batch-size: 0 outside 1..1000000
// records".
func settingError(err error) error {
	var se *payload.SettingError
	if errors.As(err, &se) {
		return usage("--%s: %s", payload.LookupSetting(se.Name).Flag(), se.Why)
	}
	return usage("%v", err)
}

func (f *specFlags) spec(topic string) (activities.TableSpec, error) {
	if err := names.CheckTopic(topic); err != nil {
		return activities.TableSpec{}, usage("%v", err)
	}
	table := f.table
	if table == "" {
		parts := strings.Split(topic, ".")
		if len(parts) < 2 {
			return activities.TableSpec{}, usage("--table is required: topic %q has no namespace.table suffix", topic)
		}
		table = strings.Join(parts[len(parts)-2:], ".")
	}
	if err := names.CheckTable(table); err != nil {
		var bad *names.Error
		if f.table == "" && errors.As(err, &bad) {
			return activities.TableSpec{}, usage("topic %s makes the table name %q, which %s: give --table; %s", topic, table, bad.Why, names.TableRule)
		}
		return activities.TableSpec{}, usage("--table: %v", err)
	}
	if err := f.settings.Validate(); err != nil {
		return activities.TableSpec{}, settingError(err)
	}
	spec := f.settings
	spec.Table, spec.Topic = table, topic
	spec.Source, spec.SourceTable, spec.SignalTopic = f.source, f.sourceTable, f.signalTopic
	spec.HistoryColumns, spec.HistoryCollapseTx = splitKey(f.historyColumns), f.collapseTx
	spec.WithoutBronze, spec.WithoutHistory = !f.bronze, !f.history
	var err error
	if spec.Layout, err = f.layout.tables(); err != nil {
		return activities.TableSpec{}, usage("%v", err)
	}
	if spec.DeleteFormat, err = layout.ParseDeleteFormat(f.deleteFormat); err != nil {
		return activities.TableSpec{}, usage("--delete-format: %v", err)
	}
	if spec.DeleteFormat == layout.DeletePosition {
		spec.DeleteFormat = "" // the default, so specs stay as they were
	}
	if spec.WithoutHistory && (len(spec.HistoryColumns) > 0 || spec.HistoryCollapseTx) {
		return activities.TableSpec{}, usage("--history-columns and --history-collapse-tx need the history table (--history=false given)")
	}
	if f.definition != "" {
		def, err := schemas.LoadTableDefinition(f.definition)
		if err != nil {
			return activities.TableSpec{}, usage("--definition: %v", err)
		}
		spec.Columns = def.Columns
		if f.key == "" { // the definition's key as it is: not split at commas or trimmed
			spec.KeyColumns = def.KeyColumns
			if err := names.CheckColumns("--definition: key column", spec.KeyColumns); err != nil {
				return activities.TableSpec{}, usage("%v", err)
			}
		}
	}
	if f.source != "" && f.sourceTable == "" {
		return activities.TableSpec{}, usage("--source needs --source-table schema.table")
	}
	if f.key != "" || f.definition == "" {
		spec.KeyColumns = splitKey(f.key)
		if err := names.CheckColumns("--key: key column", spec.KeyColumns); err != nil {
			return activities.TableSpec{}, usage("%v", err)
		}
	}
	if err := names.CheckColumns("--history-columns: history column", spec.HistoryColumns); err != nil {
		return activities.TableSpec{}, usage("%v", err)
	}
	return spec, nil
}

func (a *app) startCmd() *cobra.Command {
	var f specFlags
	var schedules bool
	var bronzeRetention daysFlag
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "start TOPIC",
		Short: "Start a table's pipeline from a Debezium topic",
		Long: `start begins the table workflow that applies TOPIC's Debezium change events to
the Iceberg tables <table>_bronze and <table>. A workflow started on existing
tables continues from the offsets they record. Exit code 1 if it is already running.`,
		Example: "  starter start dbserver1.inventory.customers --key id\n  starter start shop.public.orders --table shop.orders --key order_id --batch-size 10000",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			spec, err := f.spec(args[0])
			if err != nil {
				return err
			}
			if err := retention.Check(time.Duration(bronzeRetention)); err != nil {
				return usage("--bronze-retention: %v", err)
			}
			if bronzeRetention != 0 && !schedules {
				return usage("--bronze-retention is run by the expire schedule on bronze: it needs --schedules (or set it later with starter schedule %s --expire-every 24h --bronze-retention D)", spec.Table)
			}
			if err := a.checkKeyColumns(cmd.Context(), spec); err != nil {
				return err
			}
			if err := a.checkDataCollection(cmd.Context(), spec); err != nil {
				return err
			}
			c, err := a.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			run, err := startTable(cmd.Context(), c, spec)
			if err != nil {
				return err
			}
			res := startedJSON{Table: spec.Table, Topic: spec.Topic, WorkflowID: run.GetID(), RunID: run.GetRunID(), Schedules: []string{}}
			if !asJSON {
				fmt.Fprintf(cmd.OutOrStdout(), "started %s (workflow %s, run %s) reading %s\n", spec.Table, run.GetID(), run.GetRunID(), spec.Topic)
			}
			a.warnNoWorker(cmd.Context(), cmd.ErrOrStderr(), c, "the table starts when one runs")
			if schedules {
				ids, err := createDefaultSchedules(cmd.Context(), c.ScheduleClient(), spec, time.Duration(bronzeRetention))
				res.Schedules = append(res.Schedules, ids...)
				for _, id := range ids {
					if !asJSON {
						fmt.Fprintf(cmd.OutOrStdout(), "created schedule %s\n", id)
					}
				}
				if err != nil {
					if asJSON {
						_ = writeJSON(cmd.OutOrStdout(), res)
					}
					return fmt.Errorf("the table runs, but its maintenance schedules: %w (create them with `starter schedule %s`)", err, spec.Table)
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			return nil
		},
	}
	out.bind(cmd)
	f.bind(cmd, payload.TableSpec{}.Defaults())
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "unknown flag: --topic") {
			return fmt.Errorf("%w (the topic is start's argument: starter start TOPIC --table NS.TABLE --key COL)", err)
		}
		return err
	})
	cmd.Flags().Var(&bronzeRetention, "bronze-retention", "drop bronze and quarantine day partitions ingested longer ago than this, daily with snapshot expiry (e.g. 30d; at least 1d; 0 keeps them for ever); late-key rebuilds and validation then reach back only this far (docs/retention.md)")
	cmd.Flags().BoolVar(&schedules, "schedules", true, "create the table's maintenance schedules (compaction every hour, snapshot expiry and tombstone purge after 30 days every day) unless they exist; --schedules=false: none (see `schedule`)")
	return cmd
}

// startedJSON is what start prints with --output json (docs/operating.md):
// the table, its topic, the workflow id and run id, and the ids of the
// maintenance schedules it created (empty with --schedules=false or when
// they existed).
type startedJSON struct {
	Table      string   `json:"table"`
	Topic      string   `json:"topic"`
	WorkflowID string   `json:"workflow_id"`
	RunID      string   `json:"run_id"`
	Schedules  []string `json:"schedules_created"`
}

// startTable starts the table workflow; the memo carries the spec and the
// search attributes name the table and topic.
func startTable(ctx context.Context, c client.Client, spec activities.TableSpec) (client.WorkflowRun, error) {
	if err := names.CheckTable(spec.Table); err != nil {
		return nil, usage("%v", err)
	}
	if err := names.CheckColumns("key column", spec.KeyColumns); err != nil {
		return nil, usage("%v", err)
	}
	if err := names.CheckColumns("history column", spec.HistoryColumns); err != nil {
		return nil, usage("%v", err)
	}
	opts := client.StartWorkflowOptions{
		ID:                                       workflows.WorkflowID(spec.Table),
		TaskQueue:                                activities.TaskQueue,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		Memo:                                     map[string]any{"spec": spec},
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword("LakemirrorTable").ValueSet(spec.Table),
			temporal.NewSearchAttributeKeyKeyword("LakemirrorTopic").ValueSet(spec.Topic)),
		StaticSummary: fmt.Sprintf("%s ← %s", spec.Table, spec.Topic),
		StaticDetails: staticDetails(spec),
	}
	if err := startGroup(ctx, c, spec); err != nil {
		return nil, err
	}
	run, err := c.ExecuteWorkflow(ctx, opts, workflows.TableWorkflowName, workflows.TableInput{Spec: spec})
	if err != nil {
		if _, ok := err.(*serviceerror.WorkflowExecutionAlreadyStarted); ok {
			return nil, fmt.Errorf("the pipeline of %s is already running (workflow %s)", spec.Table, opts.ID)
		}
		return nil, fmt.Errorf("start %s: %w", spec.Table, err)
	}
	return run, nil
}

// startGroup registers a grouped table with its group's workflow
// (workflows.GroupWorkflow, lakemirror-group-<group>), starting the
// workflow when it does not run (SignalWithStart: one call either way),
// before the table's own workflow starts, so that the group holds its
// cut for the table from the start. A table without a group: nothing.
func startGroup(ctx context.Context, c client.Client, spec activities.TableSpec) error {
	if spec.Group == "" {
		return nil
	}
	opts := client.StartWorkflowOptions{ID: workflows.GroupWorkflowID(spec.Group), TaskQueue: activities.TaskQueue,
		StaticSummary: "source group " + spec.Group}
	_, err := c.SignalWithStartWorkflow(ctx, opts.ID, workflows.SignalGroupRegister, workflows.GroupMemberOf(spec), opts,
		workflows.GroupWorkflowName, workflows.GroupInput{Group: spec.Group, TransactionTopic: spec.TransactionTopic, CutEvery: spec.CutEvery})
	if err != nil {
		return fmt.Errorf("start %s: register with group %s: %w", spec.Table, spec.Group, err)
	}
	return nil
}

// staticDetails is the table workflow's static details in the Web UI
// (Markdown, fixed at start): what the pipeline mirrors and where its live
// state is. The settings in effect are in the current details, which the
// workflow keeps current (workflows/details.go); these do not change.
func staticDetails(spec activities.TableSpec) string {
	key := "taken from the Kafka record key"
	if len(spec.KeyColumns) > 0 {
		key = "`" + strings.Join(spec.KeyColumns, ", ") + "`"
	}
	return fmt.Sprintf("Mirrors the Debezium change events of Kafka topic `%s` into the Iceberg tables of `%s` (%s); primary key %s.\n\n"+
		"Phase, offsets, lag, the last batches, the last error and the settings in effect are in **Current Details**; "+
		"from a shell: `starter status %s`.", spec.Topic, spec.Table, strings.Join(spec.Tables(), ", "), key, spec.Table)
}

// checkKeyColumns refuses (usage error, exit 2) a --key other than the
// key columns the table's existing mirror was created with, and a topic
// other than the one its tables were fed from, when this command can read
// the catalog; the worker checks again when the workflow starts (a
// catalog this command cannot reach, or the key taken from the Kafka
// record key, is left to that check).
func (a *app) checkKeyColumns(ctx context.Context, spec activities.TableSpec) error {
	name, err := lake.ParseTableName(spec.Table)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cat := a.catalogIfReachable(ctx)
	if cat == nil {
		return nil
	}
	tbl, err := lake.LoadTable(ctx, cat, name.Mirror())
	if err != nil || tbl == nil {
		return nil
	}
	if had := lakecat.TopicOf(tbl); had != "" && had != spec.Topic {
		return usage("%s holds the records of topic %s, not %s: its offsets are %s's; start it with topic %s, or mirror %s into a new table name",
			spec.Table, had, spec.Topic, had, had, spec.Topic)
	}
	if len(spec.KeyColumns) == 0 {
		return nil
	}
	have, err := lakecat.KeyColumnsOf(tbl)
	if err != nil || slices.Equal(have, spec.KeyColumns) {
		return nil
	}
	return usage("%s was created with key columns %s, not %s: start it with --key %s (a different key needs a new table)",
		spec.Table, strings.Join(have, ","), strings.Join(spec.KeyColumns, ","), strings.Join(have, ","))
}

// collectionProbe is how many records from the start of each partition
// checkDataCollection reads.
const collectionProbe = 20

// checkDataCollection refuses (usage error, exit 2) a grouped table whose
// topic's change events come from another data collection than the one
// its group matches it by (TableSpec.DataCollection: --source-table, else
// the topic's last two segments, which is wrong for SQL Server's and
// Db2's three-part names): the group's END events would name the events'
// collection, which no table of the group has, and its cuts would not
// wait for the table's transactions (docs/design.md "Source groups").
// It reads at most collectionProbe records from the start of each
// partition (schemas.SourceCollection); a topic it cannot check (Kafka
// not reachable from here, a missing or empty topic, Avro or flattened
// records) is left to the group's status, which lists the collections
// ENDs name that no table has.
func (a *app) checkDataCollection(ctx context.Context, spec activities.TableSpec) error {
	if spec.Group == "" || spec.TransactionTopic == "" { // per-position cuts match no names
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	kc, err := runner.NewKafka(a.settings)
	if err != nil {
		return nil
	}
	defer kc.Close()
	starts, err := kc.StartOffsets(ctx, spec.Topic)
	if err != nil {
		return nil
	}
	ends, err := kc.EndOffsets(ctx, spec.Topic)
	if err != nil {
		return nil
	}
	var ranges []kafka.Range
	for _, p := range slices.Sorted(maps.Keys(starts)) {
		if from, to := starts[p], ends[p]; to > from {
			ranges = append(ranges, kafka.Range{Partition: p, From: from, To: min(to, from+collectionProbe)})
		}
	}
	if len(ranges) == 0 {
		return nil
	}
	recs, err := kc.Fetch(ctx, spec.Topic, ranges)
	if err != nil {
		return nil
	}
	want := spec.DataCollection()
	for _, r := range recs {
		got, err := schemas.SourceCollection(r.Value)
		if err != nil || got == "" || got == want {
			continue
		}
		return usage("%s: the change events of topic %s come from data collection %q (partition %d offset %d), but group %s would match the table by %s: the group's transaction END events name %q, so its cuts would not wait for this table's transactions; start it with --source-table %s (in pipelines YAML: source_table: %s)",
			spec.Table, spec.Topic, got, r.Partition, r.Offset, spec.Group, spec.DataCollectionText(), got, got, got)
	}
	return nil
}

// catalogIfReachable opens the Iceberg catalog the settings name, or
// returns nil when this command cannot (a local catalog that does not
// exist here, a catalog it cannot reach): the checks and reports that use
// it are then left to the worker or skipped.
func (a *app) catalogIfReachable(ctx context.Context) catalog.Catalog {
	if a.settings.Catalog.LocalCatalogMissing() != "" {
		return nil
	}
	cat, err := lake.OpenCatalog(ctx, a.settings.Catalog)
	if err != nil {
		return nil
	}
	return cat
}

// layoutText is a layout as one line: "mirror partitioned by [fields],
// sorted by [...], compressed with zstd:3; history ...; bronze ...",
// tables without a layout left out.
func layoutText(t layout.Tables) string {
	var parts []string
	for _, x := range []struct {
		name string
		spec layout.Spec
	}{{"mirror", t.Mirror}, {"history", t.History}, {"bronze", t.BronzeSpec()}} {
		if x.spec.IsZero() {
			continue
		}
		var p []string
		if x.spec.HasFields() {
			p = append(p, "partitioned by "+orNoneList(x.spec.PartitionBy))
			if len(x.spec.SortBy) > 0 {
				p = append(p, "sorted by "+strings.Join(x.spec.SortBy, ", "))
			}
		}
		if x.spec.Compression != "" {
			p = append(p, "compressed with "+x.spec.Compression)
		}
		parts = append(parts, x.name+" "+strings.Join(p, ", "))
	}
	if len(parts) == 0 {
		return "unpartitioned"
	}
	return strings.Join(parts, "; ")
}

func orNoneList(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}
