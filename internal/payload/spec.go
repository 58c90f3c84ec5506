package payload

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/names"
)

// TableSpec is one source table's pipeline configuration. It is carried
// in the workflow input and memo.
type TableSpec struct {
	Table      string        `json:"table"`       // Iceberg namespace.table of the mirror
	Topic      string        `json:"topic"`       // Kafka topic with the table's Debezium change events
	KeyColumns []string      `json:"key_columns"` // primary-key columns; empty = taken from the Kafka record key
	StartFrom  string        `json:"start_from"`  // where a new pipeline starts reading: "earliest" (default) or "latest"
	MaxEvents  int           `json:"max_events"`  // batch bound in records (default 5000)
	MaxWait    time.Duration `json:"max_wait"`    // batch bound in time: how long to wait for MaxEvents (default 2s)
	// HistoryColumns are the columns whose change opens a new history
	// version; empty = all. Changes to other columns update the current
	// version in place.
	HistoryColumns []string `json:"history_columns,omitempty"`
	// HistoryCollapseTx folds the changes of one source transaction into
	// one history version.
	HistoryCollapseTx bool `json:"history_collapse_tx,omitempty"`
	// Source names the source database the table can be loaded from
	// directly (a name the worker maps to a DSN with -sources), and
	// SourceTable the table there as schema.table; empty = Debezium only.
	Source      string `json:"source,omitempty"`
	SourceTable string `json:"source_table,omitempty"`
	// SignalTopic is the Debezium connector's signal topic
	// (signal.kafka.topic) for re-snapshots through the connector.
	SignalTopic string `json:"signal_topic,omitempty"`
	// Columns declares the table's column types for events without a
	// schema envelope (a table definition, schemas.LoadTableDefinition),
	// so decimals and times are not guessed; nil = from the events.
	Columns []cdc.Column `json:"columns,omitempty"`
	// LoadChunk is the rows per chunk of a direct load, each chunk one
	// commit per table; 0 = LoadChunkRows's default.
	LoadChunk int `json:"load_chunk,omitempty"`
	// MaxBatchEvents is how large a batch may grow while the table is
	// behind (records): with more than two batches of MaxEvents waiting, a
	// batch takes half of what is waiting, up to MaxBatchEvents, so the
	// fixed cost of a batch (three Iceberg commits, the Temporal round
	// trips) is spread over more records until the lag is down; caught up,
	// batches are MaxEvents again. 0 (or below MaxEvents) = MaxEvents: no
	// growth.
	MaxBatchEvents int `json:"max_batch_events,omitempty"`
	// MaxQuarantine is how many records of one batch may go to the
	// quarantine table before the table blocks instead (default 100).
	MaxQuarantine int `json:"max_quarantine,omitempty"`
	// WithoutBronze: the table keeps no bronze table (no append-only copy
	// of every Kafka record). What that gives up is in the docs/operating.md ("Which
	// tables"): no audit copy to replay or inspect; after a worker lost its
	// local state, late changes of keys applied before are not woven into
	// their history (counted as unwoven); a re-snapshot cannot tell ghost
	// rows. Zero value = bronze kept, so specs recorded before the option
	// existed keep their tables.
	WithoutBronze bool `json:"without_bronze,omitempty"`
	// WithoutHistory: the table keeps no SCD type 2 history table (a
	// mirror-only table, or bronze + mirror). Late changes then need no
	// rebuild: the mirror's position guard alone keeps it right.
	WithoutHistory bool `json:"without_history,omitempty"`
	// Catalog is the identity of the Iceberg catalog the table lives in
	// (lake.CatalogConfig.Identity: type, URI and warehouse without
	// credentials, or the operator's --catalog-id), recorded by the
	// workflow from the first worker that recovers or plans it; every
	// activity of a worker with another catalog refuses the table
	// (ErrTypeCatalogMismatch). "" = not recorded yet (any worker).
	Catalog string `json:"catalog,omitempty"`
	// Layout is the partition fields, sort order and Parquet compression
	// of the mirror, history and bronze tables (internal/layout;
	// docs/configuration.md). Zero: unpartitioned, unsorted mirror and
	// history, bronze by ingestion day, each table's codec as its
	// properties say (zstd level 1 on tables lakemirror creates). A change
	// applies to the files written after it (partition evolution);
	// compaction rewrites older files of another partition spec, and
	// other files keep their codec.
	Layout layout.Tables `json:"layout,omitzero"`
	// DeleteFormat is how the mirror and history remove replaced rows
	// (internal/layout.DeleteFormat; docs/readers.md): "" or "position"
	// for Iceberg v2 position deletes, "dv" for Iceberg v3 deletion
	// vectors (the mirror and history are then created with
	// format-version 3). Fixed when the tables are created: a worker
	// finding a table of the other format stops the table
	// (ErrTypeBadSpec, lake.DeleteFormatError), and a settings update
	// cannot change it.
	DeleteFormat layout.DeleteFormat `json:"delete_format,omitempty"`
	// Comment is a free-text description of the table for people ("orders
	// from the shop database, owner: data-eng"): one line of at most
	// 1,000 characters; "" = none.
	Comment string `json:"comment,omitempty"`
	// Group is the source group the table belongs to: the tables of one
	// connector (one position space) whose consistent cuts a
	// GroupWorkflow (lakemirror-group-<group>) computes (docs/design.md,
	// "Consistent cuts across a source group"); a name of 1 to 64
	// characters of a-z, 0-9 and _ (GroupRule). "" = no group: the table
	// runs on its own and pays nothing for cuts.
	Group string `json:"group,omitempty"`
	// TransactionTopic is the group's Debezium transaction metadata topic
	// (provide.transaction.metadata=true: <topic.prefix>.transaction, a
	// BEGIN and an END record per source transaction); "" = none (the
	// group cuts per position). Needs Group.
	TransactionTopic string `json:"transaction_topic,omitempty"`
	// CutEvery is how often the group's workflow reads its transaction
	// topic and takes a cut (GroupInput.CutEvery), at least MinCutEvery;
	// 0 = a minute. Needs Group; the group's (PerGroup), given to the
	// group's workflow when the starter starts it.
	CutEvery time.Duration `json:"cut_every,omitempty"`
}

// MinCutEvery is the shortest cut interval a group takes (a cut freezes
// every table of the group for a moment).
const MinCutEvery = 10 * time.Second

// BatchBudget is the number of records the next batch may take when
// avail records are waiting beyond the table's position: MaxEvents, or
// while more than two such batches wait, half of what waits, up to
// MaxBatchEvents.
func (s TableSpec) BatchBudget(avail int64) int64 {
	budget := int64(s.MaxEvents)
	if int64(s.MaxBatchEvents) > budget && avail > 2*budget {
		budget = min(int64(s.MaxBatchEvents), avail/2)
	}
	return budget
}

// DataCollection is the table's data collection in the source as
// Debezium's transaction metadata names it (an END's
// data_collections[].data_collection, "schema.table"; a group's cut
// matches a table's events with it): SourceTable when set, else the
// topic's last two dot-separated segments (a Debezium topic
// <topic.prefix>.<schema>.<table>); "" when the topic has fewer.
func (s TableSpec) DataCollection() string {
	if s.SourceTable != "" {
		return s.SourceTable
	}
	segs := strings.Split(s.Topic, ".")
	if len(segs) < 2 || segs[len(segs)-2] == "" || segs[len(segs)-1] == "" {
		return ""
	}
	return strings.Join(segs[len(segs)-2:], ".")
}

// DataCollectionText is DataCollection for a message, quoted, with where
// it comes from: `"sales.orders" (--source-table)`, `"dbo.orders" (the
// topic's last two segments)`, or `nothing (the topic name has fewer
// than two segments)`.
func (s TableSpec) DataCollectionText() string {
	switch c := s.DataCollection(); {
	case c == "":
		return "nothing (the topic name has fewer than two segments)"
	case s.SourceTable == "":
		return fmt.Sprintf("%q (the topic's last two segments)", c)
	default:
		return fmt.Sprintf("%q (--source-table)", c)
	}
}

// Tables lists the tables the spec keeps, in commit order: some of
// "bronze", "mirror", "history" (the mirror always).
func (s TableSpec) Tables() []string {
	var out []string
	if !s.WithoutBronze {
		out = append(out, "bronze")
	}
	out = append(out, "mirror")
	if !s.WithoutHistory {
		out = append(out, "history")
	}
	return out
}

// Bounds of the batch settings.
const (
	MaxRecords   = 1_000_000        // batch_size, max_batch_size, max_quarantine: at most this many records
	MaxWaitLimit = 10 * time.Minute // max_wait: above 0, at most this
)

// Settings is the table of the table settings that have one home here:
// each one's name (the pipelines file's key, the starter flag with "-"
// for "_"), TableSpec field (by JSON name), default, rule and help. A
// new scalar setting is its TableSpec field, its entry here and, when a
// running table may change it (Live), its SettingsChange field; the
// starter's flags, the pipelines file, the settings update and
// Validate/Defaults then take it. The other fields of TableSpec (table,
// topic, key, layout, history and source options) have their own syntax
// and are checked where they are given.
var Settings = []Setting{
	{Name: "start_from", JSON: "start_from", Default: "earliest",
		Doc: "where a new pipeline starts reading the topic: earliest, or latest (the high watermarks at its first plan; partitions added later and a topic created later are read from their start)",
		check: func(s TableSpec) string {
			if s.StartFrom != "earliest" && s.StartFrom != "latest" {
				return fmt.Sprintf("%q: give earliest or latest", s.StartFrom)
			}
			return ""
		}},
	{Name: "batch_size", JSON: "max_events", Aliases: []string{"max_events"}, Default: 5000, Live: true,
		Doc: "maximum records per batch",
		check: func(s TableSpec) string {
			return recordsIn(s.MaxEvents, 1, "")
		}},
	{Name: "max_batch_size", JSON: "max_batch_events", Aliases: []string{"max_batch_events"}, Live: true,
		Doc: "how large a batch may grow while the table is more than two batches behind (half of what waits, up to this; 0 = no growth)",
		check: func(s TableSpec) string {
			return recordsIn(s.MaxBatchEvents, 0, " (0 = batches do not grow)")
		}},
	{Name: "max_wait", JSON: "max_wait", Default: 2 * time.Second, Live: true,
		Doc: "how long a batch waits to fill before it is applied",
		check: func(s TableSpec) string {
			if s.MaxWait <= 0 || s.MaxWait > MaxWaitLimit {
				return fmt.Sprintf("%s outside (0, %s]", FormatDuration(s.MaxWait), FormatDuration(MaxWaitLimit))
			}
			return ""
		}},
	{Name: "max_quarantine", JSON: "max_quarantine", Default: 100, Live: true,
		Doc: "records of one batch that may go to the quarantine table before the table blocks instead (raise it, then run starter retry, to lift a quarantine-limit block)",
		check: func(s TableSpec) string {
			return recordsIn(s.MaxQuarantine, 1, "")
		}},
	{Name: "comment", JSON: "comment", Live: true,
		Doc: "a description of the table for people (e.g. \"orders from the shop database, owner: data-eng\"), shown by status: one line of at most 1000 characters",
		check: func(s TableSpec) string {
			if !utf8.ValidString(s.Comment) {
				return "not valid UTF-8"
			}
			if n := utf8.RuneCountInString(s.Comment); n > MaxCommentLength {
				return fmt.Sprintf("%d characters, more than %d", n, MaxCommentLength)
			}
			for i, r := range []rune(s.Comment) {
				if unicode.IsControl(r) {
					return fmt.Sprintf("control character %U at character %d: give one line of text without tabs", r, i+1)
				}
			}
			return ""
		}},
	{Name: "group", JSON: "group",
		Doc: "the source group of the table: tables of one connector whose consistent cuts are computed together (" + GroupRule + "; empty = no group)",
		check: func(s TableSpec) string {
			if s.Group == "" {
				return ""
			}
			return groupWhy(s.Group)
		}},
	{Name: "transaction_topic", JSON: "transaction_topic", PerGroup: true,
		Doc: "the group's Debezium transaction metadata topic (provide.transaction.metadata: <topic.prefix>.transaction); needs --group; empty = the group cuts per position",
		check: func(s TableSpec) string {
			switch {
			case s.TransactionTopic == "":
				return ""
			case s.Group == "":
				return "needs a group (a transaction topic is a group's)"
			}
			if err := names.CheckTopic(s.TransactionTopic); err != nil {
				return err.Error()
			}
			return ""
		}},
	{Name: "cut_every", JSON: "cut_every", PerGroup: true,
		Doc: "how often the group reads its transaction topic and takes a consistent cut (at least 10s); needs --group; 0 = 1m",
		check: func(s TableSpec) string {
			switch {
			case s.CutEvery == 0:
				return ""
			case s.Group == "":
				return "needs a group (the cut interval is a group's)"
			case s.CutEvery < MinCutEvery:
				return fmt.Sprintf("%s is shorter than %s", FormatDuration(s.CutEvery), FormatDuration(MinCutEvery))
			}
			return ""
		}},
}

// GroupRule is the rule for a group name, as messages state it: the
// group names its workflow (lakemirror-group-<name>), so it follows a
// table name part's rule (names.CheckPart).
const GroupRule = "a group name is 1 to 64 characters of a-z, 0-9 and _, not starting with a digit and not a word SQL reserves"

// CheckGroup returns nil when name follows GroupRule, else a
// *SettingError of the setting "group" naming the first thing wrong.
func CheckGroup(name string) error {
	if why := groupWhy(name); why != "" {
		return &SettingError{Name: "group", Why: why}
	}
	return nil
}

// groupWhy is why name breaks GroupRule ("" when it does not): `"Shop"
// has "S" at byte 0 (upper case); a group name is ...`.
func groupWhy(name string) string {
	var bad *names.Error
	if err := names.CheckPart(name); errors.As(err, &bad) {
		return fmt.Sprintf("%q %s; %s", name, bad.Why, GroupRule)
	}
	return ""
}

// MaxCommentLength is the most characters a table's comment may have.
const MaxCommentLength = 1000

// recordsIn is why n records is outside lo..MaxRecords ("" when inside),
// with note after it.
func recordsIn(n, lo int, note string) string {
	if n < lo || n > MaxRecords {
		return fmt.Sprintf("%d outside %d..%d records%s", n, lo, MaxRecords, note)
	}
	return ""
}

// SettingsChange is a change of a running table's live settings (the
// Live entries of Settings): each field nil = unchanged, under the JSON
// name of its TableSpec field. workflows.SettingsRequest embeds it, so
// these are the settings update's JSON fields as they always were; Set,
// Changed, Apply and Validate (settings.go) reach the fields through the
// Settings table.
type SettingsChange struct {
	MaxEvents      *int           `json:"max_events,omitempty"`       // batch_size
	MaxWait        *time.Duration `json:"max_wait,omitempty"`         // max_wait
	MaxBatchEvents *int           `json:"max_batch_events,omitempty"` // max_batch_size; 0 = no growth
	MaxQuarantine  *int           `json:"max_quarantine,omitempty"`   // max_quarantine
	Comment        *string        `json:"comment,omitempty"`          // comment
}

// Direct load chunk defaults (rows): a chunk is read while the one before
// is written, so a load holds two. With bronze a chunk also holds the
// Debezium records rendered for it, so it stays smaller; without, larger
// chunks spread the commits' fixed cost (catalog round trips, metadata and
// manifest lists, which grow with the table's Iceberg snapshots) over more
// rows: 1 M rows into mirror and history load 160 k rows/s in chunks of
// 10,000 and 222 k in chunks of 50,000, at a peak of 417 and 638 MiB
// (docs/benchmarks.md, "Direct initial load from PostgreSQL").
const (
	DefaultLoadChunk              = 10_000
	DefaultLoadChunkWithoutBronze = 50_000
)

// LoadChunkRows is the rows per chunk of the table's direct loads:
// LoadChunk when set, else DefaultLoadChunkWithoutBronze for a table
// without bronze and DefaultLoadChunk for one with.
func (s TableSpec) LoadChunkRows() int {
	switch {
	case s.LoadChunk > 0:
		return s.LoadChunk
	case s.WithoutBronze:
		return DefaultLoadChunkWithoutBronze
	}
	return DefaultLoadChunk
}
