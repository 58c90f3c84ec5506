package dashboards

import (
	"os"
	"testing"

	"github.com/lakemirror/lakemirror/internal/testskip"
)

// TestMain prints a summary line of the tests skipped for a missing
// package (promtool, from Debian's prometheus), also without -v.
func TestMain(m *testing.M) { os.Exit(testskip.Main(m, "dashboards")) }
