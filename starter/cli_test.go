package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
)

// cli runs the starter's command line in-process and returns its exit
// code, standard output and standard error. The environment's connection
// settings do not apply unless args leave them out on purpose: tests
// give every address as a flag.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cliContext(t, context.Background(), args...)
}

func cliContext(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for _, env := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "KAFKA_BROKERS", "CATALOG_TYPE", "CATALOG_URI", "WAREHOUSE", "CATALOG_PROPS", "LAKEMIRROR_DATA_DIR", "TEMPORAL_API_KEY"} {
		t.Setenv(env, "") // restored when the test ends
		os.Unsetenv(env)
	}
	var out, errb syncBuffer
	code = runContext(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// syncBuffer is a bytes.Buffer safe for concurrent writes and reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// closedAddr is a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func hasPrefix(s, prefix string) bool { return strings.HasPrefix(s, prefix) }
