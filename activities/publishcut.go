package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/cuts"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Payload types of publishing a cut.
type (
	PublishCutRequest = payload.PublishCutRequest
	PublishCutResult  = payload.PublishCutResult
)

// PublishCut publishes a source group's consistent cut in its tables
// (docs/design.md, "How readers get W: tags"; cuts.Publish): the tags
// `cut-<n>` (kept payload.CutRetention) and `consistent` on each table's
// mirror and history at their current Iceberg snapshots, which hold
// exactly the transactions committed at or below req.W (per position:
// the changes at or below it; the group's workflow holds every table
// there while this runs), and one row per table in the group table
// `<ns>._cuts` (per_position as req.PerPosition). It is idempotent (a retry keeps
// the tags' snapshots and appends nothing). A table whose mirror has
// applied past W (it left the cut before the tags were set: cuts.ErrPastCut)
// fails it with nothing tagged, and so does one whose last batch ended in
// the middle of a source snapshot (cuts.ErrSourceSnapshotOpen). A cut
// number recorded earlier at another W (an attempt given up after its
// rows were appended) is returned as recorded (PublishCutResult.Recorded).
// Errors: a table name that breaks the
// naming rule, no tables and a table past the cut or in a source
// snapshot (non-retryable,
// InvalidTableSpec: the group gives the cut up);
// a missing mirror, catalog and storage failures (retried). The worker's
// metrics take the cut's source commit time (lakemirror_group_cut_lag_seconds).
func (a *Activities) PublishCut(ctx context.Context, req PublishCutRequest) (PublishCutResult, error) {
	if len(req.Tables) == 0 {
		return PublishCutResult{}, badSpec(fmt.Errorf("cut %d of group %s: no tables", req.Number, req.Group))
	}
	names := make([]lake.TableName, 0, len(req.Tables))
	for _, t := range req.Tables {
		n, err := lake.ParseTableName(t)
		if err != nil {
			return PublishCutResult{}, badSpec(err)
		}
		names = append(names, n)
	}
	want := cuts.Cut{Group: req.Group, Number: req.Number, W: req.W, TxID: req.TxID, SourceTsMs: req.SourceTsMs, PerPosition: req.PerPosition}
	tagged, got, err := cuts.Publish(ctx, a.Catalog, want, names, payload.CutRetention, time.Now())
	if errors.Is(err, cuts.ErrPastCut) || errors.Is(err, cuts.ErrSourceSnapshotOpen) {
		return PublishCutResult{}, badSpec(err) // not retried: the group gives this cut up, a later one is taken
	}
	if err != nil {
		return PublishCutResult{}, err
	}
	if a.Metrics != nil && got.SourceTsMs > 0 {
		a.Metrics.CutPublished(req.Group, time.UnixMilli(got.SourceTsMs))
	}
	out := PublishCutResult{Tagged: make([]payload.CutTagged, 0, len(tagged))}
	if got != want {
		out.Recorded = &payload.RecordedCut{W: got.W, TxID: got.TxID, SourceTsMs: got.SourceTsMs, PerPosition: got.PerPosition}
	}
	for _, t := range tagged {
		out.Tagged = append(out.Tagged, payload.CutTagged{Table: t.Table, Mirror: t.Mirror, History: t.History})
	}
	return out, nil
}

// LeaveGroup removes the tag `consistent` from the mirror and history of
// a table taken out of its source group (cuts.Untag): the group's later
// cuts do not include it. Idempotent; a table that does not exist is
// skipped. Errors: a bad table name (non-retryable InvalidTableSpec), the
// catalog's.
func (a *Activities) LeaveGroup(ctx context.Context, req payload.LeaveGroupRequest) (payload.LeaveGroupResult, error) {
	name, err := lake.ParseTableName(req.Table)
	if err != nil {
		return payload.LeaveGroupResult{}, badSpec(err)
	}
	untagged, err := cuts.Untag(ctx, a.Catalog, name)
	out := payload.LeaveGroupResult{}
	for _, id := range untagged {
		out.Untagged = append(out.Untagged, lakecat.IdentString(id))
	}
	return out, err
}
