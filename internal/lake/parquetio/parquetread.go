package parquetio

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceio "github.com/apache/iceberg-go/io"
)

// File is an open Parquet file of the table.
type File struct {
	path string
	f    iceio.File
	pf   *file.Reader
	fr   *pqarrow.FileReader
}

func Open(fs iceio.IO, path string) (*File, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lake: open %s: %w", path, err)
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lake: read parquet footer of %s: %w", path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 * 1024}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("lake: arrow reader for %s: %w", path, err)
	}
	return &File{path: path, f: f, pf: pf, fr: fr}, nil
}

func (p *File) Close() error { return p.pf.Close() }

// NumRowGroups is the file's row group count.
func (p *File) NumRowGroups() int { return p.pf.NumRowGroups() }

// NumRows is the file's row count.
func (p *File) NumRows() int64 { return p.pf.NumRows() }

// ColumnIndex returns the leaf index of a top-level primitive column, or -1.
func (p *File) ColumnIndex(name string) int {
	return p.pf.MetaData().Schema.ColumnIndexByName(name)
}

// LeafIndex returns the leaf index of a top-level column that has one
// leaf (a primitive, or a list of primitives), or -1.
func (p *File) LeafIndex(name string) int {
	if i := p.ColumnIndex(name); i >= 0 {
		return i
	}
	sc := p.pf.MetaData().Schema
	found := -1
	for i := 0; i < sc.NumColumns(); i++ {
		if path := sc.Column(i).ColumnPath(); len(path) > 1 && path[0] == name {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// LeafIndexByID returns the leaf index of the top-level column with
// Iceberg field id id (the Parquet field_id) that has one leaf (a
// primitive, or a list of primitives), or -1. Iceberg resolves data file
// columns by field id, so a column renamed since the file was written is
// found under its old name.
func (p *File) LeafIndexByID(id int) int {
	sc := p.pf.MetaData().Schema
	found := -1
	for i := 0; i < sc.NumColumns(); i++ {
		if int(sc.ColumnRoot(i).FieldID()) == id {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// HasFieldIDs reports whether the file's top-level columns carry Parquet
// field ids (files Iceberg writers wrote do).
func (p *File) HasFieldIDs() bool {
	sc := p.pf.MetaData().Schema
	return sc.NumColumns() > 0 && sc.ColumnRoot(0).FieldID() >= 0
}

// Scan reads the given leaf columns (nil = all) of the given row groups
// (nil = all), in file order, calling fn with each record batch and the
// file position of its first row. Positions are physical: no filter or
// pruning is applied inside the chosen row groups.
func (p *File) Scan(ctx context.Context, cols, rowGroups []int, fn func(rec arrow.RecordBatch, firstPos int64) error) error {
	base := int64(0)
	if rowGroups != nil {
		if len(rowGroups) == 0 {
			return nil
		}
		base = p.RowGroupStart(rowGroups[0])
		for i := 1; i < len(rowGroups); i++ {
			if rowGroups[i] != rowGroups[i-1]+1 {
				// non-contiguous groups: scan them one at a time so positions stay exact
				for _, rg := range rowGroups {
					if err := p.Scan(ctx, cols, []int{rg}, fn); err != nil {
						return err
					}
				}
				return nil
			}
		}
	}
	rr, err := p.fr.GetRecordReader(ctx, cols, rowGroups)
	if err != nil {
		return fmt.Errorf("lake: read %s: %w", p.path, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		if err := fn(rec, base); err != nil {
			return err
		}
		base += rec.NumRows()
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("lake: read %s: %w", p.path, err)
	}
	return nil
}

// RowGroupStart is the file position of row group rg's first row.
func (p *File) RowGroupStart(rg int) int64 {
	var n int64
	md := p.pf.MetaData()
	for i := 0; i < rg; i++ {
		n += md.RowGroup(i).NumRows()
	}
	return n
}

// RowGroupsOf returns the sorted distinct row groups holding the positions.
func (p *File) RowGroupsOf(positions []int64) []int {
	md := p.pf.MetaData()
	var out []int
	start := int64(0)
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		end := start + md.RowGroup(rg).NumRows()
		for _, pos := range positions {
			if pos >= start && pos < end {
				out = append(out, rg)
				break
			}
		}
		start = end
	}
	return out
}
