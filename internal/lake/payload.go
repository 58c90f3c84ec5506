package lake

import (
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// The batch bookkeeping and result types live in internal/payload, the
// standard-library-only contract between workflows and activities; these
// aliases keep their lake names (the same types, so the same JSON).
type (
	Offsets          = payload.Offsets
	Range            = payload.Range
	Batch            = payload.Batch
	BatchTally       = payload.BatchTally
	TxAt             = payload.TxAt
	LoadCursor       = payload.LoadCursor
	KeyPart          = payload.KeyPart
	BronzeResult     = payload.BronzeResult
	MirrorResult     = payload.MirrorResult
	HistoryResult    = payload.HistoryResult
	RebuildResult    = payload.TableRebuildResult
	PurgeResult      = payload.PurgeResult
	CompactResult    = payload.CompactResult
	ExpireResult     = payload.ExpireResult
	TrimResult       = payload.TrimResult
	ErasureKeys      = payload.ErasureKeys
	EraseResult      = payload.EraseResult
	EraseTableResult = payload.EraseTableResult
)

// Schema decisions an operator takes on a blocked schema change
// (payload.DecisionEvolve, payload.DecisionSkip).
const (
	DecisionEvolve = payload.DecisionEvolve
	DecisionSkip   = payload.DecisionSkip
)

// KeyParts converts key values for a cursor (payload.KeyParts).
func KeyParts(vals []cdc.Value) []KeyPart { return payload.KeyParts(vals) }
