package runner

import (
	"errors"
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

// ownQueue.waiting: a stop waits for the workflows with an activity in
// flight and those whose last activity ended without handing the table
// over from followUpWithin before the stop on; not for one that handed
// it over, nor one whose activity ended earlier (paused, or gone).
func TestOwnQueueWaiting(t *testing.T) {
	q := newOwnQueue()
	stopAt := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	q.start("old")
	q.end("old", false, stopAt.Add(-followUpWithin-time.Second)) // ended long before the stop
	q.start("left")
	q.end("left", true, stopAt.Add(-time.Second)) // handed over
	if got := q.waiting(stopAt); got != 0 {
		t.Fatalf("waiting %d, want 0", got)
	}
	q.start("batch")
	q.end("batch", false, stopAt.Add(-time.Second)) // its next plan comes
	q.start("running")                              // in flight
	if got := q.waiting(stopAt); got != 2 {
		t.Fatalf("waiting %d, want 2 (batch, running)", got)
	}
	q.start("batch") // the follow-up arrives: in flight, counted once
	if got := q.waiting(stopAt); got != 2 {
		t.Fatalf("waiting %d with the follow-up in flight, want 2", got)
	}
	q.end("batch", true, stopAt.Add(time.Second)) // and leaves
	q.end("running", true, stopAt.Add(time.Second))
	if got := q.waiting(stopAt); got != 0 {
		t.Fatalf("waiting %d after both left, want 0", got)
	}
	q.start("job")
	q.end("job", false, stopAt.Add(2*time.Second)) // a job ends after the stop began: its follow-up comes
	if got := q.waiting(stopAt); got != 1 {
		t.Fatalf("waiting %d after a job ended, want 1", got)
	}
	// past its bound, waitHandedOver returns what is still waited for
	now := time.Now()
	q.start("late")
	q.end("late", false, now)
	if got := q.waitHandedOver(now.Add(-handOverWait)); got != 1 {
		t.Fatalf("waitHandedOver past its bound: %d, want 1", got)
	}
}
