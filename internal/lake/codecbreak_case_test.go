package lake

import (
	"context"
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake/compact"
	"github.com/lakemirror/lakemirror/internal/layout"
)

// A mirror whose codec property is spelt in upper case ("SNAPPY", as
// Spark SQL's ALTER TABLE ... SET TBLPROPERTIES accepts it) and a
// compression setting of snappy: codecMatches compares the names
// case-insensitively, so the setting is taken as in effect and the
// property is never rewritten. lakemirror's own writer lowercases the
// name, but the compaction of an unpartitioned table (iceberg-go's
// RewriteDataFiles) matches "snappy" exactly and falls back to
// uncompressed: the table set to snappy gets uncompressed files. The
// setting should leave the property as the writers read it ("snappy"),
// and every file after the compaction should be snappy.
func TestBreakCodecUpperCasePropertyCompaction(t *testing.T) {
	ctx := context.Background()
	p, load := layoutPipelineOn(t, newCatalog(t), layout.Tables{})
	p.batch(orderValue("c", 10, 0, "", orderRow(1, "eu", 5)))
	tx := load(testTable.Mirror()).NewTransaction()
	if err := tx.SetProperties(map[string]string{layout.PropCompressionCodec: "SNAPPY"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	p.tw.Mirror.State().Close()
	q, _ := layoutPipelineOn(t, p.cat, layout.Tables{Mirror: layout.Spec{Compression: "snappy"}})
	q.seq, q.offset = p.seq, p.offset
	q.batch(orderValue("c", 11, 0, "", orderRow(2, "eu", 6)))
	q.batch(orderValue("u", 12, 0, orderRow(2, "eu", 6), orderRow(2, "eu", 7)))
	if _, err := compact.Compact(ctx, p.cat, testTable.Mirror(), compact.Options{}); err != nil {
		t.Fatal(err)
	}
	files, props := codecsOf(t, load(testTable.Mirror()))
	if fmt.Sprint(files) != "[data snappy]" || props[layout.PropCompressionCodec] != "snappy" {
		t.Errorf("after the compaction of a mirror set to snappy: files %q, properties %v; want [data snappy], codec snappy", files, props)
	}
}
