//go:build !nodev

package main

import (
	"net"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C stops `starter demo` promptly and cleanly: the command returns
// exit code 130 within seconds of SIGINT (143 for SIGTERM), says it was
// interrupted, and its embedded stack is stopped (the Temporal port no
// longer answers). Before, the embedded services swallowed SIGINT and the
// demo ran to its end.
func TestDemoInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded stack")
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitInterrupted}, {syscall.SIGTERM, exitTerminated}} {
		t.Run(c.sig.String(), func(t *testing.T) { demoInterrupted(t, c.sig, c.code) })
	}
}

func demoInterrupted(t *testing.T, sig syscall.Signal, want int) {
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"demo", "--batch-size", "1", "--max-wait", "100ms"}, &out, &errb) }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(errb.String(), "demo: started workflow") {
		select {
		case code := <-done:
			t.Fatalf("demo ended (exit %d) before the signal:\n%s", code, errb.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not start its workflow:\n%s", errb.String())
		}
	}
	m := regexp.MustCompile(`demo: Temporal (127\.0\.0\.1:\d+) `).FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("no Temporal address in:\n%s", errb.String())
	}
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the demo did not stop within 30 s of %s:\n%s", sig, errb.String())
	}
	took := time.Since(sent)
	if code != want || !strings.HasSuffix(errb.String(), "starter: interrupted: context canceled\n") || strings.Contains(errb.String(), "demo: caught up") {
		t.Fatalf("exit %d after %s (want %d), stderr:\n%s", code, sig, want, errb.String())
	}
	if took > 15*time.Second {
		t.Errorf("the demo took %s to stop after %s", took, sig)
	}
	if c, err := net.DialTimeout("tcp", m[1], time.Second); err == nil {
		c.Close()
		t.Errorf("the demo's Temporal at %s still accepts connections after it stopped", m[1])
	}
	t.Logf("stopped %s after %s", took.Round(time.Millisecond), sig)
}
