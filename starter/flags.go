package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakemirror/lakemirror/internal/names"
)

// splitKey splits a comma-separated column list, trimming the blanks
// around each name as the pipelines file does; an empty entry stays (""),
// for names.CheckColumns to refuse. A blank s is no list (nil).
func splitKey(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	out := strings.Split(s, ",")
	for i, k := range out {
		out[i] = strings.TrimSpace(k)
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
