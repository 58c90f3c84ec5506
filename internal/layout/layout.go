// Package layout is the one home of a table's physical layout setting:
// the partition fields, sort order and Parquet compression of its
// mirror, history and bronze tables, as an operator writes them (starter flags, the pipelines YAML,
// a settings update) and as workflows carry them (plain strings, standard
// library only). internal/lake turns a parsed Spec into an Iceberg
// partition spec and sort order (Iceberg spec, "Partitioning",
// "Partition Transforms", "Sorting").
//
// Syntax, one field per string, as Spark SQL's PARTITIONED BY and
// WRITE ORDERED BY write them:
//
//	partition field: col | identity(col) | bucket(N, col) | truncate(W, col)
//	                 | year(col) | month(col) | day(col) | hour(col)
//	sort field:      col [asc|desc] [nulls first|nulls last]
package layout

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Spec is one table's layout: partition fields and sort fields, in order.
// The zero Spec is unpartitioned and unsorted.
type Spec struct {
	PartitionBy []string `json:"partition_by,omitempty"`
	SortBy      []string `json:"sort_by,omitempty"`
	// Compression is the codec of the table's Parquet data files
	// (ParseCompression: "zstd", "zstd:3", "snappy", ...); "" keeps the
	// table's own (zstd at level 1 on a table lakemirror creates).
	Compression string `json:"compression,omitempty"`
}

// Tables is the layout of a source table's Iceberg tables. A zero Bronze
// means the default, DefaultBronze (one partition per ingestion day, so
// retention drops whole days).
type Tables struct {
	Mirror  Spec `json:"mirror,omitzero"`
	History Spec `json:"history,omitzero"`
	Bronze  Spec `json:"bronze,omitzero"`
}

// DefaultBronze is the bronze layout of a table whose Tables.Bronze is
// zero: by the day the record was ingested.
var DefaultBronze = Spec{PartitionBy: []string{"day(_ingested_at)"}}

// Unpartitioned is the Bronze value that asks for no partitioning (a
// Spec with this one field is no partition field at all).
const Unpartitioned = "none"

// IsZero reports whether s is unpartitioned and unsorted and keeps the
// table's compression.
func (s Spec) IsZero() bool { return !s.HasFields() && s.Compression == "" }

// HasFields reports whether s has partition or sort fields.
func (s Spec) HasFields() bool { return len(s.PartitionBy) > 0 || len(s.SortBy) > 0 }

// BronzeSpec returns the bronze layout in effect: DefaultBronze's fields
// when t.Bronze has none, none when it is partition_by [none]; its
// compression is t.Bronze's.
func (t Tables) BronzeSpec() Spec {
	if !t.Bronze.HasFields() {
		return Spec{PartitionBy: DefaultBronze.PartitionBy, Compression: t.Bronze.Compression}
	}
	if len(t.Bronze.PartitionBy) == 1 && strings.EqualFold(strings.TrimSpace(t.Bronze.PartitionBy[0]), Unpartitioned) {
		return Spec{SortBy: t.Bronze.SortBy, Compression: t.Bronze.Compression}
	}
	return t.Bronze
}

// Transform names (Iceberg spec, "Partition Transforms").
const (
	Identity = "identity"
	Bucket   = "bucket"
	Truncate = "truncate"
	Year     = "year"
	Month    = "month"
	Day      = "day"
	Hour     = "hour"
)

// Field is one parsed partition field: Transform applied to Column, with
// Param the bucket count or truncate width (0 for the others).
type Field struct {
	Transform string
	Param     int
	Column    string
}

// String is the field as Iceberg names its transform: "bucket[16](id)".
func (f Field) String() string {
	if f.Param > 0 {
		return fmt.Sprintf("%s[%d](%s)", f.Transform, f.Param, f.Column)
	}
	return fmt.Sprintf("%s(%s)", f.Transform, f.Column)
}

// SortField is one parsed sort field.
type SortField struct {
	Column     string
	Descending bool
	NullsFirst bool // default: nulls first ascending, nulls last descending (Iceberg's)
}

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("layout: invalid field")

// ParsePartition parses one partition field. Errors (wrapping ErrSyntax)
// say what the syntax is.
func ParsePartition(s string) (Field, error) {
	t := strings.TrimSpace(s)
	open := strings.IndexByte(t, '(')
	if open < 0 {
		if !isColumn(t) {
			return Field{}, syntaxErr(s, "a column name, or transform(column)")
		}
		return Field{Transform: Identity, Column: t}, nil
	}
	if !strings.HasSuffix(t, ")") {
		return Field{}, syntaxErr(s, "a closing parenthesis")
	}
	name := strings.ToLower(strings.TrimSpace(t[:open]))
	args := strings.Split(t[open+1:len(t)-1], ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
	}
	switch name {
	case Identity, Year, Month, Day, Hour:
		if len(args) != 1 || !isColumn(args[0]) {
			return Field{}, syntaxErr(s, name+"(column)")
		}
		return Field{Transform: name, Column: args[0]}, nil
	case Bucket, Truncate:
		if len(args) != 2 || !isColumn(args[1]) {
			return Field{}, syntaxErr(s, name+"(N, column)")
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > 1<<20 {
			return Field{}, syntaxErr(s, name+"(N, column) with N from 1 to 1048576")
		}
		return Field{Transform: name, Param: n, Column: args[1]}, nil
	}
	return Field{}, syntaxErr(s, "one of identity, bucket, truncate, year, month, day, hour")
}

// ParseSort parses one sort field.
func ParseSort(s string) (SortField, error) {
	words := strings.Fields(s)
	if len(words) == 0 || !isColumn(words[0]) {
		return SortField{}, syntaxErr(s, "column [asc|desc] [nulls first|nulls last]")
	}
	f := SortField{Column: words[0], NullsFirst: true}
	rest := words[1:]
	if len(rest) > 0 {
		switch strings.ToLower(rest[0]) {
		case "asc":
			rest = rest[1:]
		case "desc":
			f.Descending, f.NullsFirst = true, false
			rest = rest[1:]
		}
	}
	if len(rest) == 2 && strings.EqualFold(rest[0], "nulls") {
		switch strings.ToLower(rest[1]) {
		case "first":
			f.NullsFirst = true
			rest = nil
		case "last":
			f.NullsFirst = false
			rest = nil
		}
	}
	if len(rest) > 0 {
		return SortField{}, syntaxErr(s, "column [asc|desc] [nulls first|nulls last]")
	}
	return f, nil
}

// Parse parses every field of s. Errors: a compression that does not
// parse (ParseCompression); the first field that does not parse; a
// column partitioned twice by the same transform.
func (s Spec) Parse() ([]Field, []SortField, error) {
	if _, err := ParseCompression(s.Compression); err != nil {
		return nil, nil, err
	}
	var fields []Field
	for _, p := range s.PartitionBy {
		f, err := ParsePartition(p)
		if err != nil {
			return nil, nil, err
		}
		if slices.ContainsFunc(fields, func(g Field) bool { return g.Column == f.Column && g.Transform == f.Transform }) {
			return nil, nil, fmt.Errorf("%w %q: column %s is partitioned by %s twice", ErrSyntax, p, f.Column, f.Transform)
		}
		fields = append(fields, f)
	}
	var sorts []SortField
	for _, p := range s.SortBy {
		f, err := ParseSort(p)
		if err != nil {
			return nil, nil, err
		}
		sorts = append(sorts, f)
	}
	return fields, sorts, nil
}

// Validate checks every field of every table's layout (syntax only: that
// the columns exist is checked against the table's schema when it is
// written, internal/lake). Errors name the table and the field.
func (t Tables) Validate() error {
	for _, x := range []struct {
		name string
		spec Spec
	}{{"mirror", t.Mirror}, {"history", t.History}, {"bronze", t.BronzeSpec()}} {
		if _, _, err := x.spec.Parse(); err != nil {
			return fmt.Errorf("%s layout: %w", x.name, err)
		}
	}
	return nil
}

// Normalize returns t with every field trimmed of surrounding spaces and
// each compression as ParseCompression reads it ("ZSTD:3" → "zstd:3").
func (t Tables) Normalize() Tables {
	trim := func(in []string) []string {
		if len(in) == 0 {
			return nil
		}
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = strings.TrimSpace(s)
		}
		return out
	}
	for _, s := range []*Spec{&t.Mirror, &t.History, &t.Bronze} {
		s.PartitionBy, s.SortBy = trim(s.PartitionBy), trim(s.SortBy)
		s.Compression = normalCompression(s.Compression)
	}
	return t
}

// Equal reports whether t and u are the same layout once normalized
// (Normalize: spaces around fields, codec spellings).
func (t Tables) Equal(u Tables) bool {
	t, u = t.Normalize(), u.Normalize()
	same := func(a, b Spec) bool {
		return slices.Equal(a.PartitionBy, b.PartitionBy) && slices.Equal(a.SortBy, b.SortBy) && a.Compression == b.Compression
	}
	return same(t.Mirror, u.Mirror) && same(t.History, u.History) && same(t.Bronze, u.Bronze)
}

func syntaxErr(s, want string) error {
	return fmt.Errorf("%w %q: want %s", ErrSyntax, s, want)
}

// isColumn reports whether s is a plain column name: letters, digits and
// underscores, not starting with a digit (a name an engine need not
// quote).
func isColumn(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
