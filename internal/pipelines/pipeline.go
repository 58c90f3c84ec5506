package pipelines

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/names"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Bounds of the batch settings (payload.MaxRecords, payload.MaxWaitLimit:
// payload.Settings' rules, which the settings update applies too).
const (
	MaxRecords   = payload.MaxRecords   // batch_size, max_batch_size, max_quarantine: at most this many records
	MaxWaitLimit = payload.MaxWaitLimit // max_wait: above 0, at most this
)

// Maintenance is a table's maintenance schedules (Temporal Schedules
// lakemirror-<job>-<table>) and their jobs' parameters.
type Maintenance struct {
	CompactEvery   time.Duration // compaction interval; 0 = no schedule
	ExpireEvery    time.Duration // snapshot expiry interval; 0 = no schedule
	PurgeEvery     time.Duration // tombstone purge interval; 0 = no schedule
	Retention      time.Duration // purge: soft deletes older than this are removed
	RetentionFloor time.Duration // purge: a retention below this is refused
	TargetFileSize int64         // compact: target data file size, bytes
	RetainLast     int           // expire: snapshots kept at least
	OlderThan      time.Duration // expire: snapshots younger than this are kept
	CleanOrphans   bool          // expire: also delete unreferenced files older than 3 days
	// BronzeRetention, expire: drop bronze and quarantine day partitions
	// ingested longer ago than this first (retention.Check: 0 = keep for
	// ever, else at least a day).
	BronzeRetention time.Duration
}

// DefaultMaintenance is what `starter start` schedules: compaction every
// hour, snapshot expiry and a 30-day tombstone purge every day, with the
// maintenance jobs' default parameters (a starter test keeps them equal).
var DefaultMaintenance = Maintenance{CompactEvery: time.Hour, ExpireEvery: 24 * time.Hour, PurgeEvery: 24 * time.Hour,
	Retention: 30 * 24 * time.Hour, RetentionFloor: 7 * 24 * time.Hour, TargetFileSize: 128 << 20, RetainLast: 10, OlderThan: 5 * 24 * time.Hour}

// Defaults are the values of the settings neither a pipeline nor the
// defaults block gives: those of `starter start`'s flags.
var Defaults = Pipeline{Settings: payload.TableSpec{}.Defaults(), Bronze: true, History: true, Maintenance: DefaultMaintenance}

// Pipeline is one table's pipeline with every setting resolved: what
// `starter start TOPIC` with flags would run.
type Pipeline struct {
	Table string   // Iceberg namespace.table of the mirror
	Topic string   // the Debezium topic
	Key   []string // primary-key columns; empty = the fields of the Kafka record key
	// Settings holds the values of payload.Settings (start_from,
	// batch_size as MaxEvents, max_wait, ...; payload.TableSpec.SettingsOnly):
	// its other fields are zero.
	Settings          payload.TableSpec
	Bronze            bool     // keep <table>_bronze
	History           bool     // keep <table>_history
	HistoryColumns    []string // columns whose change opens a history version; empty = all
	HistoryCollapseTx bool     // one history version per source transaction
	Source            string   // source database for a direct initial load; "" = none
	SourceTable       string   // the table there (schema.table)
	SignalTopic       string   // the connector's signal topic, for incremental re-snapshots
	Definition        string   // table definition file (path resolved against the pipelines file); "" = none
	// Columns is the definition's declared columns in a canonical form
	// (set by the caller that reads Definition; compared as text).
	Columns     string
	Maintenance Maintenance
	Layout      layout.Tables // partition fields and sort orders of mirror, history and bronze
	// DeleteFormat is how the mirror and history remove replaced rows,
	// fixed when they are created: zero for position deletes (the
	// default), layout.DeleteVector for deletion vectors.
	DeleteFormat layout.DeleteFormat
	Origin       Origin // where the file declares it; zero for an observed pipeline
}

// Origin is where a pipeline comes from in a file.
type Origin struct {
	File string
	Line int
	Path string // "pipelines[3]"
	// Pattern is the topic_regex or topic_glob item that matched the
	// topic ("" for a topic item).
	Pattern string
}

// String is "FILE:LINE (PATH)".
func (o Origin) String() string {
	if o.File == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d (%s)", o.File, o.Line, o.Path)
}

// DeriveTable is the table name a pipeline gets when it names none: the
// topic's last dot-separated segment in namespace (a Debezium topic
// <server>.<schema>.<table> becomes <namespace>.<table>), and without a
// namespace, in the topic's second-to-last segment (<schema>.<table>, as
// `starter start` names it). It returns "" when the topic has no segment
// to take the namespace from.
func DeriveTable(topic, namespace string) string {
	segs := strings.Split(topic, ".")
	name := segs[len(segs)-1]
	if namespace == "" {
		if len(segs) < 2 || segs[len(segs)-2] == "" {
			return ""
		}
		namespace = segs[len(segs)-2]
	}
	if name == "" {
		return ""
	}
	return namespace + "." + name
}

// Resolve turns the file into one pipeline per table, in file order (a
// pattern's matches in topic order). topics is the broker's topic list and
// known says whether there is one: without it a pattern is an error, with
// it a pattern matching nothing and a topic the broker lacks are warnings.
// A topic named by a topic item is not taken by a pattern; a topic two
// patterns match is an error, as are two pipelines of one table (table
// names compare case-insensitively: they name one workflow). It returns
// the pipelines, the warnings, and every error as Problems.
func (f *File) Resolve(topics []string, known bool) ([]Pipeline, Problems, error) {
	var errs, warns Problems
	at := func(path string, fallback int) int {
		if l := f.idx.line(path); l > 0 {
			return l
		}
		return fallback
	}
	explicit := map[string]bool{}
	for _, e := range f.entries {
		if e.raw.Topic != nil {
			explicit[*e.raw.Topic] = true
		}
	}
	have := map[string]bool{}
	for _, t := range topics {
		have[t] = true
	}
	sorted := slices.Sorted(slices.Values(topics))
	claimed := map[string]*entry{}
	var out []Pipeline
	for i := range f.entries {
		e := &f.entries[i]
		var matched []string
		switch {
		case e.raw.Topic != nil:
			matched = []string{*e.raw.Topic}
			if known && !have[*e.raw.Topic] {
				warns = append(warns, Problem{File: f.Name, Line: at(e.path+".topic", e.line), Path: e.path + ".topic", Warning: true,
					Msg: fmt.Sprintf("topic %s does not exist (yet): its table waits for it", *e.raw.Topic)})
			}
		case !known:
			errs = append(errs, Problem{File: f.Name, Line: at(e.path+"."+e.pattern, e.line), Path: e.path + "." + e.pattern,
				Msg: "a topic pattern needs the broker's topic list, which could not be read"})
			continue
		default:
			hit, own := false, false
			for _, t := range sorted {
				if !e.matches(t) {
					continue
				}
				hit = true
				if explicit[t] {
					own = true
					continue
				}
				if other := claimed[t]; other != nil {
					errs = append(errs, Problem{File: f.Name, Line: at(e.path+"."+e.pattern, e.line), Path: e.path + "." + e.pattern,
						Msg: fmt.Sprintf("topic %s is also matched by %s (line %d): exclude it from one", t, other.path, at(other.path+"."+other.pattern, other.line))})
					continue
				}
				claimed[t] = e
				matched = append(matched, t)
			}
			pat := e.glob
			if e.re != nil {
				pat = *e.raw.TopicRegex
			}
			switch {
			case !hit:
				warns = append(warns, Problem{File: f.Name, Line: at(e.path+"."+e.pattern, e.line), Path: e.path + "." + e.pattern, Warning: true,
					Msg: fmt.Sprintf("%q matches no topic", pat)})
			case len(matched) == 0 && own:
				warns = append(warns, Problem{File: f.Name, Line: at(e.path+"."+e.pattern, e.line), Path: e.path + "." + e.pattern, Warning: true,
					Msg: fmt.Sprintf("%q matches only topics that have their own pipeline", pat)})
			}
		}
		for _, topic := range matched {
			p, prob := f.pipeline(e, topic)
			if prob != nil {
				errs = append(errs, *prob)
				continue
			}
			out = append(out, p)
		}
	}
	seen := map[string]Pipeline{}
	var kept []Pipeline
	for _, p := range out {
		k := strings.ToLower(p.Table)
		if first, dup := seen[k]; dup {
			path := p.Origin.Path
			if f.idx.line(path+".table") > 0 {
				path += ".table"
			}
			what := "table " + p.Table
			if p.Origin.Pattern != "" {
				what = fmt.Sprintf("topic %s becomes table %s, which", p.Topic, p.Table)
			}
			errs = append(errs, Problem{File: f.Name, Line: at(path, p.Origin.Line), Path: path,
				Msg: fmt.Sprintf("%s is also the table of %s (line %d, topic %s): one table has one pipeline", what, first.Origin.Path, first.Origin.Line, first.Topic)})
			continue
		}
		seen[k] = p
		kept = append(kept, p)
		if b := p.Settings; b.MaxBatchEvents > 0 && b.MaxBatchEvents < b.MaxEvents {
			path := p.Origin.Path + ".max_batch_size"
			if f.idx.line(path) == 0 {
				path = "defaults.max_batch_size"
			}
			warns = append(warns, Problem{File: f.Name, Line: at(path, p.Origin.Line), Path: path, Warning: true,
				Msg: fmt.Sprintf("%s: max_batch_size %d is below batch_size %d: its batches do not grow", p.Table, p.Settings.MaxBatchEvents, p.Settings.MaxEvents)})
		}
	}
	sortProblems(errs)
	sortProblems(warns)
	if len(errs) > 0 {
		return nil, warns, errs
	}
	return kept, warns, nil
}

// pipeline resolves entry e for topic: its own settings, else the
// defaults block's, else Defaults.
func (f *File) pipeline(e *entry, topic string) (Pipeline, *Problem) {
	d, r := f.defaults, e.raw
	p := Defaults
	p.Topic = topic
	p.Origin = Origin{File: f.Name, Line: e.line, Path: e.path}
	if e.pattern != "" {
		p.Origin.Pattern = e.pattern
	}
	str := func(v, def *string, dst *string) {
		if v != nil {
			*dst = *v
		} else if def != nil {
			*dst = *def
		}
	}
	flag := func(v, def *bool, dst *bool) {
		if v != nil {
			*dst = *v
		} else if def != nil {
			*dst = *def
		}
	}
	list := func(v, def *nameList) []string {
		if v != nil {
			return slices.Clone([]string(*v))
		}
		if def != nil {
			return slices.Clone([]string(*def))
		}
		return nil
	}
	p.Key = list(r.Key, d.Key)
	for _, other := range []map[string]yaml.Node{d.Other, r.Other} {
		for key, n := range other {
			if st := settingOf(key); st != nil && !st.PerGroup {
				if v, _ := settingValue(st, &n); v != nil { // checked by Parse
					st.Set(&p.Settings, v)
				}
			}
		}
	}
	if g := f.groups[p.Settings.Group]; p.Settings.Group != "" && g != nil && g.TransactionTopic != nil {
		p.Settings.TransactionTopic = *g.TransactionTopic
	}
	if g := f.groups[p.Settings.Group]; p.Settings.Group != "" && g != nil && g.CutEvery != nil {
		p.Settings.CutEvery, _ = groupCutEvery(p.Settings.Group, *g.CutEvery) // checked by checkGroups
	}
	flag(r.Bronze, d.Bronze, &p.Bronze)
	flag(r.History, d.History, &p.History)
	p.HistoryColumns = list(r.HistoryColumns, d.HistoryColumns)
	flag(r.HistoryCollapseTx, d.HistoryCollapseTx, &p.HistoryCollapseTx)
	str(r.Source, d.Source, &p.Source)
	str(r.SignalTopic, d.SignalTopic, &p.SignalTopic)
	p.Maintenance = resolveMaintenance(r.Maintenance, d.Maintenance)
	var defLayout layout.Tables
	if d.Layout != nil {
		defLayout = d.Layout.tables(layout.Tables{})
	}
	p.Layout = r.Layout.tables(defLayout)
	var deletes string
	str(r.DeleteFormat, d.DeleteFormat, &deletes)
	if f, _ := layout.ParseDeleteFormat(deletes); f != layout.DeletePosition { // checked by Parse
		p.DeleteFormat = f
	}
	if len(p.Key) == 0 {
		p.Key = nil
	}
	if len(p.HistoryColumns) == 0 {
		p.HistoryColumns = nil
	}

	var ns string
	str(r.Namespace, d.Namespace, &ns)
	switch {
	case r.Table != nil && strings.Contains(*r.Table, "."):
		p.Table = *r.Table
	case r.Table != nil:
		if ns == "" {
			ns = DeriveTable(topic, "")
			if ns != "" {
				ns = ns[:strings.LastIndexByte(ns, '.')]
			}
		}
		if ns == "" {
			return p, &Problem{File: f.Name, Line: f.idx.line(e.path + ".table"), Path: e.path + ".table",
				Msg: fmt.Sprintf("%q names no namespace and topic %s has none to take: give namespace or table: <namespace>.%s", *r.Table, topic, *r.Table)}
		}
		p.Table = ns + "." + *r.Table
	default:
		p.Table = DeriveTable(topic, ns)
		if p.Table == "" {
			path := e.path + ".topic"
			if e.pattern != "" {
				path = e.path + "." + e.pattern
			}
			return p, &Problem{File: f.Name, Line: f.idx.line(path), Path: path,
				Msg: fmt.Sprintf("topic %s has no <namespace>.<table> segments to name its table: give namespace (or table)", topic)}
		}
	}
	var bad *names.Error
	if errors.As(names.CheckTable(p.Table), &bad) {
		// a name (or its namespace) taken from the topic; a table given in
		// full was checked by Parse
		path := e.path + ".topic"
		if e.pattern != "" {
			path = e.path + "." + e.pattern
		}
		if r.Table != nil {
			path = e.path + ".table"
		}
		return p, &Problem{File: f.Name, Line: f.idx.line(path), Path: path,
			Msg: fmt.Sprintf("topic %s makes the table name %q, which %s: give table (and namespace) in its own pipeline; %s", topic, p.Table, bad.Why, names.TableRule)}
	}
	if r.SourceTable != nil {
		p.SourceTable = *r.SourceTable
	} else if p.Source != "" {
		segs := strings.Split(topic, ".")
		if len(segs) < 2 {
			path := e.path + ".source"
			if f.idx.line(path) == 0 {
				path = "defaults.source"
			}
			return p, &Problem{File: f.Name, Line: f.idx.line(path), Path: path,
				Msg: fmt.Sprintf("topic %s has no <schema>.<table> segments to name the source table: give source_table", topic)}
		}
		p.SourceTable = strings.Join(segs[len(segs)-2:], ".")
	}
	if r.Definition != nil {
		p.Definition = *r.Definition
		if !filepath.IsAbs(p.Definition) {
			p.Definition = filepath.Join(f.dir, p.Definition)
		}
	}
	return p, nil
}

// resolveMaintenance takes each maintenance field from the pipeline's
// block, else the defaults', else DefaultMaintenance (values were checked
// by Parse).
func resolveMaintenance(own, def *rawMaintenance) Maintenance {
	m := DefaultMaintenance
	for _, b := range []*rawMaintenance{def, own} {
		if b == nil {
			continue
		}
		dur := func(s *string, interval bool, dst *time.Duration) {
			if s != nil {
				*dst, _ = parseInterval(*s, interval)
			}
		}
		dur(b.CompactEvery, true, &m.CompactEvery)
		dur(b.ExpireEvery, true, &m.ExpireEvery)
		dur(b.PurgeEvery, true, &m.PurgeEvery)
		dur(b.Retention, false, &m.Retention)
		dur(b.RetentionFloor, false, &m.RetentionFloor)
		dur(b.OlderThan, false, &m.OlderThan)
		dur(b.BronzeRetention, false, &m.BronzeRetention)
		if b.TargetFileSize != nil {
			m.TargetFileSize = *b.TargetFileSize
		}
		if b.RetainLast != nil {
			m.RetainLast = *b.RetainLast
		}
		if b.CleanOrphans != nil {
			m.CleanOrphans = *b.CleanOrphans
		}
	}
	return m
}
