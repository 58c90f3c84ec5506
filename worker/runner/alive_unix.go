//go:build unix

package runner

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with pid exists on this machine
// (signal 0: ESRCH means none; EPERM means one of another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}
