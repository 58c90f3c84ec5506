package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/workflows"
)

// A settings update's layout flags: a compression flag alone keeps the
// table's partition and sort fields, partition or sort flags keep its
// compression, and the table's layout is asked for only when a layout
// flag is given.
func TestLayoutFlagsRequest(t *testing.T) {
	cur := layout.Tables{Mirror: layout.Spec{PartitionBy: []string{"region"}, SortBy: []string{"id"}, Compression: "gzip"},
		Bronze: layout.Spec{Compression: "zstd:9"}}
	asked := 0
	run := func(args ...string) workflows.SettingsRequest {
		t.Helper()
		var f layoutFlags
		fl := pflag.NewFlagSet("settings", pflag.ContinueOnError)
		f.bind(fl)
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		var req workflows.SettingsRequest
		if err := f.request(fl, &req, func() (layout.Tables, error) { asked++; return cur, nil }); err != nil {
			t.Fatal(err)
		}
		return req
	}
	spec := func(s *layout.Spec) any {
		if s == nil {
			return nil
		}
		return *s
	}
	for _, c := range []struct {
		args                    []string
		mirror, history, bronze any
		asked                   int
	}{
		{args: nil},
		{args: []string{"--mirror-compression", " SNAPPY "}, asked: 1,
			mirror: layout.Spec{PartitionBy: []string{"region"}, SortBy: []string{"id"}, Compression: "snappy"}},
		{args: []string{"--mirror-sort-by", "amount desc"}, asked: 1,
			mirror: layout.Spec{SortBy: []string{"amount desc"}, Compression: "gzip"}},
		{args: []string{"--bronze-compression", "none", "--history-partition-by", "day(_valid_from)"}, asked: 1,
			history: layout.Spec{PartitionBy: []string{"day(_valid_from)"}}, bronze: layout.Spec{Compression: "uncompressed"}},
	} {
		before := asked
		req := run(c.args...)
		if c.asked > 0 && (req.LayoutFrom == nil || !reflect.DeepEqual(*req.LayoutFrom, cur)) || c.asked == 0 && req.LayoutFrom != nil {
			t.Errorf("%q: the request's layout_from %+v, want the layout read (%+v) when one was read", c.args, req.LayoutFrom, cur)
		}
		if !reflect.DeepEqual(spec(req.MirrorLayout), c.mirror) || !reflect.DeepEqual(spec(req.HistoryLayout), c.history) ||
			!reflect.DeepEqual(spec(req.BronzeLayout), c.bronze) || asked-before != c.asked {
			t.Errorf("%q: mirror %+v history %+v bronze %+v, layout asked %d times; want %+v %+v %+v, %d",
				c.args, spec(req.MirrorLayout), spec(req.HistoryLayout), spec(req.BronzeLayout), asked-before, c.mirror, c.history, c.bronze, c.asked)
		}
	}
	var f layoutFlags
	fl := pflag.NewFlagSet("settings", pflag.ContinueOnError)
	f.bind(fl)
	_ = fl.Parse([]string{"--history-compression", "zstd:30"})
	if _, err := f.tables(); err == nil || err.Error() != `history layout: layout: invalid field "zstd:30": want zstd:N with N from 1 to 22` {
		t.Errorf("bad codec: %v", err)
	}
}

// start's compression flags reach the spec it builds, and settings
// prints the layout with them.
func TestCompressionStartAndSettingsText(t *testing.T) {
	f := specFlags{settings: payload.TableSpec{StartFrom: "earliest", MaxEvents: 100, MaxWait: 1e9, MaxQuarantine: 1},
		layout: layoutFlags{mirrorPartition: []string{"region"}, mirrorCodec: "ZSTD:3", bronzeCodec: "snappy"}}
	spec, err := f.spec("s.shop.orders")
	if err != nil {
		t.Fatal(err)
	}
	want := layout.Tables{Mirror: layout.Spec{PartitionBy: []string{"region"}, Compression: "zstd:3"}, Bronze: layout.Spec{Compression: "snappy"}}
	if !reflect.DeepEqual(spec.Layout, want) {
		t.Errorf("spec layout %+v, want %+v", spec.Layout, want)
	}
	if got, want := layoutText(spec.Layout), "mirror partitioned by region, compressed with zstd:3; bronze partitioned by day(_ingested_at), compressed with snappy"; got != want {
		t.Errorf("layout text %q, want %q", got, want)
	}
	f.layout.historyCodec = "lz4"
	if _, err := f.spec("s.shop.orders"); err == nil || !strings.Contains(err.Error(), `layout: invalid field "lz4": want a Parquet codec, zstd[:1-22], snappy, gzip[:1-9] or uncompressed`) {
		t.Errorf("bad --history-compression: %v", err)
	}
}

// settings refuses a compression flag given empty, naming the flag and
// before it dials the worker: the table's codec would stay while its
// spec named none (suspected by a breaker, 2026-12-07).
func TestLayoutFlagsEmptyCompression(t *testing.T) {
	for _, name := range []string{"mirror", "history", "bronze"} {
		var f layoutFlags
		fl := pflag.NewFlagSet("settings", pflag.ContinueOnError)
		f.bind(fl)
		if err := fl.Parse([]string{"--" + name + "-compression", " "}); err != nil {
			t.Fatal(err)
		}
		err := f.noEmptyCodec(fl)
		want := "--" + name + "-compression: give a codec (zstd[:1-22], snappy, gzip[:1-9] or uncompressed; tables lakemirror creates start with zstd:1): an empty one would leave the table's codec as it is"
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
		code, _, stderr := cli(t, "settings", "shop.orders", "--"+name+"-compression", "")
		if code != exitUsage || stderr != "starter: "+want+"\n" {
			t.Errorf("settings --%s-compression \"\": exit %d, stderr %q; want exit %d, %q", name, code, stderr, exitUsage, want)
		}
	}
}
