package pipelines

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/retention"
	"gopkg.in/yaml.v3"

	"github.com/lakemirror/lakemirror/internal/names"
)

// The raw shapes of the file, decoded with yaml.v3's KnownFields so that a
// misspelt field is an error. Pointers tell a field left out from one set
// to its zero value (a pipeline's value overrides the defaults' only when
// it is given).

type rawFile struct {
	Version   *int         `yaml:"version"`
	Defaults  *rawSettings `yaml:"defaults"`
	Pipelines []rawEntry   `yaml:"pipelines"`
	// Groups declares the source groups the pipelines name (group: NAME),
	// by name, with the settings of payload.Settings that are a group's
	// (PerGroup: transaction_topic, cut_every).
	Groups map[string]*rawGroup `yaml:"groups"`
}

// rawGroup is one entry of groups: a source group's settings (a null
// entry declares a group without them).
type rawGroup struct {
	TransactionTopic *string `yaml:"transaction_topic"`
	CutEvery         *string `yaml:"cut_every"`
}

// rawSettings are the fields a defaults block and a pipeline share.
type rawSettings struct {
	Namespace         *string         `yaml:"namespace"`
	Key               *nameList       `yaml:"key"`
	Bronze            *bool           `yaml:"bronze"`
	History           *bool           `yaml:"history"`
	HistoryColumns    *nameList       `yaml:"history_columns"`
	HistoryCollapseTx *bool           `yaml:"history_collapse_tx"`
	Source            *string         `yaml:"source"`
	SignalTopic       *string         `yaml:"signal_topic"`
	Maintenance       *rawMaintenance `yaml:"maintenance"`
	Layout            *rawLayout      `yaml:"layout"`
	DeleteFormat      *string         `yaml:"delete_format"`
	// Other holds the keys none of the fields above takes: the settings
	// of payload.Settings (batch_size, max_wait, ...; checkSettings reads
	// them through the table) and misspelt keys (reported there). In a
	// pipeline they are the entry's (rawEntry.Other).
	Other map[string]yaml.Node `yaml:",inline"`
}

// rawLayout is the layout block: each table's partition_by and sort_by
// lists and compression (internal/layout's syntax).
type rawLayout struct {
	Mirror  *rawTableLayout `yaml:"mirror"`
	History *rawTableLayout `yaml:"history"`
	Bronze  *rawTableLayout `yaml:"bronze"`
}

// rawTableLayout is one table's layout block; a field left out (nil)
// takes the defaults block's.
type rawTableLayout struct {
	PartitionBy *[]string `yaml:"partition_by"`
	SortBy      *[]string `yaml:"sort_by"`
	Compression *string   `yaml:"compression"`
}

// tables is the layout the block gives, each table's field by field:
// the block's value where it gives one (an empty list too), else def's.
func (r *rawLayout) tables(def layout.Tables) layout.Tables {
	if r == nil {
		return def
	}
	out := def
	for _, x := range []struct {
		raw *rawTableLayout
		dst *layout.Spec
	}{{r.Mirror, &out.Mirror}, {r.History, &out.History}, {r.Bronze, &out.Bronze}} {
		if x.raw == nil {
			continue
		}
		if x.raw.PartitionBy != nil {
			x.dst.PartitionBy = *x.raw.PartitionBy
		}
		if x.raw.SortBy != nil {
			x.dst.SortBy = *x.raw.SortBy
		}
		if x.raw.Compression != nil {
			x.dst.Compression = *x.raw.Compression
		}
	}
	return out.Normalize()
}

// rawEntry is one item of pipelines.
type rawEntry struct {
	rawSettings `yaml:",inline"`
	Topic       *string   `yaml:"topic"`
	TopicRegex  *string   `yaml:"topic_regex"`
	TopicGlob   *string   `yaml:"topic_glob"`
	Exclude     *nameList `yaml:"exclude"`
	Table       *string   `yaml:"table"`
	SourceTable *string   `yaml:"source_table"`
	Definition  *string   `yaml:"definition"`
	// EntryOther is rawSettings.Other of a pipeline (yaml.v3 fills the
	// inline map of the outer struct only); Parse moves it there.
	EntryOther map[string]yaml.Node `yaml:",inline"`
}

type rawMaintenance struct {
	CompactEvery   *string `yaml:"compact_every"`
	ExpireEvery    *string `yaml:"expire_every"`
	PurgeEvery     *string `yaml:"purge_every"`
	Retention      *string `yaml:"retention"`
	RetentionFloor *string `yaml:"retention_floor"`
	TargetFileSize *int64  `yaml:"target_file_size"`
	RetainLast     *int    `yaml:"retain_last"`
	OlderThan      *string `yaml:"older_than"`
	CleanOrphans   *bool   `yaml:"clean_orphans"`
	// BronzeRetention: the expire job's bronze retention ("30d"; 0 keeps bronze)
	BronzeRetention *string `yaml:"bronze_retention"`
}

// entryOnly are the fields a pipeline has and a defaults block has not.
var entryOnly = func() map[string]bool {
	out := map[string]bool{}
	for _, f := range entryKeys() {
		out[f] = true
	}
	return out
}()

// nameList is a list of names written as a YAML list or as one
// comma-separated string ("id" or "tenant_id,id").
type nameList []string

// UnmarshalYAML takes a scalar (split at commas, blanks trimmed) or a list
// of scalars.
func (l *nameList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = nameList{}
		if n.Tag == "!!null" {
			return nil
		}
		for _, s := range strings.Split(n.Value, ",") {
			*l = append(*l, strings.TrimSpace(s))
		}
		return nil
	case yaml.SequenceNode:
		*l = nameList{}
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: col %d: a list item is not a name", item.Line, item.Column)}}
			}
			*l = append(*l, strings.TrimSpace(item.Value))
		}
		return nil
	}
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: col %d: want a name, a comma-separated string of names or a list of names", n.Line, n.Column)}}
}

// File is a parsed, checked pipelines file. Resolve turns it into
// pipelines.
type File struct {
	Name      string // as given to Parse
	dir       string // definition paths are relative to it
	defaults  rawSettings
	groups    map[string]*rawGroup // groups: by name; an entry may be nil
	entries   []entry
	idx       *nodeIndex
	damaged   map[int]bool    // lines with a decoding problem
	undecoded map[string]bool // paths with a decoding problem: not checked again
}

// entry is a checked pipeline item.
type entry struct {
	raw     rawEntry
	path    string // "pipelines[3]"
	line    int
	pattern string         // "topic_regex" or "topic_glob" for a pattern, "" for a topic
	re      *regexp.Regexp // topic_regex, anchored
	glob    string
	exclude []func(string) bool
}

// matches reports whether a pattern entry takes topic.
func (e *entry) matches(topic string) bool {
	if strings.HasPrefix(topic, "__") { // Kafka's internal topics
		return false
	}
	var ok bool
	if e.re != nil {
		ok = e.re.MatchString(topic)
	} else {
		ok, _ = path.Match(e.glob, topic)
	}
	if !ok {
		return false
	}
	for _, ex := range e.exclude {
		if ex(topic) {
			return false
		}
	}
	return true
}

// HasPatterns reports whether any pipeline is a topic pattern (Resolve
// then needs the broker's topic list).
func (f *File) HasPatterns() bool {
	for _, e := range f.entries {
		if e.pattern != "" {
			return true
		}
	}
	return false
}

// Parse reads a pipelines file: name is used in messages and to resolve
// definition paths (relative to name's directory), data is its content.
// It checks the whole file without contacting anything and returns every
// problem it finds as Problems (the error), each with its line and YAML
// path: YAML syntax, unknown fields, wrong types, bad durations, names and
// bounds, and conflicting settings. Checks that need the broker's topics
// (patterns, duplicate tables) are Resolve's.
func Parse(name string, data []byte) (*File, error) {
	f := &File{Name: name, dir: filepath.Dir(name), damaged: map[int]bool{}, undecoded: map[string]bool{}}
	var ps Problems
	add := func(line int, path, format string, args ...any) {
		ps = append(ps, Problem{File: name, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		line, msg := splitYAMLError(err)
		add(line, "", "%s", msg)
		return nil, ps
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		add(0, "", "empty file: give pipelines (see docs/pipelines.md)")
		return nil, ps
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		add(doc.Line, "", "the file must be a mapping with defaults and pipelines")
		return nil, ps
	}
	f.idx = indexNodes(doc)

	var raw rawFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			line, msg := splitYAMLError(err)
			add(line, "", "%s", msg)
			return nil, ps
		}
		for _, e := range te.Errors {
			p := f.idx.explain(e)
			p.File = name
			ps = append(ps, p)
			f.damaged[p.Line], f.undecoded[p.Path] = true, true
		}
	}
	var more yaml.Node
	if err := dec.Decode(&more); err != io.EOF {
		add(more.Line, "", "more than one YAML document: put every pipeline in one")
	}

	if raw.Version != nil && *raw.Version != 1 {
		add(f.idx.line("version"), "version", "unknown version %d: this starter reads version 1", *raw.Version)
	}
	if raw.Defaults != nil {
		f.defaults = *raw.Defaults
		f.checkSettings(&ps, "defaults", f.defaults)
	}
	f.groups = raw.Groups
	f.checkGroups(&ps)
	if len(raw.Pipelines) == 0 && f.idx.line("pipelines") == 0 {
		add(0, "", "no pipelines: list them under pipelines")
	} else if len(raw.Pipelines) == 0 && len(ps) == 0 {
		add(f.idx.line("pipelines"), "pipelines", "empty: list at least one pipeline (to stop every pipeline, use starter drop)")
	}
	// yaml.v3 leaves out the items it cannot decode at all (not a
	// mapping, a key given twice); put them back as empty, hurt entries
	// so that indexes match the file's
	if seq := f.idx.value["pipelines"]; seq != nil && seq.Kind == yaml.SequenceNode {
		aligned := make([]rawEntry, len(seq.Content))
		hurt := make([]bool, len(seq.Content))
		j := 0
		for i, n := range seq.Content {
			if decodes(n) && j < len(raw.Pipelines) {
				aligned[i] = raw.Pipelines[j]
				j++
			} else {
				hurt[i] = true
			}
		}
		items := aligned
		starts := make([]int, len(items)+1)
		for i := range items {
			starts[i] = seq.Content[i].Line
		}
		starts[len(items)] = 1 << 30
		// an entry whose lines had a decoding problem may be partly
		// decoded: it is not told that it lacks a topic
		for l := range f.damaged {
			for i := range items {
				hurt[i] = hurt[i] || (l >= starts[i] && l < starts[i+1])
			}
		}
		for i, r := range items {
			r.Other, r.EntryOther = r.EntryOther, nil
			e := entry{raw: r, path: fmt.Sprintf("pipelines[%d]", i), line: starts[i]}
			f.checkEntry(&ps, &e, hurt[i])
			f.entries = append(f.entries, e)
		}
	}
	if len(ps) > 0 {
		sortProblems(ps)
		return nil, ps
	}
	return f, nil
}

// checkGroups checks the groups block: each name (payload.GroupRule) and
// transaction topic (names.CheckTopic).
func (f *File) checkGroups(ps *Problems) {
	for _, name := range slices.Sorted(maps.Keys(f.groups)) {
		at := "groups." + name
		if err := payload.CheckGroup(name); err != nil {
			f.report(ps, Problem{File: f.Name, Line: f.idx.line(at), Path: at, Msg: err.Error()})
		}
		if g := f.groups[name]; g != nil && g.TransactionTopic != nil {
			p := at + ".transaction_topic"
			if err := names.CheckTopic(*g.TransactionTopic); err != nil {
				f.report(ps, Problem{File: f.Name, Line: f.idx.line(p), Path: p, Msg: err.Error()})
			}
		}
		if g := f.groups[name]; g != nil && g.CutEvery != nil {
			p := at + ".cut_every"
			if _, err := groupCutEvery(name, *g.CutEvery); err != nil {
				f.report(ps, Problem{File: f.Name, Line: f.idx.line(p), Path: p, Msg: err.Error()})
			}
		}
	}
}

// groupCutEvery reads a group's cut_every (payload.Settings: parsed and
// checked by its rule).
func groupCutEvery(group, text string) (time.Duration, error) {
	st := payload.LookupSetting("cut_every")
	v, err := st.Parse(text)
	if err != nil {
		return 0, err
	}
	spec := payload.TableSpec{Group: group}
	st.Set(&spec, v)
	if err := st.Check(spec); err != nil {
		return 0, err
	}
	return spec.CutEvery, nil
}

// groupOf is the group a pipeline's own keys (other) or else the
// defaults block give (an empty value is left to the defaults, as
// Resolve does), with the path of the key that gives it ("", "" when
// none does or the value is not a scalar).
func (f *File) groupOf(at string, other map[string]yaml.Node) (string, string) {
	for _, x := range []struct {
		at    string
		other map[string]yaml.Node
	}{{at, other}, {"defaults", f.defaults.Other}} {
		n, ok := x.other["group"]
		switch {
		case !ok || n.Kind == yaml.ScalarNode && n.Tag == "!!null": // left to the defaults
		case n.Kind != yaml.ScalarNode:
			return "", "" // reported by checkOther
		default:
			return n.Value, x.at + ".group"
		}
	}
	return "", ""
}

// checkSettings checks the fields shared by defaults and pipelines, each
// on its own.
func (f *File) checkSettings(ps *Problems, at string, s rawSettings) {
	add := func(field, format string, args ...any) {
		p := at + "." + field
		f.report(ps, Problem{File: f.Name, Line: f.idx.line(p), Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	if s.Namespace != nil {
		if err := names.CheckNamespace(*s.Namespace); err != nil {
			add("namespace", "%v", err)
		}
	}
	if s.Key != nil {
		if err := checkNames(*s.Key, "key column"); err != "" {
			add("key", "%s", err)
		}
	}
	f.checkOther(ps, at, s.Other)
	if s.Layout != nil {
		if err := s.Layout.tables(layout.Tables{}).Validate(); err != nil {
			add("layout", "%v", err)
		}
	}
	if s.DeleteFormat != nil {
		if _, err := layout.ParseDeleteFormat(*s.DeleteFormat); err != nil {
			add("delete_format", "%v", err)
		}
	}
	if s.HistoryColumns != nil {
		if err := checkNames(*s.HistoryColumns, "history column"); err != "" {
			add("history_columns", "%s", err)
		}
	}
	if s.History != nil && !*s.History {
		if s.HistoryColumns != nil && len(*s.HistoryColumns) > 0 {
			add("history_columns", "set, but history: false (line %d) keeps no history table", f.idx.line(at+".history"))
		}
		if s.HistoryCollapseTx != nil && *s.HistoryCollapseTx {
			add("history_collapse_tx", "true, but history: false (line %d) keeps no history table", f.idx.line(at+".history"))
		}
	}
	if s.Source != nil && strings.TrimSpace(*s.Source) == "" {
		add("source", "empty: name a source database of the worker's -sources, or leave source out")
	}
	if s.SignalTopic != nil && strings.TrimSpace(*s.SignalTopic) == "" {
		add("signal_topic", "empty: name the connector's signal topic, or leave signal_topic out")
	}
	if m := s.Maintenance; m != nil {
		mat := at + ".maintenance"
		madd := func(field, format string, args ...any) {
			p := mat + "." + field
			f.report(ps, Problem{File: f.Name, Line: f.idx.line(p), Path: p, Msg: fmt.Sprintf(format, args...)})
		}
		for _, d := range []struct {
			field    string
			v        *string
			interval bool
		}{{"compact_every", m.CompactEvery, true}, {"expire_every", m.ExpireEvery, true}, {"purge_every", m.PurgeEvery, true},
			{"retention", m.Retention, false}, {"retention_floor", m.RetentionFloor, false}, {"older_than", m.OlderThan, false},
			{"bronze_retention", m.BronzeRetention, false}} {
			if d.v == nil {
				continue
			}
			v, err := parseInterval(*d.v, d.interval)
			switch {
			case err != nil:
				madd(d.field, "%v", err)
			case v < 0:
				madd(d.field, "%s is negative", *d.v)
			case d.interval && v > 0 && v < time.Minute:
				madd(d.field, "%s is below the shortest schedule interval, 1m (off or 0: no schedule)", *d.v)
			}
		}
		if m.TargetFileSize != nil && *m.TargetFileSize < 1<<20 {
			madd("target_file_size", "%d bytes is below 1 MiB (1048576)", *m.TargetFileSize)
		}
		if m.RetainLast != nil && *m.RetainLast < 1 {
			madd("retain_last", "%d: keep at least 1 snapshot", *m.RetainLast)
		}
		if m.BronzeRetention != nil {
			if v, err := ParseDuration(*m.BronzeRetention); err == nil {
				if err := retention.Check(v); err != nil {
					madd("bronze_retention", "%v", err)
				}
			}
		}
		if at == "defaults" {
			if msg := retentionConflict(m, nil); msg != "" {
				field := "retention"
				if m.Retention == nil {
					field = "retention_floor"
				}
				madd(field, "%s", msg)
			}
		}
	}
}

// checkOther checks the keys of a defaults block or a pipeline (at) that
// no field of rawSettings or rawEntry takes: a setting of
// payload.Settings by its name or an alias (its value parsed and checked
// against the setting's rule), else an unknown key.
func (f *File) checkOther(ps *Problems, at string, other map[string]yaml.Node) {
	add := func(key, format string, args ...any) {
		p := at + "." + key
		f.report(ps, Problem{File: f.Name, Line: f.idx.line(p), Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	seen := map[*payload.Setting]string{}
	for _, key := range slices.Sorted(maps.Keys(other)) {
		st := settingOf(key)
		if st != nil && st.PerGroup {
			add(key, "%s is a group's: give it once under groups.<group>.%s", key, st.Name)
			continue
		}
		if st == nil {
			switch {
			case at == "defaults" && entryOnly[key]:
				add(key, "%s is set per pipeline, not in defaults", key)
			case at == "defaults":
				add(key, "%s", unknownKey(key, knownFieldList["rawSettings"]))
			default:
				add(key, "%s", unknownKey(key, knownFieldList["rawEntry"]))
			}
			continue
		}
		if first, twice := seen[st]; twice {
			a, b := first, key
			if f.idx.line(at+"."+a) > f.idx.line(at+"."+b) {
				a, b = b, a
			}
			add(b, "given twice: %s is another name of %s (line %d)", b, a, f.idx.line(at+"."+a))
			continue
		}
		seen[st] = key
		n := other[key]
		v, why := settingValue(st, &n)
		if why == "" && v != nil {
			var spec payload.TableSpec
			st.Set(&spec, v)
			var se *payload.SettingError
			if errors.As(st.Check(spec), &se) {
				why = se.Why
			}
		}
		if why != "" {
			add(key, "%s", why)
		}
	}
}

// settingOf is the setting of payload.Settings that key names (its name
// or an alias, as written), else nil.
func settingOf(key string) *payload.Setting {
	st := payload.LookupSetting(key)
	if st == nil || (key != st.Name && !slices.Contains(st.Aliases, key)) {
		return nil
	}
	return st
}

// settingValue reads a setting's value from its node: nil for null (the
// key left empty: not given), else the value, or why it is not one.
func settingValue(st *payload.Setting, n *yaml.Node) (any, string) {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return nil, ""
	case n.Kind == yaml.MappingNode:
		return nil, "a mapping is not " + kindText(st)
	case n.Kind == yaml.SequenceNode:
		return nil, "a list is not " + kindText(st)
	case n.Kind == yaml.ScalarNode && st.Kind() == reflect.TypeOf(0) && n.Tag != "!!int":
		return nil, strconv.Quote(n.Value) + " is not an integer"
	}
	v, err := st.Parse(n.Value)
	if err != nil {
		return nil, err.Error()
	}
	return v, ""
}

func kindText(st *payload.Setting) string {
	switch st.Kind() {
	case reflect.TypeOf(0):
		return "an integer"
	case reflect.TypeOf(time.Duration(0)):
		return "a duration"
	}
	return "a string"
}

// checkEntry checks one pipeline item and compiles its pattern. hurt: the
// item had a decoding problem (it may be partly decoded).
func (f *File) checkEntry(ps *Problems, e *entry, hurt bool) {
	add := func(field, format string, args ...any) {
		p := e.path
		if field != "" {
			p += "." + field
		}
		line := f.idx.line(p)
		if line == 0 {
			line = e.line
		}
		f.report(ps, Problem{File: f.Name, Line: line, Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	r := e.raw
	f.checkSettings(ps, e.path, r.rawSettings)
	if g, path := f.groupOf(e.path, r.Other); g != "" && payload.CheckGroup(g) == nil {
		if _, ok := f.groups[g]; !ok {
			f.report(ps, Problem{File: f.Name, Line: f.idx.line(path), Path: path,
				Msg: fmt.Sprintf("group %s is not declared: add it under groups (with its transaction_topic, if the connector writes one)", g)})
		}
	}
	var given []string
	for _, s := range []struct {
		field string
		v     *string
	}{{"topic", r.Topic}, {"topic_regex", r.TopicRegex}, {"topic_glob", r.TopicGlob}} {
		if s.v != nil {
			given = append(given, s.field)
		}
	}
	switch {
	case len(given) == 0 && !hurt:
		add("", "give one of topic, topic_regex and topic_glob")
	case len(given) > 1:
		add(given[1], "give one of topic, topic_regex and topic_glob, not %s", strings.Join(given, " and "))
	}
	switch {
	case r.Topic != nil:
		if err := names.CheckTopic(*r.Topic); err != nil {
			add("topic", "%v", err)
		}
		if r.Exclude != nil {
			add("exclude", "only a topic_regex or topic_glob pipeline excludes topics")
		}
	case r.TopicRegex != nil:
		e.pattern = "topic_regex"
		re, err := regexp.Compile("^(?:" + *r.TopicRegex + ")$")
		if err != nil {
			add("topic_regex", "%s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		e.re = re
	case r.TopicGlob != nil:
		e.pattern = "topic_glob"
		if _, err := path.Match(*r.TopicGlob, ""); err != nil {
			add("topic_glob", "%q: %v", *r.TopicGlob, err)
		}
		e.glob = *r.TopicGlob
	}
	if e.pattern != "" {
		for _, field := range []string{"table", "source_table", "definition"} {
			if f.idx.line(e.path+"."+field) > 0 {
				add(field, "names one table; a %s pipeline makes one table per matching topic (give the topic its own pipeline)", e.pattern)
			}
		}
		if r.Exclude != nil {
			for i, x := range *r.Exclude {
				xp := fmt.Sprintf("exclude[%d]", i)
				if f.idx.line(e.path+"."+xp) == 0 {
					xp = "exclude"
				}
				if e.pattern == "topic_regex" {
					re, err := regexp.Compile("^(?:" + x + ")$")
					if err != nil {
						add(xp, "%s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
						continue
					}
					e.exclude = append(e.exclude, re.MatchString)
				} else {
					if _, err := path.Match(x, ""); err != nil {
						add(xp, "%q: %v", x, err)
						continue
					}
					e.exclude = append(e.exclude, func(t string) bool { ok, _ := path.Match(x, t); return ok })
				}
			}
		}
	}
	if r.Table != nil {
		t := *r.Table
		if strings.Contains(t, ".") {
			if err := names.CheckTable(t); err != nil {
				add("table", "%v", err)
			} else if r.Namespace != nil {
				add("namespace", "conflicts with table %q, which names its namespace (give table: %s, or drop namespace)", t, t[strings.LastIndexByte(t, '.')+1:])
			}
		} else if err := names.CheckPart(t); err != nil {
			add("table", "%v", err)
		}
	}
	if r.SourceTable != nil {
		if _, err := splitTable(*r.SourceTable); err != "" {
			add("source_table", "%s", strings.Replace(err, "namespace.table", "schema.table", 1))
		}
	}
	if r.Definition != nil && strings.TrimSpace(*r.Definition) == "" {
		add("definition", "empty: give the path of a table definition file, or leave definition out")
	}
	// conflicts between the pipeline and the defaults it inherits
	if r.History != nil && !*r.History {
		if r.HistoryColumns == nil && f.defaults.HistoryColumns != nil && len(*f.defaults.HistoryColumns) > 0 {
			add("history", "false, but defaults.history_columns (line %d) needs the history table: give history_columns: [] here", f.idx.line("defaults.history_columns"))
		}
		if r.HistoryCollapseTx == nil && f.defaults.HistoryCollapseTx != nil && *f.defaults.HistoryCollapseTx {
			add("history", "false, but defaults.history_collapse_tx (line %d) needs the history table: give history_collapse_tx: false here", f.idx.line("defaults.history_collapse_tx"))
		}
	}
	if r.History == nil && f.defaults.History != nil && !*f.defaults.History {
		if r.HistoryColumns != nil && len(*r.HistoryColumns) > 0 {
			add("history_columns", "set, but defaults.history is false (line %d): give history: true here", f.idx.line("defaults.history"))
		}
		if r.HistoryCollapseTx != nil && *r.HistoryCollapseTx {
			add("history_collapse_tx", "true, but defaults.history is false (line %d): give history: true here", f.idx.line("defaults.history"))
		}
	}
	// retention against its floor, where this pipeline sets one of them
	// (the defaults' own values are checked once, as defaults)
	if m := r.Maintenance; m != nil && (m.PurgeEvery != nil || m.Retention != nil || m.RetentionFloor != nil) {
		if msg := retentionConflict(m, f.defaults.Maintenance); msg != "" {
			field := "maintenance.retention"
			if m.Retention == nil {
				field = "maintenance"
			}
			add(field, "%s", msg)
		}
	}
}

// retentionConflict returns why a purge schedule's retention (m's, else
// defaults', else the built-in default) is shorter than its floor, or ""
// when it is not (or there is no purge schedule, or a value does not parse:
// that is reported on its own).
func retentionConflict(m, defaults *rawMaintenance) string {
	get := func(f func(*rawMaintenance) *string, def time.Duration, interval bool) (time.Duration, bool) {
		s := pickMaint(m, f)
		if s == nil {
			s = pickMaint(defaults, f)
		}
		if s == nil {
			return def, true
		}
		d, err := parseInterval(*s, interval)
		return d, err == nil
	}
	pe, ok1 := get(func(m *rawMaintenance) *string { return m.PurgeEvery }, DefaultMaintenance.PurgeEvery, true)
	rv, ok2 := get(func(m *rawMaintenance) *string { return m.Retention }, DefaultMaintenance.Retention, false)
	fv, ok3 := get(func(m *rawMaintenance) *string { return m.RetentionFloor }, DefaultMaintenance.RetentionFloor, false)
	if !ok1 || !ok2 || !ok3 || pe <= 0 || rv >= fv {
		return ""
	}
	return fmt.Sprintf("retention %s is shorter than retention_floor %s: a purge could let a replayed event resurrect a row (lower retention_floor only on purpose)", FormatDuration(rv), FormatDuration(fv))
}

// report adds p unless its path already has a decoding problem (a value
// that did not decode reads as its zero value: checking it again would
// report a second, wrong problem).
func (f *File) report(ps *Problems, p Problem) {
	if f.undecoded[p.Path] {
		return
	}
	*ps = append(*ps, p)
}

func pickMaint(m *rawMaintenance, get func(*rawMaintenance) *string) *string {
	if m == nil {
		return nil
	}
	return get(m)
}

// checkNamespace returns why ns is not a source database's schema ("" when
// it is).
func checkNamespace(ns string) string {
	if ns == "" {
		return "empty"
	}
	for _, seg := range strings.Split(ns, ".") {
		if seg == "" || strings.ContainsAny(seg, " \t/") {
			return fmt.Sprintf("%q is not a namespace (dot-separated names)", ns)
		}
	}
	return ""
}

// splitTable splits a source table "schema.name" (the schema may have
// dots) and returns why it cannot ("" when it can). Table names of the
// pipelines follow names.TableRule instead.
func splitTable(s string) ([2]string, string) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 || i == len(s)-1 || checkNamespace(s[:i]) != "" || strings.ContainsAny(s[i+1:], " \t/") {
		return [2]string{}, fmt.Sprintf("%q is not of the form namespace.table", s)
	}
	return [2]string{s[:i], s[i+1:]}, ""
}

// checkNames returns why a list of column names is not one ("" when it
// is): names.CheckColumns, what naming the list ("key column").
func checkNames(l nameList, what string) string {
	if err := names.CheckColumns(what, l); err != nil {
		return err.Error()
	}
	return ""
}

// ParseDuration reads a Go duration ("500ms", "2s", "1h30m") or a whole
// number of days ("30d") (payload.ParseDuration). Errors say what is
// accepted.
func ParseDuration(s string) (time.Duration, error) { return payload.ParseDuration(s) }

// parseInterval is ParseDuration; for a schedule interval also "off"
// (= 0: no schedule).
func parseInterval(s string, interval bool) (time.Duration, error) {
	if interval && strings.TrimSpace(s) == "off" {
		return 0, nil
	}
	d, err := ParseDuration(s)
	if err != nil && interval {
		return 0, fmt.Errorf("%q is not a duration (e.g. 1h, 24h, 7d) or off", s)
	}
	return d, err
}

// FormatDuration writes d the way a file would (payload.FormatDuration):
// whole days as "30d", else Go's form without zero units ("1h", "1h30m",
// "2s", "500ms"); 0 is "0s".
func FormatDuration(d time.Duration) string { return payload.FormatDuration(d) }

// yamlLine reads yaml.v3's "yaml: line N: msg".
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func splitYAMLError(err error) (int, string) {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, strings.TrimPrefix(err.Error(), "yaml: ")
	}
	n, _ := strconv.Atoi(m[1])
	return n, m[2]
}

func sortProblems(ps Problems) {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
}
