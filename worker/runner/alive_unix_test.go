//go:build unix

package runner

import (
	"os"
	"os/exec"
	"testing"
)

// processAlive tells this process (alive) from one that exited and was
// reaped (gone).
func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Fatal("this process counts as dead")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if processAlive(cmd.Process.Pid) {
		t.Fatalf("exited process %d counts as alive", cmd.Process.Pid)
	}
}
