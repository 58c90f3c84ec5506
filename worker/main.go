// Command worker is the production lakemirror Temporal worker: it
// executes the table workflows and their activities against the Temporal,
// Kafka and Iceberg catalog given by flags or environment. Before serving
// it checks its wiring (runner.Preflight: Kafka and the catalog reachable,
// the running tables and the other workers on the same catalog) and
// refuses to serve otherwise.
//
// It does not link the embedded dev stack (Temporal server, Web UI, Kafka
// broker): that is the dev worker, ./worker/dev.
//
// Exit codes: 0 stopped by SIGINT/SIGTERM (or -help, -version), 1 failure
// (including a refused wiring check), 2 bad flags.
package main

import (
	"context"
	"os"

	"github.com/lakemirror/lakemirror/worker/internal/workercmd"
)

func main() {
	os.Exit(workercmd.Main(context.Background(), "worker", os.Args[1:], os.Stdout, os.Stderr, nil))
}
