package workflows

import (
	"os"
	"testing"

	"go.temporal.io/sdk/worker"
)

// TestMain names the binary for the SDK before any test runs. Without a
// name, the test environment computes the MD5 of the test binary (about
// 190 MB) inside the first workflow that schedules an activity, on the
// workflow goroutine: on a loaded machine that takes over a second, and
// the SDK's deadlock detector (1 s) fails that test
// (TestJobsRunOnTheTableOwner, the first in file order) with TMPRL1101.
func TestMain(m *testing.M) {
	worker.SetBinaryChecksum("lakemirror-workflows-test")
	os.Exit(m.Run())
}
