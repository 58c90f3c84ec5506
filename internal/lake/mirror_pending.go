package lake

import (
	"context"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
)

// A table without a history table keeps its late keys on the mirror: a
// key with a change older than its stored row (late or replayed) joins the
// mirror's pending-rebuild set (PropPendingRebuild, the same property the
// history table uses when there is one), committed with the batch, and
// RebuildKeys refolds those keys' mirror rows from all their changes (see
// MirrorWriter.Rebuild). The sequence guard alone keeps such a row's
// position right but not the values a late change contributes to a later
// delete without a before image or a TOAST placeholder (docs/design.md rule 6).

// ownsPending reports whether this writer keeps the pending-rebuild set
// on the mirror: it has no history writer beside it.
func (w *MirrorWriter) ownsPending() bool { return w.state.EventsBy == localstate.RecMirror }

// Pending returns the keys the mirror lists as awaiting a rebuild: always
// none when the table has a history writer (the history table lists
// them). Errors: catalog failures and a malformed property.
func (w *MirrorWriter) Pending(ctx context.Context) ([]cdc.Key, error) {
	w.state.Settle()
	if !w.ownsPending() {
		return nil, nil
	}
	tbl, err := lakecat.LoadTable(ctx, w.cat, w.name.Mirror())
	if err != nil || tbl == nil {
		return nil, err
	}
	return lakecat.PendingKeys(tbl)
}
