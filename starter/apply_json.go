package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/pipelines"
)

// ApplyOutput is what `apply --output json` prints: the plan, and once
// applied what each step did and the counts.
type ApplyOutput struct {
	Plan      []ApplyStep   `json:"plan"`                  // every step, in the plan's order (unchanged ones too)
	NotInFile []string      `json:"not_in_file,omitempty"` // running pipelines the file does not list, left running (no --prune)
	DryRun    bool          `json:"dry_run,omitempty"`     // nothing was applied
	Refused   []string      `json:"refused,omitempty"`     // tables whose step is refuse: nothing was applied (exit 2)
	Applied   *ApplyCounts  `json:"applied,omitempty"`     // nil when nothing was applied
	Results   []ApplyResult `json:"results,omitempty"`     // the steps carried out: creates, updates, stops
}

// ApplyStep is one step of the plan.
type ApplyStep struct {
	Action  string        `json:"action"` // create, update, unchanged, stop, refuse
	Table   string        `json:"table"`
	Topic   string        `json:"topic,omitempty"`
	Changes []ApplyChange `json:"changes,omitempty"`
	Note    string        `json:"note,omitempty"`
}

// ApplyChange is one setting that differs: as the pipeline has it (old)
// and as the file has it (new), written as in a file; live: the running
// pipeline takes it.
type ApplyChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
	Live  bool   `json:"live"`
}

// ApplyResult is what carrying out one step did (the text output's
// lines) or its error.
type ApplyResult struct {
	Action string   `json:"action"`
	Table  string   `json:"table"`
	Done   []string `json:"done,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// ApplyCounts are the steps applied, by action.
type ApplyCounts struct {
	Created int `json:"created"`
	Updated int `json:"updated"`
	Stopped int `json:"stopped"`
}

// planOutput is the plan part of ApplyOutput.
func planOutput(plan pipelines.Plan) ApplyOutput {
	o := ApplyOutput{Plan: []ApplyStep{}, NotInFile: plan.NotInFile}
	for _, s := range plan.Steps {
		st := ApplyStep{Action: string(s.Action), Table: s.Table, Topic: s.Topic, Note: s.Note}
		for _, c := range s.Changes {
			st.Changes = append(st.Changes, ApplyChange{Field: c.Field, Old: c.Old, New: c.New, Live: c.Live})
		}
		o.Plan = append(o.Plan, st)
	}
	for _, s := range plan.Refused() {
		o.Refused = append(o.Refused, s.Table)
	}
	return o
}

// applyJSON is apply with --output json (--yes or --dry-run given):
// prints the plan and, unless refused, without changes or dryRun, applies
// it and adds what each step did. Errors: as apply's (refused: usage,
// exit 2; failed steps: exit 1), after the JSON is printed.
func applyJSON(ctx context.Context, out io.Writer, c client.Client, plan pipelines.Plan, specs map[string]activities.TableSpec, dryRun bool) error {
	o := planOutput(plan)
	if len(o.Refused) > 0 || !plan.HasChanges() || dryRun {
		o.DryRun = dryRun
		if err := writeJSON(out, o); err != nil {
			return err
		}
		if refused := plan.Refused(); len(refused) > 0 {
			return refusedError(refused)
		}
		return nil
	}
	steps, lines, errs := runSteps(ctx, c, plan, specs)
	o.Applied = &ApplyCounts{}
	var failed []string
	for i, s := range steps {
		r := ApplyResult{Action: string(s.Action), Table: s.Table, Done: lines[i]}
		if errs[i] != nil {
			r.Error = errs[i].Error()
			failed = append(failed, s.Table)
		} else {
			switch s.Action {
			case pipelines.ActionCreate:
				o.Applied.Created++
			case pipelines.ActionUpdate:
				o.Applied.Updated++
			case pipelines.ActionStop:
				o.Applied.Stopped++
			}
		}
		o.Results = append(o.Results, r)
	}
	if err := writeJSON(out, o); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d changes failed (%s); the others were applied: run apply again once the cause is fixed", len(failed), len(steps), strings.Join(failed, ", "))
	}
	return nil
}
