package pipelines

import (
	"reflect"
	"testing"

	"github.com/lakemirror/lakemirror/internal/layout"
)

// A codec in the defaults block and a pipeline that gives only its
// mirror's partition fields: the pipeline gave no compression of its
// own, so it should take the defaults' ("A pipeline takes its own value
// of a field, else the defaults block's", docs/pipelines.md), as
// `starter settings` keeps a table's compression when only partition or
// sort flags are given, and the defaults' partition fields should
// likewise survive a pipeline that sets only a codec. rawLayout.tables
// replaces the whole table block, so the pipeline's mirror gets no
// compression (created with zstd) and the other pipeline's mirror loses
// the defaults' partition_by.
func TestBreakCodecDefaultsCompressionKept(t *testing.T) {
	const src = `version: 1
defaults:
  layout:
    mirror: {partition_by: [region], compression: snappy}
pipelines:
  - topic: s.public.a
    key: id
    layout:
      mirror: {partition_by: ["bucket(8, id)"]}
  - topic: s.public.b
    key: id
    layout:
      mirror: {compression: gzip}
`
	f, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := f.Resolve([]string{"s.public.a", "s.public.b"}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]layout.Spec{
		"s.public.a": {PartitionBy: []string{"bucket(8, id)"}, Compression: "snappy"},
		"s.public.b": {PartitionBy: []string{"region"}, Compression: "gzip"},
	}
	if len(got) != 2 {
		t.Fatalf("%d pipelines", len(got))
	}
	for _, p := range got {
		if !reflect.DeepEqual(p.Layout.Mirror, want[p.Topic]) {
			t.Errorf("%s: mirror layout %+v, want %+v", p.Topic, p.Layout.Mirror, want[p.Topic])
		}
	}
}
