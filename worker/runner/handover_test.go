package runner

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
)

// handedOver: only a plan or batch with Leaving and the WorkerLeaving
// error hand a table over; other results and errors leave a follow-up on
// the worker's own queue.
func TestHandedOver(t *testing.T) {
	leave := temporal.NewApplicationError("stopping", activities.ErrTypeWorkerLeaving)
	for _, c := range []struct {
		name string
		res  any
		err  error
		want bool
	}{
		{"plan leaving", activities.Plan{Leaving: true}, nil, true},
		{"plan", activities.Plan{}, nil, false},
		{"batch leaving", activities.ApplyResult{Leaving: true}, nil, true},
		{"batch", activities.ApplyResult{Release: true}, nil, false},
		{"worker leaving", nil, leave, true},
		{"wrapped worker leaving", nil, errors.Join(errors.New("rebuild"), leave), true},
		{"other error", nil, temporal.NewApplicationError("boom", "Other"), false},
		{"other result", 3, nil, false},
	} {
		if got := handedOver(c.res, c.err); got != c.want {
			t.Errorf("%s: handedOver %v, want %v", c.name, got, c.want)
		}
	}
}

// ownQueue.waitingFor: a stop waits for the workflows with an activity
// in flight and those whose last activity ended without handing the
// table over from followUpWithin before the stop on; not for one that
// handed it over, nor one whose activity ended earlier (paused, or gone).
func TestOwnQueueWaiting(t *testing.T) {
	q := newOwnQueue()
	stopAt := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	waiting := func() string {
		running, ended := q.waitingFor(stopAt)
		slices.Sort(running)
		slices.Sort(ended)
		return fmt.Sprintf("running %v, ended %v", running, ended)
	}
	q.start("old")
	q.end("old", false, stopAt.Add(-followUpWithin-time.Second)) // ended long before the stop
	q.start("left")
	q.end("left", true, stopAt.Add(-time.Second)) // handed over
	if got, want := waiting(), "running [], ended []"; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
	q.start("batch")
	q.end("batch", false, stopAt.Add(-time.Second)) // its next plan comes
	q.start("running")                              // in flight
	if got, want := waiting(), "running [running], ended [batch]"; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
	q.start("batch") // the follow-up arrives: in flight
	if got, want := waiting(), "running [batch running], ended []"; got != want {
		t.Fatalf("with the follow-up in flight: %s, want %s", got, want)
	}
	q.end("batch", true, stopAt.Add(time.Second)) // and leaves
	q.end("running", true, stopAt.Add(time.Second))
	if got, want := waiting(), "running [], ended []"; got != want {
		t.Fatalf("after both left: %s, want %s", got, want)
	}
	q.start("job")
	q.end("job", false, stopAt.Add(2*time.Second)) // a job ends after the stop began: its follow-up comes
	if got, want := waiting(), "running [], ended [job]"; got != want {
		t.Fatalf("after a job ended: %s, want %s", got, want)
	}
}

// waitHandedOver returns at once when the workflows it waits for are
// closed, and past its bound with the number still waited for.
func TestWaitHandedOver(t *testing.T) {
	q := newOwnQueue()
	now := time.Now()
	q.start("stopped")
	q.end("stopped", false, now)
	var asked []string
	if got := q.waitHandedOver(now, func(id string) bool { asked = append(asked, id); return false }); got != 0 || fmt.Sprint(asked) != "[stopped]" {
		t.Fatalf("a closed workflow: waitHandedOver %d, asked %v; want 0, [stopped]", got, asked)
	}
	if got := q.waitHandedOver(now.Add(-handOverWait), func(string) bool { return true }); got != 1 {
		t.Fatalf("past its bound: waitHandedOver %d, want 1", got)
	}
}
