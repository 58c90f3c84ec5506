package runner

import (
	"maps"
	"slices"
	"testing"
	"time"

	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The live workers of the fleet: a poller counts while it polled within
// pollerFresh, unless its worker id was reported gone and it has not
// polled since, or it runs on this host under a pid that is no process.
func TestLiveWorkers(t *testing.T) {
	now := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	poller := func(identity string, ago time.Duration) *taskqueuepb.PollerInfo {
		return &taskqueuepb.PollerInfo{Identity: identity, LastAccessTime: timestamppb.New(now.Add(-ago))}
	}
	pollers := []*taskqueuepb.PollerInfo{
		poller("101@hostA lakemirror/v1 catalog/c worker/aaa", time.Second),      // live
		poller("102@hostA lakemirror/v1 catalog/c worker/bbb", 40*time.Second),   // killed on this host: pid 102 is gone
		poller("103@hostB lakemirror/v1 catalog/c worker/ccc", 20*time.Second),   // reported gone 10 s ago, no poll since
		poller("104@hostB lakemirror/v1 catalog/c worker/ddd", 2*time.Second),    // reported gone 10 s ago, polled since
		poller("105@hostB lakemirror/v1 catalog/c worker/eee", 100*time.Second),  // too old
		poller("106@hostA@", 30*time.Second),                                     // not a lakemirror identity: pid 106 lives
		poller("107@hostC lakemirror/v1 catalog/c worker/fff", 59*time.Second),   // another host, idle in a long poll
		poller("badpid@hostA lakemirror/v1 catalog/c worker/ggg", 3*time.Second), // no pid to check
	}
	gone := map[string]time.Time{"ccc": now.Add(-10 * time.Second), "ddd": now.Add(-10 * time.Second)}
	alive := func(pid int) bool { return pid != 102 }
	got := slices.Sorted(maps.Keys(liveWorkers(pollers, gone, "hostA", alive, now)))
	want := []string{
		"101@hostA lakemirror/v1 catalog/c worker/aaa",
		"104@hostB lakemirror/v1 catalog/c worker/ddd",
		"106@hostA@",
		"107@hostC lakemirror/v1 catalog/c worker/fff",
		"badpid@hostA lakemirror/v1 catalog/c worker/ggg",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("live workers %q, want %q", got, want)
	}
	// host unknown: only the gone marks and the poll times count
	if got := len(liveWorkers(pollers, gone, "", alive, now)); got != 6 {
		t.Fatalf("live workers without a host: %d, want 6", got)
	}
}

// A queue reported gone marks its worker id; other queues are ignored.
func TestFleetMarkGone(t *testing.T) {
	f := &fleet{at: time.Now()}
	f.markGone(WorkerQueue("abc123"))
	f.markGone("other-queue")
	f.markGone(WorkerQueue(""))
	if len(f.gone) != 1 || f.gone["abc123"].IsZero() {
		t.Fatalf("gone %v, want only abc123", f.gone)
	}
	if !f.at.IsZero() {
		t.Fatal("a mark must make the next count ask Temporal anew")
	}
}

func TestPidHost(t *testing.T) {
	for _, c := range []struct {
		in   string
		pid  int
		host string
		ok   bool
	}{{"12@h", 12, "h", true}, {"12@", 0, "", false}, {"@h", 0, "", false}, {"x1@h", 0, "", false}, {"0@h", 0, "h", false}, {"99999999999@h", 0, "", false}} {
		pid, host, ok := pidHost(c.in)
		if pid != c.pid || host != c.host || ok != c.ok {
			t.Errorf("pidHost(%q) = %d, %q, %v; want %d, %q, %v", c.in, pid, host, ok, c.pid, c.host, c.ok)
		}
	}
}
