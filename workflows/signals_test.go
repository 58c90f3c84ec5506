package workflows

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
)

// TestApplySignals: the one reducer of the operator signals, as the
// signal loop and drain call it (ctx nil: drained).
func TestApplySignals(t *testing.T) {
	st := &TableState{}
	st.apply(nil, SignalPause, "")
	if !st.Paused {
		t.Fatal("pause: not paused")
	}
	st.apply(nil, SignalResume, "")
	if st.Paused {
		t.Fatal("resume: still paused")
	}
	st.apply(nil, SignalControl, SignalPause)
	if !st.Paused {
		t.Fatal("control pause: not paused")
	}
	st.apply(nil, SignalControl, "stop")
	if !st.Paused || st.Stopping {
		t.Fatalf("control stop: paused %v, stopping %v; want it ignored", st.Paused, st.Stopping)
	}
	st.apply(nil, SignalControl, SignalResume)
	if st.Paused {
		t.Fatal("control resume: still paused")
	}
	st.apply(nil, SignalRetry, "")
	if !st.retryRequested {
		t.Fatal("retry: not requested")
	}
	st.apply(nil, SignalSchema, "drop-everything")
	if st.schemaDecision != "" {
		t.Fatalf("schema decision %q taken, want it ignored", st.schemaDecision)
	}
	st.apply(nil, SignalSchema, lake.DecisionEvolve)
	if st.schemaDecision != lake.DecisionEvolve {
		t.Fatalf("schema decision %q, want %q", st.schemaDecision, lake.DecisionEvolve)
	}
	st.apply(nil, SignalResnapshot, "")
	if st.ResnapshotRequested != ResnapshotDirect {
		t.Fatalf("resnapshot %q, want %q (the default)", st.ResnapshotRequested, ResnapshotDirect)
	}
	st.apply(nil, SignalResnapshot, "sideways")
	if st.ResnapshotRequested != ResnapshotDirect {
		t.Fatalf("resnapshot %q after a bad mode, want %q kept", st.ResnapshotRequested, ResnapshotDirect)
	}
	st.apply(nil, SignalResnapshot, ResnapshotIncremental)
	if st.ResnapshotRequested != ResnapshotIncremental {
		t.Fatalf("resnapshot %q, want %q", st.ResnapshotRequested, ResnapshotIncremental)
	}
	st.apply(nil, "no-such-signal", "x")
	st.apply(nil, SignalStop, "")
	if !st.Stopping || st.Paused {
		t.Fatalf("stop: stopping %v, paused %v", st.Stopping, st.Paused)
	}
}
