package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// Timeouts of the starter's Temporal calls: connecting (and checking the
// namespace), and one status query (a worker answers in milliseconds).
const (
	dialTimeout  = 10 * time.Second
	queryTimeout = 10 * time.Second
)

// devHint says how to get a Temporal server and a worker to talk to.
const devHint = "start the worker with its embedded dev stack (`go run ./worker/dev`), or point the starter at your Temporal with --temporal-address host:port or TEMPORAL_ADDRESS (and --namespace or TEMPORAL_NAMESPACE)"

// dial connects to the Temporal frontend of the settings within
// dialTimeout and checks that the namespace exists. Errors (exit code 1)
// name the address and namespace and how to fix them.
func (a *app) dial(ctx context.Context) (client.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	addr, ns := a.settings.TemporalAddress, a.settings.Namespace
	c, err := runner.DialContext(dctx, a.settings, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot reach Temporal at %s (namespace %s): %v\n  fix: %s", addr, ns, runner.DialCause(err), devHint)
	}
	_, err = c.WorkflowService().DescribeNamespace(dctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
	var nf *serviceerror.NamespaceNotFound
	if errors.As(err, &nf) {
		c.Close()
		return nil, fmt.Errorf("namespace %q does not exist on Temporal at %s\n  fix: create it (temporal operator namespace create --namespace %s) or name yours with --namespace or TEMPORAL_NAMESPACE", ns, addr, ns)
	}
	return c, nil // other errors (no permission to describe namespaces) are left to the calls that follow
}

// pollers returns the workers polling the lakemirror task queue for
// workflow tasks, as Temporal lists them (a worker that stopped stays
// listed for a few minutes).
func pollers(ctx context.Context, c client.Client) ([]runner.Poller, []time.Time, error) {
	resp, err := c.DescribeTaskQueue(ctx, activities.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return nil, nil, err
	}
	var ps []runner.Poller
	var seen []time.Time
	for _, p := range resp.GetPollers() {
		ps = append(ps, runner.ParsePoller(p.GetIdentity()))
		seen = append(seen, p.GetLastAccessTime().AsTime())
	}
	return ps, seen, nil
}

// requireWorker fails (exit code 1) when no worker polls the lakemirror
// task queue: queries and updates would wait for one until they time out.
// With a table, a table that does not exist is reported first (exit 3).
func (a *app) requireWorker(ctx context.Context, c client.Client, table string) error {
	ps, _, err := pollers(ctx, c)
	if err != nil {
		return fmt.Errorf("describe task queue %q on Temporal at %s: %w", activities.TaskQueue, a.settings.TemporalAddress, err)
	}
	if len(ps) > 0 {
		return nil
	}
	if table != "" {
		if _, err := c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(table), ""); err != nil {
			if err := notFoundOr(table, err); err != nil {
				return err
			}
		}
	}
	return a.noWorker()
}

// noWorker is the error of a command that needs a worker and has none.
func (a *app) noWorker() error {
	return fmt.Errorf("no worker is polling task queue %q on Temporal at %s (namespace %s): the tables' workflows wait for one\n  fix: start the worker with the same TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE (`worker`), or `go run ./worker/dev` for the embedded dev stack",
		activities.TaskQueue, a.settings.TemporalAddress, a.settings.Namespace)
}

// warnNoWorker tells w when no worker polls the task queue (then), for
// commands whose effect waits for one; an error describing the queue is
// not reported.
func (a *app) warnNoWorker(ctx context.Context, w io.Writer, c client.Client, then string) {
	if ps, _, err := pollers(ctx, c); err == nil && len(ps) == 0 {
		fmt.Fprintf(w, "starter: warning: no worker is polling task queue %q on Temporal at %s (namespace %s); %s: start the worker (`worker`, or `go run ./worker/dev` for the dev stack)\n",
			activities.TaskQueue, a.settings.TemporalAddress, a.settings.Namespace, then)
	}
}

// dialWorker is dial then requireWorker: for commands that query or
// update a table workflow.
func (a *app) dialWorker(ctx context.Context, table string) (client.Client, error) {
	c, err := a.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.requireWorker(ctx, c, table); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// explainQuery turns a status query's timeout (after waited) into what
// it means: the workers Temporal lists did not answer.
func explainQuery(ctx context.Context, c client.Client, table string, err error, waited time.Duration) error {
	var dl *serviceerror.DeadlineExceeded
	if !errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &dl) {
		return err
	}
	if ctx.Err() != nil { // the caller's own deadline or an interrupt
		return err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ps, seen, perr := pollers(dctx, c)
	if perr != nil || len(ps) == 0 {
		return fmt.Errorf("the status query of %s got no answer in %s: no worker is polling task queue %q\n  fix: start the worker (`worker`, or `go run ./worker/dev` for the dev stack)", table, waited.Round(time.Second), activities.TaskQueue)
	}
	var who []string
	for i, p := range ps {
		who = append(who, fmt.Sprintf("%s (last polled %s ago)", p.Identity, time.Since(seen[i]).Round(time.Second)))
	}
	sort.Strings(who)
	return fmt.Errorf("the status query of %s got no answer in %s from the workers polling task queue %q: %s; they may be stopped (Temporal lists a stopped worker for a few minutes), overloaded or stuck: check their logs",
		table, waited.Round(time.Second), activities.TaskQueue, strings.Join(who, ", "))
}
