package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakemirror/lakemirror/internal/names"
)

// splitKey splits a comma-separated column list, dropping blanks.
func splitKey(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// tableArgs accepts exactly n arguments, the first a table name that
// follows names.TableRule; a name that does not is a usage error (exit
// 2) naming what is wrong and stating the rule, before anything is sent.
func tableArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return err
		}
		if err := names.CheckTable(args[0]); err != nil {
			return usage("%v", err)
		}
		return nil
	}
}
