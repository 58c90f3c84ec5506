package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/schemas"
)

func (a *app) dumpCmd() *cobra.Command {
	var history, bronze, quarantine bool
	var out jsonLinesFlag
	cmd := &cobra.Command{
		Use:   "dump TABLE",
		Short: "Print a table's Iceberg rows as JSON lines sorted by key",
		Long: `dump reads the current Iceberg snapshot of a table's mirror (default), bronze
(--bronze, sorted by partition and offset), history (--history) or quarantine
(--quarantine: records kept aside with their stage and reason, sorted by
partition and offset) table straight from the catalog and prints one JSON
object per row. Decimals are strings with their scale, timestamps RFC 3339 in
UTC, binary values (Kafka keys and values) text when they are UTF-8. A
quarantined record whose Kafka key decodes to the mirror's key columns also
has key_text, the key as people read it ("order_id=2001"), after kafka_key.`,
		Args: tableArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check("dump"); err != nil {
				return err
			}
			name, err := lake.ParseTableName(args[0])
			if err != nil {
				return usage("%v", err)
			}
			for suffix, flag := range map[string]string{"_bronze": "--bronze", "_history": "--history", "_quarantine": "--quarantine"} {
				if base, ok := strings.CutSuffix(name.Name, suffix); ok {
					return usage("name the pipeline's table and pick the table with a flag: dump %s.%s %s", name.Namespace, base, flag)
				}
			}
			if n := btoi(history) + btoi(bronze) + btoi(quarantine); n > 1 {
				return usage("--history, --bronze and --quarantine exclude each other")
			}
			if path := a.settings.Catalog.LocalCatalogMissing(); path != "" {
				return notFound("no Iceberg catalog at %s: run dump where the worker keeps its data (--data-dir, env LAKEMIRROR_DATA_DIR) or give --catalog-uri", path)
			}
			cat, err := lake.OpenCatalog(cmd.Context(), a.settings.Catalog)
			if err != nil {
				return err
			}
			ident, sortCols := name.Mirror(), []string(nil)
			switch {
			case bronze:
				ident, sortCols = name.Bronze(), []string{lakecat.BronzeTopic, lakecat.BronzePartition, lake.BronzeOffset}
			case quarantine:
				ident, sortCols = name.Quarantine(), []string{lakecat.BronzeTopic, lakecat.BronzePartition, lake.BronzeOffset, lake.ColStage}
			case history:
				ident = name.History()
			}
			tbl, err := lake.LoadTable(cmd.Context(), cat, ident)
			if err != nil {
				return err
			}
			if tbl == nil && quarantine {
				fmt.Fprintf(cmd.ErrOrStderr(), "no record of %s was quarantined (%s does not exist yet)\n", name, lake.IdentString(ident))
				return nil
			}
			if tbl == nil {
				return notFound("table %s does not exist", lake.IdentString(ident))
			}
			if sortCols == nil {
				if sortCols, err = lakecat.KeyColumnsOf(tbl); err != nil {
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
			if quarantine {
				// The key as "col=value" where the mirror names the key
				// columns; without them (no mirror yet) the raw key only.
				if keyCols, err := lake.MirrorKeyColumns(cmd.Context(), cat, name); err == nil && len(keyCols) > 0 {
					cols = nameQuarantineKeys(rows, cols, keyCols)
				}
			}
			if err := lake.WriteJSONLines(cmd.OutOrStdout(), rows, cols); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&history, "history", false, "dump the SCD type 2 history table")
	cmd.Flags().BoolVar(&bronze, "bronze", false, "dump the bronze table (every Kafka record)")
	cmd.Flags().BoolVar(&quarantine, "quarantine", false, "dump the quarantine table (records not applied, with the reason)")
	out.bind(cmd)
	return cmd
}

// colKeyText is the column dump --quarantine adds after kafka_key: the
// record's key as people read it, "order_id=2001" (cdc.KeyText, the shape
// validate and reconcile print), where the key decodes.
const colKeyText = "key_text"

// nameQuarantineKeys sets colKeyText on every quarantine row whose Kafka
// key decodes (JSON, with or without the schema envelope) to the key
// columns keyCols, and returns cols with colKeyText after kafka_key. Rows
// whose key does not decode (none stored, as for an erased key's
// tombstone; not JSON; lacking a key column; Avro, whose schemas dump
// does not fetch) keep only their raw key. The key is the row's kafka_key
// text, which is its bytes for every key that is UTF-8 (JSON always is).
func nameQuarantineKeys(rows []lake.Row, cols []string, keyCols []string) []string {
	dec := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: keyCols})
	named := false
	for _, r := range rows {
		raw, ok := r[lakecat.BronzeKey].(string)
		if !ok || raw == "" {
			continue
		}
		k, err := dec.DecodeKey([]byte(raw))
		if err != nil {
			continue
		}
		if text, err := cdc.KeyText(k, keyCols); err == nil {
			r[colKeyText] = text
			named = true
		}
	}
	if !named || slices.Contains(cols, colKeyText) {
		return cols
	}
	at := slices.Index(cols, lakecat.BronzeKey) + 1 // 0 (first) if absent
	return slices.Insert(slices.Clone(cols), at, colKeyText)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
