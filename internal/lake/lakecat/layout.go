package lakecat

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/layout"
)

// A table's layout (partition spec and sort order) comes from the table's
// settings (internal/layout): a new table is created with it, and an
// existing table whose spec or sort order differs is evolved to it on its
// next load for a write (Iceberg spec, "Partition Evolution"): files
// written from then on follow the new spec, files already written keep
// theirs until a compaction rewrites them.

// partitionFieldName is the name of the partition field of f, as Spark
// and pyiceberg name them: the column for identity, else
// <column>_<transform> (bucket, trunc, year, month, day, hour).
func partitionFieldName(f layout.Field) string {
	switch f.Transform {
	case layout.Identity:
		return f.Column
	case layout.Truncate:
		return f.Column + "_trunc"
	}
	return f.Column + "_" + f.Transform
}

// icebergTransform is f's transform in iceberg-go.
func icebergTransform(f layout.Field) (iceberg.Transform, error) {
	text := f.Transform
	if f.Param > 0 {
		text = fmt.Sprintf("%s[%d]", f.Transform, f.Param)
	}
	return iceberg.ParseTransform(text)
}

// partitionSpecOf builds spec's partition fields for schema sc (spec id
// 0, field ids from 1000, as a new table's). Errors (*LayoutError's Err):
// a column sc lacks, a transform the column's type does not take.
func partitionSpecOf(spec layout.Spec, sc *iceberg.Schema) (iceberg.PartitionSpec, table.SortOrder, error) {
	fields, sorts, err := spec.Parse()
	if err != nil {
		return iceberg.PartitionSpec{}, table.UnsortedSortOrder, err
	}
	var opts []iceberg.PartitionOption
	for _, f := range fields {
		col, ok := sc.FindFieldByName(f.Column)
		if !ok {
			return iceberg.PartitionSpec{}, table.UnsortedSortOrder, fmt.Errorf("partition field %s: the table has no column %q", f, f.Column)
		}
		t, err := icebergTransform(f)
		if err != nil {
			return iceberg.PartitionSpec{}, table.UnsortedSortOrder, err
		}
		if !t.CanTransform(col.Type) {
			return iceberg.PartitionSpec{}, table.UnsortedSortOrder, fmt.Errorf("partition field %s: %s cannot transform column %q of type %s", f, t, f.Column, col.Type)
		}
		opts = append(opts, iceberg.AddPartitionFieldByName(f.Column, partitionFieldName(f), t, sc, nil))
	}
	ps, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return iceberg.PartitionSpec{}, table.UnsortedSortOrder, err
	}
	order, err := sortOrderOf(sorts, sc, 1)
	return ps, order, err
}

// sortOrderOf builds a sort order with id (table.UnsortedSortOrder for no
// fields).
func sortOrderOf(sorts []layout.SortField, sc *iceberg.Schema, id int) (table.SortOrder, error) {
	if len(sorts) == 0 {
		return table.UnsortedSortOrder, nil
	}
	fields := make([]table.SortField, 0, len(sorts))
	for _, s := range sorts {
		col, ok := sc.FindFieldByName(s.Column)
		if !ok {
			return table.UnsortedSortOrder, fmt.Errorf("sort field %s: the table has no column %q", s.Column, s.Column)
		}
		f := table.SortField{SourceIDs: []int{col.ID}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsLast}
		if s.Descending {
			f.Direction = table.SortDESC
		}
		if s.NullsFirst {
			f.NullOrder = table.NullsFirst
		}
		fields = append(fields, f)
	}
	return table.NewSortOrder(id, fields)
}

// layoutMatches reports whether tbl's current spec and sort order are the
// ones spec asks for (same transforms of the same columns, in order).
func layoutMatches(tbl *table.Table, spec layout.Spec) (bool, error) {
	fields, sorts, err := spec.Parse()
	if err != nil {
		return false, err
	}
	sc := tbl.Schema()
	cur := tbl.Spec()
	if cur.NumFields() != len(fields) {
		return false, nil
	}
	for i, f := range fields {
		pf := cur.Field(i)
		col, ok := sc.FindFieldByName(f.Column)
		t, err := icebergTransform(f)
		if !ok || err != nil || pf.SourceID() != col.ID || !pf.Transform.Equals(t) {
			return false, nil
		}
	}
	order := tbl.SortOrder()
	if order.Len() != len(sorts) {
		return false, nil
	}
	for i, s := range sorts {
		of := order.Field(i)
		col, ok := sc.FindFieldByName(s.Column)
		if !ok || of.SourceID() != col.ID || (of.Direction == table.SortDESC) != s.Descending || (of.NullOrder == table.NullsFirst) != s.NullsFirst {
			return false, nil
		}
	}
	return true, nil
}

// evolveLayout moves tbl to spec when its current partition spec, sort
// order or Parquet compression (the write.parquet.compression-codec and
// -level properties; an empty spec.Compression leaves them) differs, in
// one metadata-only commit (no Iceberg snapshot, so the local state stays
// valid), and returns the table as committed. Errors: *LayoutError for a
// spec the table cannot take; commit failures (retryable).
func evolveLayout(ctx context.Context, tbl *table.Table, spec layout.Spec) (*table.Table, error) {
	codec, err := layout.ParseCompression(spec.Compression)
	if err != nil {
		return nil, &LayoutError{Table: IdentString(tbl.Identifier()), Err: err}
	}
	ok, err := layoutMatches(tbl, spec)
	if err != nil {
		return tbl, &LayoutError{Table: IdentString(tbl.Identifier()), Err: err}
	}
	codecOK := codecMatches(tbl.Properties(), codec)
	if ok && codecOK {
		return tbl, nil
	}
	tx := tbl.NewTransaction()
	if !ok {
		if err := relayTx(tbl, tx, spec); err != nil {
			return nil, err
		}
	}
	if !codecOK {
		if err := tx.SetProperties(codec.Properties()); err != nil {
			return nil, &LayoutError{Table: IdentString(tbl.Identifier()), Err: err}
		}
		if _, has := tbl.Properties()[layout.PropCompressionLevel]; has && codec.Level == 0 {
			if err := tx.RemoveProperties([]string{layout.PropCompressionLevel}); err != nil {
				return nil, &LayoutError{Table: IdentString(tbl.Identifier()), Err: err}
			}
		}
	}
	out, err := CommitTx(ctx, tbl, tx)
	if err != nil {
		return nil, fmt.Errorf("lake: commit layout of %s: %w", IdentString(tbl.Identifier()), err)
	}
	return out, nil
}

// codecMatches reports whether the table properties p give codec c: the
// same codec name, spelt as c spells it (lower case: iceberg-go's
// compaction reads "SNAPPY" as no codec), and level (no level property
// for a codec without a level). The zero Codec matches any.
func codecMatches(p iceberg.Properties, c layout.Codec) bool {
	if c.Name == "" {
		return true
	}
	if p[layout.PropCompressionCodec] != c.Name {
		return false
	}
	lv, has := p[layout.PropCompressionLevel]
	if c.Level == 0 {
		return !has
	}
	return lv == strconv.Itoa(c.Level)
}

// relayTx adds to tx the partition spec and sort order of spec.
func relayTx(tbl *table.Table, tx *table.Transaction, spec layout.Spec) error {
	want, order, err := partitionSpecOf(spec, tbl.Schema())
	if err != nil {
		return &LayoutError{Table: IdentString(tbl.Identifier()), Err: err}
	}
	cur := tbl.Spec()
	if !cur.Equals(want) || cur.NumFields() != want.NumFields() {
		up := tx.UpdateSpec(true)
		keep := map[string]bool{}
		for i := range want.NumFields() {
			keep[want.Field(i).Name] = true
		}
		for i := range cur.NumFields() {
			if f := cur.Field(i); !keep[f.Name] || !slices.ContainsFunc(fieldsOf(want), func(w iceberg.PartitionField) bool {
				return w.Name == f.Name && w.SourceID() == f.SourceID() && w.Transform.Equals(f.Transform)
			}) {
				up = up.RemoveField(f.Name)
			}
		}
		for i := range want.NumFields() {
			w := want.Field(i)
			if slices.ContainsFunc(fieldsOf(cur), func(f iceberg.PartitionField) bool {
				return w.Name == f.Name && w.SourceID() == f.SourceID() && w.Transform.Equals(f.Transform)
			}) {
				continue
			}
			col, _ := tbl.Schema().FindFieldByID(w.SourceID())
			up = up.AddField(col.Name, w.Transform, w.Name)
		}
		if err := up.Commit(); err != nil {
			return &LayoutError{Table: IdentString(tbl.Identifier()), Err: err}
		}
	}
	if err := tx.ReplaceSortOrder(order); err != nil {
		return &LayoutError{Table: IdentString(tbl.Identifier()), Err: err}
	}
	return nil
}

func fieldsOf(s iceberg.PartitionSpec) []iceberg.PartitionField {
	out := make([]iceberg.PartitionField, 0, s.NumFields())
	for i := range s.NumFields() {
		out = append(out, s.Field(i))
	}
	return out
}

// Relaid is tbl evolved to spec (evolveLayout), as the batch's cached
// table.
func Relaid(ctx context.Context, tbl *table.Table, spec layout.Spec) (*table.Table, error) {
	out, err := evolveLayout(ctx, tbl, spec)
	if err != nil {
		return nil, err
	}
	if out != tbl {
		CacheTable(ctx, tbl.Identifier(), out)
	}
	return out, nil
}
