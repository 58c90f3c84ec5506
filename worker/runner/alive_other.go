//go:build !unix

package runner

// processAlive cannot tell on this system: every process counts as alive.
func processAlive(int) bool { return true }
