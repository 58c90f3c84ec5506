package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/lake"
)

// signals applies the operator signals to the table state. The loop runs
// in its own coroutine so signals take effect while the main loop waits;
// drain catches any still buffered before continue-as-new.
type signals struct {
	st                                         *TableState
	pause, resume, stop, retry, schema, resnap workflow.ReceiveChannel
}

func newSignals(ctx workflow.Context, st *TableState) *signals {
	return &signals{st: st,
		pause:  workflow.GetSignalChannel(ctx, SignalPause),
		resume: workflow.GetSignalChannel(ctx, SignalResume),
		stop:   workflow.GetSignalChannel(ctx, SignalStop),
		retry:  workflow.GetSignalChannel(ctx, SignalRetry),
		schema: workflow.GetSignalChannel(ctx, SignalSchema),
		resnap: workflow.GetSignalChannel(ctx, SignalResnapshot),
	}
}

func (s *signals) loop(ctx workflow.Context) {
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(s.pause, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.Paused = true })
	sel.AddReceive(s.resume, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.Paused = false })
	sel.AddReceive(s.stop, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.Stopping = true })
	sel.AddReceive(s.retry, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.retryRequested = true })
	sel.AddReceive(s.resnap, func(c workflow.ReceiveChannel, _ bool) {
		var m string
		c.Receive(ctx, &m)
		s.st.setResnapshot(ctx, m)
	})
	sel.AddReceive(s.schema, func(c workflow.ReceiveChannel, _ bool) {
		var d string
		c.Receive(ctx, &d)
		s.st.setSchemaDecision(ctx, d)
	})
	for {
		sel.Select(ctx)
	}
}

func (s *signals) drain() {
	for s.pause.ReceiveAsync(nil) {
		s.st.Paused = true
	}
	for s.resume.ReceiveAsync(nil) {
		s.st.Paused = false
	}
	for s.stop.ReceiveAsync(nil) {
		s.st.Stopping = true
	}
	for s.retry.ReceiveAsync(nil) {
		s.st.retryRequested = true
	}
	var d string
	for s.schema.ReceiveAsync(&d) {
		s.st.setSchemaDecision(nil, d)
	}
	for s.resnap.ReceiveAsync(&d) {
		s.st.setResnapshot(nil, d)
	}
}

// setSchemaDecision takes an operator's schema decision; anything but
// "evolve" or "skip" is logged and ignored.
func (st *TableState) setSchemaDecision(ctx workflow.Context, d string) {
	if d != lake.DecisionEvolve && d != lake.DecisionSkip {
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
