package workflows

import "go.temporal.io/sdk/workflow"

// signals applies the operator signals to the table state. The loop runs
// in its own coroutine so signals take effect while the main loop waits;
// drain catches any still buffered before continue-as-new.
type signals struct {
	st                         *TableState
	pause, resume, stop, retry workflow.ReceiveChannel
}

func newSignals(ctx workflow.Context, st *TableState) *signals {
	return &signals{st: st,
		pause:  workflow.GetSignalChannel(ctx, SignalPause),
		resume: workflow.GetSignalChannel(ctx, SignalResume),
		stop:   workflow.GetSignalChannel(ctx, SignalStop),
		retry:  workflow.GetSignalChannel(ctx, SignalRetry),
	}
}

func (s *signals) loop(ctx workflow.Context) {
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(s.pause, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.Paused = true })
	sel.AddReceive(s.resume, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.Paused = false })
	sel.AddReceive(s.stop, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.Stopping = true })
	sel.AddReceive(s.retry, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.st.retryRequested = true })
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
}
