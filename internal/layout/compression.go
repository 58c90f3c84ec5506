package layout

import (
	"fmt"
	"strconv"
	"strings"
)

// Compression of a table's Parquet data files, as an operator writes it
// (Spec.Compression): a codec with an optional level, "zstd", "zstd:3",
// "snappy", "gzip", "gzip:9" or "uncompressed" ("none" too). It becomes
// the Iceberg table properties write.parquet.compression-codec and
// write.parquet.compression-level (Iceberg spec, "Table properties",
// "Write properties"), which lakemirror's writers and every other
// Iceberg writer of the table (a compaction in Spark, say) read. "" keeps
// whatever the table's properties say: zstd at level 1 on a table
// lakemirror creates.
//
// The trade-off (docs/benchmarks.md, "Parquet codec per table"): zstd at
// level 1 gives the smallest files of the fast settings; snappy costs
// less CPU per row and gives larger files; higher zstd levels and gzip
// cost more CPU for smaller files. Bronze, written once and read rarely,
// holds the largest values (the raw Kafka records).

// Codec names as Iceberg's write.parquet.compression-codec takes them.
const (
	CodecZstd         = "zstd"
	CodecSnappy       = "snappy"
	CodecGzip         = "gzip"
	CodecUncompressed = "uncompressed"
)

// Iceberg table properties a compression setting sets.
const (
	PropCompressionCodec = "write.parquet.compression-codec"
	PropCompressionLevel = "write.parquet.compression-level"
)

// Codec is a parsed compression setting: Name one of the Codec
// constants, Level the codec's level (0: none given, the writer's
// default: 1 for zstd, the codec's own for gzip).
type Codec struct {
	Name  string
	Level int
}

// String is the codec as an operator writes it: "zstd", "zstd:3".
func (c Codec) String() string {
	if c.Level > 0 {
		return c.Name + ":" + strconv.Itoa(c.Level)
	}
	return c.Name
}

// Properties are the Iceberg table properties of c: the codec, and the
// level when one is given (nil for the zero Codec).
func (c Codec) Properties() map[string]string {
	if c.Name == "" {
		return nil
	}
	p := map[string]string{PropCompressionCodec: c.Name}
	if c.Level > 0 {
		p[PropCompressionLevel] = strconv.Itoa(c.Level)
	}
	return p
}

// ParseCompression reads a compression setting (any ASCII case, spaces
// trimmed): "" gives the zero Codec. Errors (wrapping ErrSyntax): an
// unknown codec, a level that is not a whole number in the codec's range
// (zstd 1..22, gzip 1..9), a level for snappy or uncompressed.
func ParseCompression(s string) (Codec, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return Codec{}, nil
	}
	name, lv, hasLevel := strings.Cut(t, ":")
	name = strings.TrimSpace(name)
	if name == "none" {
		name = CodecUncompressed
	}
	var max int
	switch name {
	case CodecZstd:
		max = 22
	case CodecGzip:
		max = 9
	case CodecSnappy, CodecUncompressed:
	default:
		return Codec{}, fmt.Errorf("%w %q: want a Parquet codec, zstd[:1-22], snappy, gzip[:1-9] or uncompressed", ErrSyntax, s)
	}
	c := Codec{Name: name}
	if !hasLevel {
		return c, nil
	}
	if max == 0 {
		return Codec{}, fmt.Errorf("%w %q: %s takes no level", ErrSyntax, s, name)
	}
	n, err := strconv.Atoi(strings.TrimSpace(lv))
	if err != nil || n < 1 || n > max {
		return Codec{}, fmt.Errorf("%w %q: want %s:N with N from 1 to %d", ErrSyntax, s, name, max)
	}
	c.Level = n
	return c, nil
}

// normalCompression is s as ParseCompression reads it ("ZSTD : 3" →
// "zstd:3", "none" → "uncompressed"), or s trimmed when it does not
// parse (Validate reports it).
func normalCompression(s string) string {
	c, err := ParseCompression(s)
	if err != nil {
		return strings.TrimSpace(s)
	}
	return c.String()
}
