package workflows

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// BackfillRequest asks a table to re-apply records it has already passed:
// explicit offset ranges per partition, or everything from a time on
// (Kafka's offset-for-time lookup) up to the table's current position.
// Re-applying is safe: the sequence guard makes changes already applied
// no-ops and bronze skips records it holds.
type BackfillRequest struct {
	Ranges []payload.Range `json:"ranges,omitempty"`
	From   time.Time       `json:"from,omitempty"` // used when Ranges is empty
}

// BackfillAccepted is the answer of the backfill update: the ranges queued
// (clamped to what Kafka still holds and to the table's position).
type BackfillAccepted struct {
	Ranges  []payload.Range `json:"ranges"`
	Records int64           `json:"records"`
}

// SettingsRequest changes a table's settings; nil fields keep theirs.
type SettingsRequest struct {
	// SettingsChange: the live settings of payload.Settings (batch_size
	// as max_events, max_wait, max_batch_size as max_batch_events,
	// max_quarantine, ...), embedded so that its fields are the
	// request's JSON fields as they always were.
	payload.SettingsChange
	// MirrorLayout, HistoryLayout, BronzeLayout: a table's partition
	// fields, sort order and Parquet codec (payload.TableSpec.Layout.Mirror,
	// .History, .Bronze); files written after the change follow it,
	// compaction rewrites older files of another partition spec.
	MirrorLayout  *layout.Spec `json:"mirror_layout,omitempty"`
	HistoryLayout *layout.Spec `json:"history_layout,omitempty"`
	BronzeLayout  *layout.Spec `json:"bronze_layout,omitempty"`
	// DeleteFormat: the delete format (payload.TableSpec.DeleteFormat).
	// It is fixed when the tables are created, so the update is refused
	// unless it names the format the table has (CheckDeleteFormat); the
	// field exists so that a settings update asking for a change gets
	// that answer instead of being ignored.
	DeleteFormat *layout.DeleteFormat `json:"delete_format,omitempty"`
	// LayoutFrom is the tables' layout the request's layouts were made
	// from: `starter settings` merges the layout flags it is given into
	// the layout it reads from the table first. The update is refused when
	// the table's layout is no longer that one (CheckLayoutFrom), so that
	// two settings runs at once cannot undo each other's change
	// silently. nil: no check (`pipelines apply`, which gives whole
	// layouts, and starters before 2026-12-07).
	LayoutFrom *layout.Tables `json:"layout_from,omitempty"`
}

// CheckLayoutFrom refuses a request made from another layout than cur,
// the table's: another settings update changed it after the request's
// layout was read. Errors: that refusal, which says to run the command
// again.
func (req SettingsRequest) CheckLayoutFrom(cur layout.Tables) error {
	if req.LayoutFrom == nil || req.LayoutFrom.Equal(cur) {
		return nil
	}
	return errors.New("the table's layout changed after this request read it (another settings update at the same time?); nothing was changed: run the command again to apply it to the layout as it is now")
}

// CheckDeleteFormat refuses a request to change a running table's delete
// format (cur: its spec's), saying how to change it. Errors: a request
// for another format than cur, or an invalid one.
func (req SettingsRequest) CheckDeleteFormat(cur layout.DeleteFormat) error {
	if req.DeleteFormat == nil {
		return nil
	}
	if err := req.DeleteFormat.Validate(); err != nil {
		return err
	}
	if req.DeleteFormat.Or() != cur.Or() {
		return fmt.Errorf("the delete format is %s and is fixed when the mirror and history are created (format-version %d); to write %s, stop the table, drop its Iceberg tables and start it again with --delete-format %s (a rebuild from the topic), or mirror the topic into a new table name",
			cur.Describe(), cur.Or().FormatVersion(), req.DeleteFormat.Describe(), *req.DeleteFormat)
	}
	return nil
}

// layout is the tables' layout after req is applied to cur.
func (req SettingsRequest) layout(cur layout.Tables) layout.Tables {
	for _, x := range []struct {
		req *layout.Spec
		dst *layout.Spec
	}{{req.MirrorLayout, &cur.Mirror}, {req.HistoryLayout, &cur.History}, {req.BronzeLayout, &cur.Bronze}} {
		if x.req != nil {
			*x.dst = *x.req
		}
	}
	return cur.Normalize()
}

// Validate checks each new setting against its rule in payload.Settings
// (a *payload.SettingError naming it, e.g. "batch_size: 0 outside
// 1..1000000 records") and the layout's syntax (layout.Tables.Validate).
func (req SettingsRequest) Validate() error {
	if err := req.SettingsChange.Validate(); err != nil {
		return err
	}
	return req.layout(layout.Tables{}).Validate()
}

// registerUpdates installs the backfill and settings update handlers.
func registerUpdates(ctx workflow.Context, st *TableState) error {
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateBackfill,
		func(ctx workflow.Context, req BackfillRequest) (BackfillAccepted, error) {
			var acc BackfillAccepted
			err := workflow.ExecuteActivity(withShort(ctx), payload.ActivityResolveBackfill, payload.BackfillRequest{
				Spec: st.Spec, Ranges: req.Ranges, From: req.From, Position: st.Offsets}).Get(ctx, &acc.Ranges)
			if err != nil {
				return acc, err
			}
			for _, r := range acc.Ranges {
				acc.Records += r.To - r.From
			}
			st.Backfill = append(st.Backfill, acc.Ranges...)
			st.Totals.BackfillRequested += acc.Records
			return acc, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, req BackfillRequest) error {
			if st.Stopping {
				return errors.New("the table is stopping")
			}
			if len(req.Ranges) == 0 && req.From.IsZero() {
				return errors.New("give offset ranges or a start time")
			}
			for _, r := range req.Ranges {
				if r.From < 0 || r.To <= r.From {
					return fmt.Errorf("partition %d: empty or negative range [%d, %d)", r.Partition, r.From, r.To)
				}
			}
			return nil
		}})
	if err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateSettings,
		func(ctx workflow.Context, req SettingsRequest) (payload.TableSpec, error) {
			before := st.Spec
			st.Spec = req.SettingsChange.Apply(st.Spec)
			if req.MirrorLayout != nil || req.HistoryLayout != nil || req.BronzeLayout != nil {
				st.Spec.Layout = req.layout(st.Spec.Layout)
			}
			if st.settingsRun == 1 && sameSpec(before, st.Spec) {
				return st.Spec, nil // nothing changed: no new run, the plan goes on
			}
			st.settingsChanges++
			st.upsertSpecMemo(ctx) // the Web UI's memo shows the new bounds
			return st.Spec, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, req SettingsRequest) error {
			if err := req.CheckDeleteFormat(st.Spec.DeleteFormat); err != nil {
				return err
			}
			if err := req.CheckLayoutFrom(st.Spec.Layout); err != nil {
				return err
			}
			return req.Validate()
		}})
}

// sameSpec reports whether a and b are the same spec (a settings update
// that changes nothing).
//
//workflowcheck:ignore (reflection over two values: deterministic)
func sameSpec(a, b payload.TableSpec) bool { return reflect.DeepEqual(a, b) }

// backfillStep applies the next chunk (at most MaxEvents offsets) of the
// first queued backfill range, without moving the table's position.
func backfillStep(ctx workflow.Context, st *TableState) bool {
	st.Phase = PhaseBackfill
	r := st.Backfill[0]
	chunk := payload.Range{Partition: r.Partition, From: r.From, To: min(r.To, r.From+int64(st.Spec.MaxEvents))}
	res, ok := runBatch(ctx, st, []payload.Range{chunk}, st.Offsets, false)
	if !ok {
		return false
	}
	_ = res
	st.Totals.BackfillDone += chunk.To - chunk.From
	if chunk.To >= r.To {
		st.Backfill = st.Backfill[1:]
	} else {
		st.Backfill[0].From = chunk.To
	}
	if len(st.Backfill) == 0 {
		st.Phase = streamPhase(st)
	}
	return true
}
