package activities

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/layout"
)

// A compression-only settings change moves the tables' codec properties
// in a metadata-only commit, which "keeps the local state valid"
// (docs/design.md, "Partitioned and sorted tables"). The worker's state
// (key index, chain log) does not depend on the codec, yet the first
// batch with the new spec replaces the table's state (sameSpec compares
// the layout) and builds it again from the Iceberg tables, a full read
// of the mirror. The batch after a codec change should keep the state
// (no build), as one after a batch-bound change does.
func TestBreakCodecCompressionChangeKeepsTheState(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
	st := f.tableState()
	builds := StateBuilds(f.a)
	f.spec.Layout.Mirror.Compression = "snappy" // starter settings --mirror-compression snappy
	f.apply(map[int32][2]int64{0: {3, 5}, 1: {2, 3}}, nil)
	if now := f.tableState(); now != st || StateBuilds(f.a) != builds {
		t.Errorf("after a compression change: state replaced %v, %d more builds from the tables; want the same state and none", now != st, StateBuilds(f.a)-builds)
	}
	mirror, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Mirror())
	if err != nil || mirror == nil {
		t.Fatalf("mirror: %v", err)
	}
	if c := mirror.Properties()[layout.PropCompressionCodec]; c != "snappy" {
		t.Errorf("the mirror's codec after the batch %q, want snappy", c)
	}
	if res, _ := f.validate(); res.Failed != 0 {
		t.Fatalf("validation: %+v", res)
	}
}
