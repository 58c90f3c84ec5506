package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lakemirror/lakemirror/internal/lake"
)

func (a *app) dumpCmd() *cobra.Command {
	var history, bronze bool
	cmd := &cobra.Command{
		Use:   "dump TABLE",
		Short: "Print a table's Iceberg rows as JSON lines sorted by key",
		Long: `dump reads the current Iceberg snapshot of a table's mirror (default), bronze
(--bronze, sorted by partition and offset) or history (--history) table straight
from the catalog and prints one JSON object per row. Decimals are strings with
their scale, timestamps RFC 3339 in UTC.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := lake.ParseTableName(args[0])
			if err != nil {
				return usage("%v", err)
			}
			if history && bronze {
				return usage("--history and --bronze exclude each other")
			}
			cat, err := lake.OpenCatalog(cmd.Context(), a.settings.Catalog)
			if err != nil {
				return err
			}
			ident, sortCols := name.Mirror(), []string(nil)
			switch {
			case bronze:
				ident, sortCols = name.Bronze(), []string{lake.BronzeTopic, lake.BronzePartition, lake.BronzeOffset}
			case history:
				ident = name.History()
			}
			tbl, err := lake.LoadTable(cmd.Context(), cat, ident)
			if err != nil {
				return err
			}
			if tbl == nil {
				return notFound("table %v does not exist", ident)
			}
			if sortCols == nil {
				if sortCols, err = lake.KeyColumnsOf(tbl); err != nil {
					return err
				}
				if history {
					sortCols = append(sortCols, lake.ColSeq)
				}
			}
			rows, cols, err := lake.ReadRows(cmd.Context(), tbl, sortCols)
			if err != nil {
				return err
			}
			if err := lake.WriteJSONLines(cmd.OutOrStdout(), rows, cols); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&history, "history", false, "dump the SCD type 2 history table")
	cmd.Flags().BoolVar(&bronze, "bronze", false, "dump the bronze table (every Kafka record)")
	return cmd
}
