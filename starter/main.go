// Command starter is the operator CLI of lakemirror: start a table's
// pipeline, signal it, read its status, dump its Iceberg tables, or run
// the whole thing in one process with `starter demo`.
//
// Exit codes: 0 success, 1 failure (Temporal, Kafka or the catalog not
// reachable, no worker polling, ...), 2 usage error, 3 the table's
// workflow or Iceberg table does not exist, 130 interrupted (Ctrl-C,
// SIGINT), 143 terminated (SIGTERM).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/lakemirror/lakemirror/internal/buildinfo"
	"github.com/lakemirror/lakemirror/internal/config"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitNotFound = 3
	// 128 + the signal's number, as shells report a process the signal
	// ended: the command stopped what it was doing and cleaned up.
	exitInterrupted = 130 // SIGINT (Ctrl-C)
	exitTerminated  = 143 // SIGTERM
)

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func notFound(format string, args ...any) error {
	return &exitError{code: exitNotFound, err: fmt.Errorf(format, args...)}
}

func usage(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// app holds the global settings every subcommand uses.
type app struct {
	settings config.Settings
	binding  *config.Binding
	// in is where confirmations are read from, and interactive tells
	// whether it is a terminal (a command that needs a confirmation
	// refuses without one unless given --yes).
	in          io.Reader
	interactive bool
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args with SIGINT and SIGTERM cancelling the
// command's context: the command stops what it does, cleans up (demo
// stops its embedded stack) and run returns exitInterrupted or
// exitTerminated. A second signal exits at once with the same code.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var got os.Signal
	gotc := make(chan os.Signal, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case s := <-sigs:
			gotc <- s
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintln(stderr, "starter: interrupted again: exiting without cleaning up")
			os.Exit(signalCode(s))
		case <-done:
		}
	}()
	code := runContext(ctx, args, stdout, stderr)
	select {
	case got = <-gotc:
	default:
	}
	if got != nil && code != exitOK {
		return signalCode(got)
	}
	return code
}

// signalCode is the exit code of a command stopped by s.
func signalCode(s os.Signal) int {
	if s == syscall.SIGTERM {
		return exitTerminated
	}
	return exitInterrupted
}

// runContext runs the command line args under ctx, printing to stdout and
// stderr, and returns the exit code. A command that fails because ctx was
// cancelled reports "interrupted".
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{in: os.Stdin, interactive: term.IsTerminal(int(os.Stdin.Fd()))}
	root := a.rootCmd()
	out := &countingWriter{w: stdout}
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	msg := a.settings.Catalog.Redact(err.Error()) // credentials a storage client quoted in its error removed (lakecat.RedactText)
	code := exitCode(err)
	if ctx.Err() != nil {
		msg, code = "interrupted: "+msg, exitInterrupted
	}
	fmt.Fprintln(stderr, "starter:", msg)
	if out.n == 0 && wantsJSON(cmd) {
		// a script reading --output json gets the failure as JSON too
		// (stderr keeps the line for people); a command that printed its
		// result before failing (validate's failed checks) adds nothing
		_ = writeJSON(stdout, jsonError{Error: jsonErrorBody{Message: msg, ExitCode: code, Kind: exitKind(code)}})
	}
	return code
}

// jsonError is what a command run with --output json writes to stdout
// when it fails before writing its result: {"error": {"message": ...,
// "exit_code": 1, "kind": "failure"}}. The exit code and stderr's
// "starter: ..." line are as without --output json.
type jsonError struct {
	Error jsonErrorBody `json:"error"`
}

type jsonErrorBody struct {
	Message  string `json:"message"`   // the error as stderr shows it, without "starter: "
	ExitCode int    `json:"exit_code"` // the process's exit code
	// Kind names the exit code: "failure", "usage", "not_found",
	// "interrupted" or "terminated".
	Kind string `json:"kind"`
}

// exitKind names an exit code for jsonErrorBody.Kind.
func exitKind(code int) string {
	switch code {
	case exitUsage:
		return "usage"
	case exitNotFound:
		return "not_found"
	case exitInterrupted:
		return "interrupted"
	case exitTerminated:
		return "terminated"
	}
	return "failure"
}

// wantsJSON reports whether cmd was run with --output json (-o json):
// given, for dump and demo, whose only format (the default) is JSON lines.
func wantsJSON(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("output")
	return f != nil && f.Value.String() == "json" && (f.Changed || f.DefValue != "json")
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// rootCmd builds the command tree with its global flags.
func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "starter",
		Short: "Operate lakemirror table pipelines (Debezium on Kafka → Iceberg, on Temporal)",
		Long: `starter operates lakemirror: one Temporal workflow per source table applies the
table's Debezium change events from Kafka to the Iceberg tables <ns>.<table>_bronze
(every record), <ns>.<table> (current state with soft deletes), <ns>.<table>_history
(SCD type 2) and <ns>.<table>_quarantine (records that could not be applied).

Connection settings are global flags with environment defaults, shared with the
worker: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, KAFKA_BROKERS, CATALOG_TYPE,
CATALOG_URI, WAREHOUSE, CATALOG_PROPS, LAKEMIRROR_DATA_DIR.

The worker's own flags (--index-memory, --state-dir, --sources, --schema-registry,
...) are left out here: see "worker --help", or "starter demo --help" for the
demo's embedded worker.

Exit codes: 0 success, 1 failure, 2 usage error, 3 no such table or workflow,
130 interrupted (Ctrl-C), 143 terminated (SIGTERM).`,
		Version:       buildinfo.Get().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return a.binding.Finish()
		},
	}
	root.SetVersionTemplate("starter {{.Version}}\n")
	gfs := flag.NewFlagSet("global", flag.ContinueOnError)
	a.binding = a.settings.Bind(gfs)
	root.PersistentFlags().AddGoFlagSet(gfs)
	hideWorkerFlags(root)
	root.AddCommand(a.startCmd(), a.statusCmd(), a.listCmd(), a.dumpCmd(), a.demoCmd(), a.backfillCmd(), a.settingsCmd(), a.waitCmd(),
		a.maintainCmd(), a.scheduleCmd(), a.validateCmd(), a.reconcileCmd(), a.produceCmd(), a.applyCmd(), a.dropCmd(), a.eraseCmd(), a.cutCmd(), a.leaveCmd())
	root.AddCommand(a.signalCmds()...)
	root.AddCommand(a.doctorCmd())
	for _, c := range root.Commands() {
		if c.Name() == "demo" { // its embedded worker reads them
			showWorkerFlags(c)
		}
	}
	return root
}

// workerOnly is the prefix of the usage of the global flags only a worker
// reads (internal/config's Bind): the starter takes them so that one
// environment serves both, and `starter demo` runs a worker in-process.
const workerOnly = "worker only:"

// hideWorkerFlags hides the worker-only global flags from the help of
// every command; showWorkerFlags shows them again in cmd's help.
func hideWorkerFlags(root *cobra.Command) {
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Usage, workerOnly) {
			f.Hidden = true
		}
	})
}

// showWorkerFlags makes cmd's help list the worker-only global flags
// hideWorkerFlags hid (for `starter demo`, whose embedded worker reads
// them), hiding them again afterwards.
func showWorkerFlags(cmd *cobra.Command) {
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		var shown []*pflag.Flag
		c.Root().PersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden && strings.HasPrefix(f.Usage, workerOnly) {
				f.Hidden = false
				shown = append(shown, f)
			}
		})
		defer func() {
			for _, f := range shown {
				f.Hidden = true
			}
		}()
		c.Root().HelpFunc()(c, args)
	})
}

// exitCode maps a command's error to the exit code.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if isUsageError(err) {
		return exitUsage
	}
	return exitFailure
}

// isUsageError recognises cobra's argument and flag errors.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
