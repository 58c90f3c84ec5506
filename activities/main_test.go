package activities

import (
	"os"
	"testing"

	"github.com/lakemirror/lakemirror/internal/testskip"
)

// TestMain prints a summary line of the tests skipped for a missing
// package (mariadbd, from Debian's mariadb-server), also without -v.
func TestMain(m *testing.M) { os.Exit(testskip.Main(m, "activities")) }
