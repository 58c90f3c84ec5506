package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/lake"
)

// signals applies the operator signals to the table state. The loop runs
// in its own coroutine so signals take effect while the main loop waits;
// drain catches any still buffered before continue-as-new.
type signals struct {
	st                                 *TableState
	pause, resume, stop, retry, schema workflow.ReceiveChannel
}

func newSignals(ctx workflow.Context, st *TableState) *signals {
	return &signals{st: st,
		pause:  workflow.GetSignalChannel(ctx, SignalPause),
		resume: workflow.GetSignalChannel(ctx, SignalResume),
		stop:   workflow.GetSignalChannel(ctx, SignalStop),
		retry:  workflow.GetSignalChannel(ctx, SignalRetry),
		schema: workflow.GetSignalChannel(ctx, SignalSchema),
	}
}

func (s *signals) loop(ctx workflow.Context) {
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(s.pause, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.Paused = true })
	sel.AddReceive(s.resume, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.Paused = false })
	sel.AddReceive(s.stop, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.Stopping = true })
	sel.AddReceive(s.retry, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.retryRequested = true })
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
