package lake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/layout"
)

// codecsOf lists, for every data and delete file a scan of tbl plans,
// the compression of its column chunks ("<data|delete> <codec>", each
// file once), and the table's codec properties.
func codecsOf(t *testing.T, tbl *table.Table) ([]string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	read := func(kind, path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		f, err := fs.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := file.NewParquetReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		codecs := map[string]bool{}
		for g := range r.NumRowGroups() {
			rg := r.MetaData().RowGroup(g)
			for c := range rg.NumColumns() {
				cc, err := rg.ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				codecs[strings.ToLower(cc.Compression().String())] = true
			}
		}
		out = append(out, kind+" "+strings.Join(slices.Sorted(maps.Keys(codecs)), ","))
	}
	for _, task := range tasks {
		read("data", task.File.FilePath())
		for _, d := range task.DeleteFiles {
			read("delete", d.FilePath())
		}
	}
	slices.Sort(out)
	props := map[string]string{}
	for _, k := range []string{layout.PropCompressionCodec, layout.PropCompressionLevel} {
		if v, ok := tbl.Properties()[k]; ok {
			props[k] = v
		}
	}
	return out, props
}

// Each table's compression setting reaches its Iceberg properties when
// the tables are created and every file written, data and deletes; a
// changed setting (a worker started with the new layout) moves the
// properties in a metadata commit and the next batch's files follow it,
// a codec without a level dropping the old level; an empty setting
// leaves a table's properties as they are.
func TestCompressionPerTable(t *testing.T) {
	lay := layout.Tables{
		Mirror:  layout.Spec{Compression: "snappy"},
		History: layout.Spec{Compression: "gzip:9"},
		Bronze:  layout.Spec{Compression: "zstd:9"},
	}
	p, load := newLayoutPipeline(t, lay)
	p.batch(orderValue("c", 10, 0, "", orderRow(1, "eu", 5)), orderValue("c", 11, 0, "", orderRow(2, "us", 7)))
	p.batch(orderValue("u", 12, 0, orderRow(1, "eu", 5), orderRow(1, "eu", 6))) // deletes in mirror and history
	check := func(step string, ident table.Identifier, files []string, props map[string]string) {
		t.Helper()
		gotFiles, gotProps := codecsOf(t, load(ident))
		if fmt.Sprint(gotFiles) != fmt.Sprint(files) || !maps.Equal(gotProps, props) {
			t.Errorf("%s: %v: files %q, properties %v; want %q, %v", step, ident, gotFiles, gotProps, files, props)
		}
	}
	codec, level := layout.PropCompressionCodec, layout.PropCompressionLevel
	check("created", testTable.Mirror(), []string{"data snappy", "data snappy", "delete snappy"}, map[string]string{codec: "snappy"})
	check("created", testTable.History(), []string{"data gzip", "data gzip", "delete gzip"}, map[string]string{codec: "gzip", level: "9"})
	check("created", testTable.Bronze(), []string{"data zstd", "data zstd"}, map[string]string{codec: "zstd", level: "9"})

	// the settings change: mirror to zstd:3, history to snappy (its level
	// goes), bronze left as it is
	lay2 := layout.Tables{Mirror: layout.Spec{Compression: "zstd:3"}, History: layout.Spec{Compression: "snappy"}}
	p2, _ := layoutPipelineOn(t, p.cat, lay2)
	p2.seq, p2.offset = p.seq, p.offset
	p2.batch(orderValue("c", 13, 0, "", orderRow(3, "eu", 1)))
	check("changed", testTable.Mirror(), []string{"data snappy", "data snappy", "data zstd", "delete snappy"}, map[string]string{codec: "zstd", level: "3"})
	check("changed", testTable.History(), []string{"data gzip", "data gzip", "data snappy", "delete gzip"}, map[string]string{codec: "snappy"})
	check("changed", testTable.Bronze(), []string{"data zstd", "data zstd", "data zstd"}, map[string]string{codec: "zstd", level: "9"})
	if got := liveRows(t, load(testTable.Mirror()), "id", "amount"); fmt.Sprint(got) != "[1 6 2 7 3 1]" {
		t.Errorf("mirror rows %v", got)
	}
}
