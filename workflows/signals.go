package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// signals applies the operator signals to the table state. The loop runs
// in its own coroutine so signals take effect while the main loop waits;
// drain catches any still buffered before continue-as-new. Both hand
// every signal to one reducer, TableState.apply.
type signals struct {
	st    *TableState
	chans []signalChan
}

// signalChan is one signal's channel and whether its payload is a string
// (the others carry none).
type signalChan struct {
	name    string
	ch      workflow.ReceiveChannel
	payload bool
}

// signalsIn is the order in which drain takes buffered signals: every
// buffered signal of a name before the next name. The SDK keeps the order
// of one name's signals, not the order across names (Temporal delivers
// every signal of a workflow task to its channel before the workflow code
// runs, and a selector takes ready channels in the order they were
// added): separate pause and resume signals that reach the workflow in
// one task apply every pause before every resume, whatever order they
// were sent in. SignalControl carries both on one channel, so they apply
// in the order sent; the starter sends it. Control is added last, so
// histories recorded before it replay as they ran; the group's cut
// signal after it (no table got it before).
var signalsIn = []struct {
	name    string
	payload bool
}{{SignalPause, false}, {SignalResume, false}, {SignalStop, false}, {SignalRetry, false}, {SignalSchema, true}, {SignalResnapshot, true}, {SignalControl, true}, {SignalGroupCut, true}}

func newSignals(ctx workflow.Context, st *TableState) *signals {
	s := &signals{st: st}
	for _, d := range signalsIn {
		s.chans = append(s.chans, signalChan{name: d.name, ch: workflow.GetSignalChannel(ctx, d.name), payload: d.payload})
	}
	return s
}

func (s *signals) loop(ctx workflow.Context) {
	sel := workflow.NewSelector(ctx)
	for _, c := range s.chans {
		sel.AddReceive(c.ch, func(ch workflow.ReceiveChannel, _ bool) {
			var arg string
			if c.payload {
				ch.Receive(ctx, &arg)
			} else {
				ch.Receive(ctx, nil)
			}
			s.st.apply(ctx, c.name, arg)
		})
	}
	for {
		sel.Select(ctx)
	}
}

// settle lets the signals coroutine apply every signal delivered so far
// before the caller reads the state. The SDK hands a signal sent to a
// channel that a blocked selector waits on to that selector at once, and
// buffers the ones after it; drain, run by the main coroutine first in a
// workflow task that also completed an activity, would then apply the
// buffered signals before the one the selector holds, out of the order
// sent (four control signals resume, pause, resume, pause ended resumed).
// settle yields once (no command: an Await whose condition is false only
// on its first check), so the signals coroutine, which applies them in
// order, runs first.
func (s *signals) settle(ctx workflow.Context) {
	checked := false
	_ = workflow.Await(ctx, func() bool {
		if checked {
			return true
		}
		checked = true
		return false
	})
}

func (s *signals) drain() {
	for _, c := range s.chans {
		for {
			var arg string
			var ok bool
			if c.payload {
				ok = c.ch.ReceiveAsync(&arg)
			} else {
				ok = c.ch.ReceiveAsync(nil)
			}
			if !ok {
				break
			}
			s.st.apply(nil, c.name, arg)
		}
	}
}

// apply is the one reducer of the operator signals (names.go): it changes
// the table state as signal name with its string payload arg asks. ctx is
// nil when a buffered signal is drained (nothing is logged then).
func (st *TableState) apply(ctx workflow.Context, name, arg string) {
	switch name {
	case SignalPause:
		st.Paused = true
	case SignalResume:
		st.Paused = false
	case SignalStop:
		st.Stopping = true
	case SignalRetry:
		st.retryRequested = true
	case SignalSchema:
		st.setSchemaDecision(ctx, arg)
	case SignalResnapshot:
		st.setResnapshot(ctx, arg)
	case SignalControl:
		st.control(ctx, arg)
	case SignalGroupCut:
		st.groupCut(ctx, arg)
	}
}

// control applies a control signal's payload: "pause" or "resume" as the
// signals of those names; anything else is logged and ignored.
func (st *TableState) control(ctx workflow.Context, op string) {
	switch op {
	case SignalPause, SignalResume:
		st.apply(ctx, op, "")
	default:
		if ctx != nil {
			workflow.GetLogger(ctx).Warn("ignoring control signal", "op", op)
		}
	}
}

// setSchemaDecision takes an operator's schema decision; anything but
// "evolve" or "skip" is logged and ignored.
func (st *TableState) setSchemaDecision(ctx workflow.Context, d string) {
	if d != payload.DecisionEvolve && d != payload.DecisionSkip {
		if ctx != nil {
			workflow.GetLogger(ctx).Warn("ignoring schema decision", "decision", d)
		}
		return
	}
	st.schemaDecision = d
}

// setResnapshot queues a re-snapshot ("direct" or "incremental"; "" means
// direct).
func (st *TableState) setResnapshot(ctx workflow.Context, mode string) {
	if mode == "" {
		mode = ResnapshotDirect
	}
	if mode != ResnapshotDirect && mode != ResnapshotIncremental {
		if ctx != nil {
			workflow.GetLogger(ctx).Warn("ignoring resnapshot mode", "mode", mode)
		}
		return
	}
	st.ResnapshotRequested = mode
}
