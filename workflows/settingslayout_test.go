package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/layout"
)

// A settings request made from the table's layout passes, however its
// fields and codecs are spelt; one made from another layout is refused
// and says to run the command again; one without LayoutFrom is not
// checked.
func TestSettingsLayoutFrom(t *testing.T) {
	cur := layout.Tables{Mirror: layout.Spec{PartitionBy: []string{"bucket(4, id)"}, Compression: "zstd:3"}, Bronze: layout.Spec{Compression: "snappy"}}
	spelt := layout.Tables{Mirror: layout.Spec{PartitionBy: []string{" bucket(4, id) "}, SortBy: []string{}, Compression: "ZSTD:3"}, Bronze: layout.Spec{Compression: "SNAPPY"}}
	other := cur
	other.Mirror.Compression = "gzip"
	const refused = "the table's layout changed after this request read it (another settings update at the same time?); nothing was changed: run the command again to apply it to the layout as it is now"
	for _, c := range []struct {
		from *layout.Tables
		want string
	}{{nil, ""}, {&cur, ""}, {&spelt, ""}, {&other, refused}, {&layout.Tables{}, refused}} {
		err := SettingsRequest{LayoutFrom: c.from}.CheckLayoutFrom(cur)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("from %+v: %q, want %q", c.from, got, c.want)
		}
	}
}

// Two settings runs at once, each made from the layout it read: one
// changes the mirror's codec, the other (made from the same layout)
// its partitioning. The second reaches the table after the first (in
// the run the first's change started) and is refused instead of putting
// the old codec back; made again from the layout as it is, it applies.
func TestSettingsInterleavedLayoutRefused(t *testing.T) {
	read := spec.Layout // what both runs read
	codec := read.Mirror
	codec.Compression = "snappy"
	parts := read.Mirror
	parts.PartitionBy = []string{"bucket(8, id)"}
	run := func(in TableInput, send ...func(env *testsuite.TestWorkflowEnvironment)) TableInput {
		t.Helper()
		env, acts := newEnv(t)
		env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 4}}, nil)
		env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(spec.MaxWait).Return(activities.Plan{Offsets: lake.Offsets{0: 4}, HighWatermarks: lake.Offsets{0: 4}}, nil)
		for i, f := range send {
			env.RegisterDelayedCallback(func() { f(env) }, time.Duration(5+i)*time.Second)
		}
		env.ExecuteWorkflow(TableWorkflow, in)
		require.True(t, env.IsWorkflowCompleted())
		return continued(t, env) // a settings change starts a new run
	}
	next := run(TableInput{Spec: spec}, func(env *testsuite.TestWorkflowEnvironment) {
		env.UpdateWorkflow(UpdateSettings, "codec", &updateCallbacks{t: t}, SettingsRequest{MirrorLayout: &codec, LayoutFrom: &read})
	})
	require.Equal(t, "snappy", next.Spec.Layout.Mirror.Compression)
	var rejected error
	last := run(next, func(env *testsuite.TestWorkflowEnvironment) {
		env.UpdateWorkflow(UpdateSettings, "parts", &rejectCallbacks{err: &rejected}, SettingsRequest{MirrorLayout: &parts, LayoutFrom: &read})
	}, func(env *testsuite.TestWorkflowEnvironment) {
		require.ErrorContains(t, rejected, "the table's layout changed after this request read it")
		require.Equal(t, "snappy", status(t, env).Spec.Layout.Mirror.Compression)
		now := status(t, env).Spec.Layout // as starter settings reads it: through the status query's JSON
		require.Empty(t, now.Mirror.PartitionBy)
		again := now.Mirror
		again.PartitionBy = parts.PartitionBy
		env.UpdateWorkflow(UpdateSettings, "parts again", &updateCallbacks{t: t}, SettingsRequest{MirrorLayout: &again, LayoutFrom: &now})
	})
	require.Equal(t, layout.Spec{PartitionBy: []string{"bucket(8, id)"}, Compression: "snappy"}, last.Spec.Layout.Mirror)
}

// rejectCallbacks records an update's rejection; an accepted update is
// an error.
type rejectCallbacks struct{ err *error }

func (u *rejectCallbacks) Accept()             {}
func (u *rejectCallbacks) Reject(err error)    { *u.err = err }
func (u *rejectCallbacks) Complete(any, error) { *u.err = errAccepted }

var errAccepted = errAcceptedT{}

type errAcceptedT struct{}

func (errAcceptedT) Error() string { return "the update was accepted" }
