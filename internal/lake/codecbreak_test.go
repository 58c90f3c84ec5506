package lake

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/schemas"
)

// codecPipelineOn is layoutPipelineOn with a delete format.
func codecPipelineOn(t *testing.T, cat catalog.Catalog, lay layout.Tables, df layout.DeleteFormat) (*layoutPipeline, func(ident table.Identifier) *table.Table) {
	keys := []string{"id"}
	tw := NewTableWriter(cat, testTable, keys, WriterOptions{History: true, Layout: lay, DeleteFormat: df, StateDir: t.TempDir()})
	t.Cleanup(func() { tw.Mirror.State().Close() })
	load := func(ident table.Identifier) *table.Table {
		tbl, err := cat.LoadTable(context.Background(), ident)
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	return &layoutPipeline{t: t, tw: tw, cat: cat, dec: schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: keys})}, load
}
