package testskip

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSummaryOfASkippingPackage runs a test binary of this package whose
// tests skip (TestHelperSkips, in a child process) and checks the line it
// appends to LAKEMIRROR_SKIP_REPORT: both tests, sorted, with their
// reasons; the child's exit code stays 0.
func TestSummaryOfASkippingPackage(t *testing.T) {
	if os.Getenv("TESTSKIP_CHILD") != "" {
		t.Skip("the child process")
	}
	report := filepath.Join(t.TempDir(), "skips.txt")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperSkips$")
	cmd.Env = append(os.Environ(), "TESTSKIP_CHILD=1", EnvReport+"="+report)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	got, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	want := "SKIP testskip: 2 tests skipped: TestHelperSkips/mariadb: mariadbd is not installed; install it with: apt-get install -y mariadb-server; " +
		"TestHelperSkips/promtool: promtool not installed (apt-get install prometheus)\n"
	if string(got) != want {
		t.Fatalf("report %q, want %q", got, want)
	}
}

// TestHelperSkips skips twice when run as the child of
// TestSummaryOfASkippingPackage.
func TestHelperSkips(t *testing.T) {
	if os.Getenv("TESTSKIP_CHILD") == "" {
		t.Skip("run by TestSummaryOfASkippingPackage")
	}
	t.Run("promtool", func(t *testing.T) { Skip(t, "promtool not installed (apt-get install prometheus)") })
	t.Run("mariadb", func(t *testing.T) {
		Skip(t, "mariadbd is not installed;\n install it with: apt-get install -y mariadb-server")
	})
}

func TestMain(m *testing.M) { os.Exit(Main(m, "testskip")) }
