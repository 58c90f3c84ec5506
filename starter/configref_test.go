package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/pipelines"
)

// configRefPath is the configuration reference this test generates from
// the command tree and the pipelines file's types.
const configRefPath = "../docs/configuration.md"

// TestConfigurationReference keeps docs/configuration.md equal to what the
// code declares: every command's flags with their defaults and help, the
// global flags with their environment variables, and every key of the
// pipelines file. After changing a flag or a key, regenerate it with
//
//	UPDATE_DOCS=1 go test ./starter -run TestConfigurationReference
func TestConfigurationReference(t *testing.T) {
	for _, kv := range os.Environ() { // defaults as a clean environment gives them
		name, _, _ := strings.Cut(kv, "=")
		for _, p := range []string{"TEMPORAL_", "KAFKA_", "CATALOG_", "WAREHOUSE", "LAKEMIRROR_", "SCHEMA_REGISTRY_"} {
			if strings.HasPrefix(name, p) {
				t.Setenv(name, "")
				os.Unsetenv(name)
			}
		}
	}
	got := configurationReference((&app{}).rootCmd())
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.WriteFile(configRefPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(configRefPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Fatalf("docs/configuration.md is out of date with the flags and the pipelines file's keys: regenerate it with\n\tUPDATE_DOCS=1 go test ./starter -run TestConfigurationReference\n(first difference at byte %d)", firstDiff(string(want), got))
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// configurationReference renders the reference in Markdown.
func configurationReference(root *cobra.Command) string {
	var b bytes.Buffer
	b.WriteString(`# Configuration reference

Generated from the code by ` + "`UPDATE_DOCS=1 go test ./starter -run TestConfigurationReference`" + `
(the test fails when this file and the code disagree). What the settings mean
in practice is in [operating.md](operating.md) and [pipelines.md](pipelines.md).

## Connection settings (the worker and every starter command)

The worker (` + "`worker`, `worker-dev`" + `) and ` + "`starter`" + ` share these flags; each
reads its environment variable when the flag is not given. Settings marked
"worker only" are read by the worker alone.

`)
	flagTable(&b, root.PersistentFlags())
	b.WriteString("\n## starter commands\n")
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		writeCommand(&b, c, "starter")
	}
	b.WriteString("\n## Table settings: one name each\n\n")
	b.WriteString("These settings have one home (`internal/payload`, `Settings`): the same name is the pipelines file's key and, with `-` for `_`, the flag of `starter start` and (when a running table may change it) of `starter settings`; errors name them so. The other spellings are accepted too (the JSON names of `status --output json`'s spec).\n\n")
	b.WriteString("| setting | flag | other spellings | default | a running table takes a change |\n|---|---|---|---|---|\n")
	for _, st := range payload.Settings {
		def := "–"
		if v := st.Format(st.Get(payload.TableSpec{}.Defaults())); v != "" {
			def = "`" + v + "`"
		}
		alias := "–"
		if len(st.Aliases) > 0 {
			alias = "`" + strings.Join(st.Aliases, "`, `") + "`"
		}
		live := "no (fixed at start)"
		if st.Live {
			live = "yes (`starter settings`, `starter apply`)"
		}
		if st.PerGroup {
			live += "; a group's: the pipelines file gives it under `groups.NAME`"
		}
		fmt.Fprintf(&b, "| `%s` | `--%s` | %s | %s | %s |\n", st.Name, st.Flag(), alias, def, live)
	}
	b.WriteString("\n## The pipelines file (`starter apply -f`)\n\n")
	b.WriteString("Each key of a pipeline means what the `starter start` flag of the same name (with `-` for `_`) means; [pipelines.md](pipelines.md) has the schema and an example.\n\n")
	b.WriteString("| block | keys |\n|---|---|\n")
	for _, g := range pipelines.Fields() {
		fmt.Fprintf(&b, "| %s | `%s` |\n", g.Block, strings.Join(g.Fields, "`, `"))
	}
	return b.String()
}

func writeCommand(b *bytes.Buffer, c *cobra.Command, parent string) {
	path := parent + " " + c.Name()
	fmt.Fprintf(b, "\n### `%s`\n\n%s\n\n", path, mdEscape(c.Short))
	if c.HasAvailableLocalFlags() {
		flagTable(b, c.LocalNonPersistentFlags())
	}
	for _, sub := range c.Commands() {
		if !sub.Hidden {
			writeCommand(b, sub, path)
		}
	}
}

func flagTable(b *bytes.Buffer, fs *pflag.FlagSet) {
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden && !strings.HasPrefix(f.Usage, workerOnly) || f.Name == "help" || f.Name == "version" { // the worker's flags, hidden from starter's help, are documented
			return
		}
		if n == 0 {
			b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
		}
		n++
		def := f.DefValue
		if def == "" || def == "[]" {
			def = "–"
		} else {
			def = "`" + def + "`"
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", name, mdEscape(def), mdEscape(f.Usage))
	})
	if n == 0 {
		b.WriteString("No flags of its own.\n")
	}
}

// mdEscape keeps a text on one table row.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
