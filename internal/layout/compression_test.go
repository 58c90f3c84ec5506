package layout

import (
	"encoding/json"
	"errors"
	"maps"
	"testing"
)

func TestParseCompression(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
		props         map[string]string
	}{
		{in: "", want: ""},
		{in: "zstd", want: "zstd", props: map[string]string{PropCompressionCodec: "zstd"}},
		{in: " ZSTD : 3 ", want: "zstd:3", props: map[string]string{PropCompressionCodec: "zstd", PropCompressionLevel: "3"}},
		{in: "zstd:22", want: "zstd:22", props: map[string]string{PropCompressionCodec: "zstd", PropCompressionLevel: "22"}},
		{in: "snappy", want: "snappy", props: map[string]string{PropCompressionCodec: "snappy"}},
		{in: "gzip:9", want: "gzip:9", props: map[string]string{PropCompressionCodec: "gzip", PropCompressionLevel: "9"}},
		{in: "none", want: "uncompressed", props: map[string]string{PropCompressionCodec: "uncompressed"}},
		{in: "Uncompressed", want: "uncompressed", props: map[string]string{PropCompressionCodec: "uncompressed"}},
		{in: "lz4", err: `layout: invalid field "lz4": want a Parquet codec, zstd[:1-22], snappy, gzip[:1-9] or uncompressed`},
		{in: "zstd:0", err: `layout: invalid field "zstd:0": want zstd:N with N from 1 to 22`},
		{in: "zstd:23", err: `layout: invalid field "zstd:23": want zstd:N with N from 1 to 22`},
		{in: "gzip:x", err: `layout: invalid field "gzip:x": want gzip:N with N from 1 to 9`},
		{in: "snappy:1", err: `layout: invalid field "snappy:1": snappy takes no level`},
	} {
		got, err := ParseCompression(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err || !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseCompression(%q): error %v, want %s", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got.String() != c.want || !maps.Equal(got.Properties(), c.props) {
			t.Errorf("ParseCompression(%q) = %q %v, %v; want %q %v", c.in, got, got.Properties(), err, c.want, c.props)
		}
	}
}

// A compression alone keeps bronze's default partitioning, survives the
// JSON a workflow records, and is checked and normalized with the rest.
func TestCompressionInTables(t *testing.T) {
	tb := Tables{Mirror: Spec{Compression: " Snappy "}, Bronze: Spec{Compression: "ZSTD:9"}}.Normalize()
	if err := tb.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(tb)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"mirror":{"compression":"snappy"},"bronze":{"compression":"zstd:9"}}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	var back Tables
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	bs := back.BronzeSpec()
	if len(bs.PartitionBy) != 1 || bs.PartitionBy[0] != "day(_ingested_at)" || bs.Compression != "zstd:9" {
		t.Errorf("bronze spec %+v, want the default partitioning with zstd:9", bs)
	}
	if got := (Tables{Bronze: Spec{PartitionBy: []string{"none"}, Compression: "gzip"}}).BronzeSpec(); got.HasFields() || got.Compression != "gzip" {
		t.Errorf("bronze none with gzip gave %+v", got)
	}
	if (Spec{Compression: "snappy"}).IsZero() || (Spec{Compression: "snappy"}).HasFields() {
		t.Error("a spec with a compression alone: IsZero true or HasFields true")
	}
	err = Tables{History: Spec{Compression: "brotli"}}.Validate()
	if err == nil || err.Error() != `history layout: layout: invalid field "brotli": want a Parquet codec, zstd[:1-22], snappy, gzip[:1-9] or uncompressed` {
		t.Errorf("Validate: %v", err)
	}
}
