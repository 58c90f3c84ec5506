package pipelines

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Action is what a plan does with one table's pipeline.
type Action string

// Actions of a plan step.
const (
	ActionCreate    Action = "create"    // start the pipeline (none runs)
	ActionUpdate    Action = "update"    // change a running pipeline's live settings
	ActionUnchanged Action = "unchanged" // the running pipeline is as the file says
	ActionStop      Action = "stop"      // with prune: a running pipeline the file does not list
	ActionRefuse    Action = "refuse"    // the file asks for what the pipeline cannot take: nothing is applied
)

// Change is one setting that differs between the file and a pipeline.
type Change struct {
	Field string // the file's field: "batch_size", "maintenance.compact_every"
	Old   string // as the pipeline has it, written as in a file
	New   string // as the file has it
	// Live: a running pipeline takes it (the settings update, or its
	// maintenance schedules); otherwise it cannot change while the
	// pipeline runs (the topic, keys, tables kept, history options,
	// source, definition, start_from).
	Live bool
}

// Step is the plan for one table.
type Step struct {
	Action   Action
	Table    string
	Topic    string
	Desired  *Pipeline // the file's pipeline; nil for a stop
	Observed *Pipeline // the running pipeline; nil for a create (and a refused create)
	Changes  []Change  // update: the changes; refuse: every difference
	Note     string    // refuse: why; create: what it continues from
}

// Plan is what apply does, step by step.
type Plan struct {
	Steps []Step
	// NotInFile are running pipelines the file does not list, left as
	// they are (without prune).
	NotInFile []string
}

// Observed is the state a plan is computed against.
type Observed struct {
	// Running are the running pipelines, as their workflows report them
	// (their live settings, the schedules that exist).
	Running []Pipeline
	// Stored holds, by lower-case table name, what the existing Iceberg
	// mirror of a table without a running pipeline records.
	Stored map[string]Stored
	// LastRun holds, by lower-case table name, the close status of the
	// last run of a table without a running pipeline ("completed",
	// "terminated", ...).
	LastRun map[string]string
}

// Stored is what an existing mirror table records about its pipeline.
type Stored struct {
	Topic string   // the topic it was fed from; "" = not recorded
	Key   []string // its key columns; empty = unknown
}

// Compute plans desired against obs: a desired table without a running
// pipeline is created (refused when its existing tables were fed from
// another topic or have other key columns), one with a running pipeline is
// unchanged, updated (live settings only) or refused (a setting that
// cannot change while it runs); with prune, running pipelines not desired
// are stopped. Tables compare case-insensitively. Steps come in desired
// order, stops after them by table.
func Compute(desired []Pipeline, obs Observed, prune bool) Plan {
	running := map[string]*Pipeline{}
	for i := range obs.Running {
		running[strings.ToLower(obs.Running[i].Table)] = &obs.Running[i]
	}
	var plan Plan
	wanted := map[string]bool{}
	for i := range desired {
		d := &desired[i]
		k := strings.ToLower(d.Table)
		wanted[k] = true
		o := running[k]
		if o == nil {
			st := Step{Action: ActionCreate, Table: d.Table, Topic: d.Topic, Desired: d}
			if s, ok := obs.Stored[k]; ok {
				switch {
				case s.Topic != "" && s.Topic != d.Topic:
					st.Action = ActionRefuse
					st.Note = fmt.Sprintf("its tables hold the records of topic %s, not %s: their offsets are %s's; give topic %s, or mirror %s into a new table name",
						s.Topic, d.Topic, s.Topic, s.Topic, d.Topic)
				case len(d.Key) > 0 && len(s.Key) > 0 && !slices.Equal(s.Key, d.Key):
					st.Action = ActionRefuse
					st.Note = fmt.Sprintf("its mirror was created with key columns %s, not %s: give key %s (a different key needs a new table)",
						strings.Join(s.Key, ","), strings.Join(d.Key, ","), strings.Join(s.Key, ","))
				default:
					st.Note = "continues from the offsets its tables record"
				}
			}
			if st.Action == ActionCreate && obs.LastRun[k] != "" {
				if st.Note != "" {
					st.Note = "its last run " + obs.LastRun[k] + "; " + st.Note
				} else {
					st.Note = "its last run " + obs.LastRun[k]
				}
			}
			plan.Steps = append(plan.Steps, st)
			continue
		}
		changes := Diff(*d, *o)
		st := Step{Action: ActionUnchanged, Table: d.Table, Topic: d.Topic, Desired: d, Observed: o, Changes: changes}
		for _, c := range changes {
			if !c.Live {
				st.Action = ActionRefuse
				st.Note = "cannot change while its pipeline runs"
				break
			}
			st.Action = ActionUpdate
		}
		plan.Steps = append(plan.Steps, st)
	}
	var extra []*Pipeline
	for i := range obs.Running {
		if !wanted[strings.ToLower(obs.Running[i].Table)] {
			extra = append(extra, &obs.Running[i])
		}
	}
	slices.SortFunc(extra, func(a, b *Pipeline) int { return strings.Compare(a.Table, b.Table) })
	for _, o := range extra {
		if prune {
			plan.Steps = append(plan.Steps, Step{Action: ActionStop, Table: o.Table, Topic: o.Topic, Observed: o})
		} else {
			plan.NotInFile = append(plan.NotInFile, o.Table)
		}
	}
	return plan
}

// field is one compared setting.
type field struct {
	name string
	live bool
	job  string // maintenance parameter of this job: compared only while both sides schedule it
	get  func(Pipeline) string
}

// fields are the compared settings, fixed ones first: the fixed settings
// of payload.Settings after key, its live ones before the layout.
var fields = slices.Concat([]field{
	{name: "topic", get: func(p Pipeline) string { return p.Topic }},
	{name: "key", get: func(p Pipeline) string { return listText(p.Key, "(Kafka record key)") }},
}, settingFields(false), []field{
	{name: "bronze", get: func(p Pipeline) string { return strconv.FormatBool(p.Bronze) }},
	{name: "history", get: func(p Pipeline) string { return strconv.FormatBool(p.History) }},
	{name: "history_columns", get: func(p Pipeline) string { return listText(p.HistoryColumns, "(all columns)") }},
	{name: "history_collapse_tx", get: func(p Pipeline) string { return strconv.FormatBool(p.HistoryCollapseTx) }},
	{name: "source", get: func(p Pipeline) string { return orNone(p.Source) }},
	{name: "source_table", get: func(p Pipeline) string { return orNone(p.SourceTable) }},
	{name: "signal_topic", get: func(p Pipeline) string { return orNone(p.SignalTopic) }},
	{name: "definition", get: func(p Pipeline) string { return p.Columns }},
	{name: "delete_format", get: func(p Pipeline) string { return p.DeleteFormat.String() }},
}, settingFields(true), []field{
	{name: "layout.mirror", live: true, get: func(p Pipeline) string { return layoutText(p.Layout.Mirror) }},
	{name: "layout.history", live: true, get: func(p Pipeline) string { return layoutText(p.Layout.History) }},
	{name: "layout.bronze", live: true, get: func(p Pipeline) string { return layoutText(p.Layout.BronzeSpec()) }},
	{name: "maintenance.compact_every", live: true, get: func(p Pipeline) string { return interval(p.Maintenance.CompactEvery) }},
	{name: "maintenance.expire_every", live: true, get: func(p Pipeline) string { return interval(p.Maintenance.ExpireEvery) }},
	{name: "maintenance.purge_every", live: true, get: func(p Pipeline) string { return interval(p.Maintenance.PurgeEvery) }},
	{name: "maintenance.retention", live: true, job: "purge", get: func(p Pipeline) string { return FormatDuration(p.Maintenance.Retention) }},
	{name: "maintenance.retention_floor", live: true, job: "purge", get: func(p Pipeline) string { return FormatDuration(p.Maintenance.RetentionFloor) }},
	{name: "maintenance.target_file_size", live: true, job: "compact", get: func(p Pipeline) string { return strconv.FormatInt(p.Maintenance.TargetFileSize, 10) }},
	{name: "maintenance.retain_last", live: true, job: "expire", get: func(p Pipeline) string { return strconv.Itoa(p.Maintenance.RetainLast) }},
	{name: "maintenance.older_than", live: true, job: "expire", get: func(p Pipeline) string { return FormatDuration(p.Maintenance.OlderThan) }},
	{name: "maintenance.clean_orphans", live: true, job: "expire", get: func(p Pipeline) string { return strconv.FormatBool(p.Maintenance.CleanOrphans) }},
	{name: "maintenance.bronze_retention", live: true, job: "expire", get: func(p Pipeline) string { return FormatDuration(p.Maintenance.BronzeRetention) }},
})

// settingFields are the fields of the settings of payload.Settings whose
// Live is live, compared by their text (Setting.Format).
func settingFields(live bool) []field {
	var out []field
	for i := range payload.Settings {
		if st := &payload.Settings[i]; st.Live == live {
			out = append(out, field{name: st.Name, live: live, get: func(p Pipeline) string { return st.Format(st.Get(p.Settings)) }})
		}
	}
	return out
}

// Diff lists the settings in which desired differs from observed, in a
// fixed order (fixed settings first). A maintenance job's parameters are
// compared only when both sides schedule the job. The definition compares
// by Columns; its change shows the file's definition path.
func Diff(desired, observed Pipeline) []Change {
	var out []Change
	for _, f := range fields {
		if f.job != "" && (jobEvery(desired.Maintenance, f.job) == 0 || jobEvery(observed.Maintenance, f.job) == 0) {
			continue
		}
		n, o := f.get(desired), f.get(observed)
		if n == o {
			continue
		}
		if f.name == "definition" {
			o, n = columnsText(o, ""), columnsText(n, desired.Definition)
		}
		out = append(out, Change{Field: f.name, Old: o, New: n, Live: f.live})
	}
	return out
}

// jobEvery is the interval of a maintenance job ("compact", "expire",
// "purge") in m.
func jobEvery(m Maintenance, job string) time.Duration {
	switch job {
	case "compact":
		return m.CompactEvery
	case "expire":
		return m.ExpireEvery
	case "purge":
		return m.PurgeEvery
	}
	return 0
}

// Counts returns the number of steps per action.
func (p Plan) Counts() map[Action]int {
	out := map[Action]int{}
	for _, s := range p.Steps {
		out[s.Action]++
	}
	return out
}

// HasChanges reports whether applying the plan would do anything (or
// refuse to).
func (p Plan) HasChanges() bool {
	for _, s := range p.Steps {
		if s.Action != ActionUnchanged {
			return true
		}
	}
	return false
}

// Refused returns the refused steps.
func (p Plan) Refused() []Step {
	var out []Step
	for _, s := range p.Steps {
		if s.Action == ActionRefuse {
			out = append(out, s)
		}
	}
	return out
}

// Write prints the plan for people, like terraform and kubectl: "+ create",
// "~ update" with one "field: old → new" line per change, "! refuse" with
// its reason and changes, "- stop", then "= N unchanged" and a summary
// line; a plan without changes is "no changes: N pipelines unchanged".
func (p Plan) Write(w io.Writer) {
	c := p.Counts()
	if !p.HasChanges() {
		fmt.Fprintf(w, "no changes: %d pipelines unchanged\n", c[ActionUnchanged])
		p.writeNotInFile(w)
		return
	}
	for _, a := range []Action{ActionCreate, ActionUpdate, ActionRefuse, ActionStop} {
		for _, s := range p.Steps {
			if s.Action != a {
				continue
			}
			switch a {
			case ActionCreate:
				fmt.Fprintf(w, "+ create %s ← %s", s.Table, s.Topic)
				if s.Note != "" {
					fmt.Fprintf(w, " (%s)", s.Note)
				}
				fmt.Fprintln(w)
			case ActionUpdate:
				fmt.Fprintf(w, "~ update %s\n", s.Table)
				for _, ch := range s.Changes {
					fmt.Fprintf(w, "    %s: %s → %s\n", ch.Field, ch.Old, ch.New)
				}
			case ActionRefuse:
				fmt.Fprintf(w, "! refuse %s: %s\n", s.Table, s.Note)
				for _, ch := range s.Changes {
					fmt.Fprintf(w, "    %s: %s → %s", ch.Field, ch.Old, ch.New)
					if !ch.Live {
						fmt.Fprint(w, " (cannot change while it runs)")
					}
					fmt.Fprintln(w)
				}
			case ActionStop:
				fmt.Fprintf(w, "- stop %s ← %s (not in the file)\n", s.Table, s.Topic)
			}
		}
	}
	if n := c[ActionUnchanged]; n > 0 {
		fmt.Fprintf(w, "= %d unchanged\n", n)
	}
	p.writeNotInFile(w)
	fmt.Fprintf(w, "Plan: %d to create, %d to update, %d to stop, %d unchanged", c[ActionCreate], c[ActionUpdate], c[ActionStop], c[ActionUnchanged])
	if n := c[ActionRefuse]; n > 0 {
		fmt.Fprintf(w, ", %d refused", n)
	}
	fmt.Fprintln(w, ".")
}

func (p Plan) writeNotInFile(w io.Writer) {
	if len(p.NotInFile) == 0 {
		return
	}
	names := p.NotInFile
	more := ""
	if len(names) > 10 {
		names, more = names[:10], fmt.Sprintf(", and %d more", len(p.NotInFile)-10)
	}
	fmt.Fprintf(w, "  %d running pipelines are not in the file (left running; --prune stops them): %s%s\n", len(p.NotInFile), strings.Join(names, ", "), more)
}

func listText(l []string, empty string) string {
	if len(l) == 0 {
		return empty
	}
	return strings.Join(l, ",")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func interval(d time.Duration) string {
	if d <= 0 {
		return "off"
	}
	return FormatDuration(d)
}

func columnsText(cols, path string) string {
	switch {
	case cols == "":
		return "(none)"
	case path != "":
		return "the columns of " + path
	}
	return "other declared columns"
}

// layoutText is one table's layout as Diff compares and shows it.
func layoutText(s layout.Spec) string {
	t := "(unpartitioned)"
	if s.HasFields() {
		t = "partition_by [" + strings.Join(s.PartitionBy, ", ") + "]"
		if len(s.SortBy) > 0 {
			t += " sort_by [" + strings.Join(s.SortBy, ", ") + "]"
		}
	}
	if s.Compression != "" {
		t += " compression " + s.Compression
	}
	return t
}
