package rowdelta

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/layout"
)

// DeleteSet is what one commit does to a table's deletes: the delete
// files it adds (position-delete Parquet files on a v2 table, deletion
// vectors on a v3 one) and the live deletion vectors the added ones
// replace (v3 only: a new deletion vector of a data file holds the old
// one's positions too, and the old one is removed in the same commit,
// Iceberg spec "Deletion Vectors").
type DeleteSet struct {
	Add, Replaced []iceberg.DataFile
}

// usesDVs reports whether tbl takes deletion vectors: a format-version 3
// (or later) table, whose position deletes must be deletion vectors.
func usesDVs(tbl *table.Table) bool { return tbl.Metadata().Version() >= 3 }

// DeleteFormatOf is the delete format a table writes: DeleteVector for a
// format-version 3 (or later) table, DeletePosition otherwise.
func DeleteFormatOf(tbl *table.Table) layout.DeleteFormat {
	if usesDVs(tbl) {
		return layout.DeleteVector
	}
	return layout.DeletePosition
}

// CheckDeleteFormat returns a *DeleteFormatError when tbl does not write
// want (the zero want is DeletePosition).
func CheckDeleteFormat(tbl *table.Table, want layout.DeleteFormat) error {
	if has := DeleteFormatOf(tbl); has != want.Or() {
		return &DeleteFormatError{Table: lakecat.IdentString(tbl.Identifier()), Has: has, Want: want.Or()}
	}
	return nil
}

// WithFormatVersion is props with the format version of f.
func WithFormatVersion(props iceberg.Properties, f layout.DeleteFormat) iceberg.Properties {
	props[table.PropertyFormatVersion] = fmt.Sprint(f.FormatVersion())
	return props
}

// liveDVs returns the current Iceberg snapshot's live deletion vectors of
// the data files in want, by data file path (the table allows at most
// one per data file). It reads the snapshot's delete manifests (one per
// batch commit since the last compaction; iceberg-go's row delta reads
// them again to check the replacement). Errors: file IO; two live
// deletion vectors for one data file.
func liveDVs(fs iceio.IO, tbl *table.Table, want map[string]bool) (map[string]iceberg.DataFile, error) {
	out := map[string]iceberg.DataFile{}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return out, nil
	}
	mans, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("lake: read %s manifests: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("lake: read %s delete manifest: %w", lakecat.IdentString(tbl.Identifier()), err)
			}
			df := e.DataFile()
			ref := df.ReferencedDataFile()
			if !table.IsDeletionVector(df) || ref == nil || !want[*ref] {
				continue
			}
			if prev, ok := out[*ref]; ok {
				return nil, fmt.Errorf("lake: %s has two live deletion vectors for data file %s (%s and %s)", lakecat.IdentString(tbl.Identifier()), *ref, prev.FilePath(), df.FilePath())
			}
			out[*ref] = df
		}
	}
	return out, nil
}

// writeDVs writes the deletes of rows (file ids into paths) as deletion
// vectors, one per data file, all in one Puffin file under the table's
// data directory: a data file that has a live deletion vector gets a new
// one holding the old positions and the new ones, and the old one is
// returned to be removed in the same commit. Each deletion vector carries
// its data file's partition (spec id and values). Errors: file IO, the
// partition lookup's, an unreadable live deletion vector.
func writeDVs(ctx context.Context, tbl *table.Table, fp *FilePartitions, rows []parquetio.RowLoc, paths []string) (DeleteSet, error) {
	var set DeleteSet
	byFile := map[string][]int64{}
	var used []string
	for _, r := range rows {
		p := paths[r.File]
		if _, ok := byFile[p]; !ok {
			used = append(used, p)
		}
		byFile[p] = append(byFile[p], r.Pos)
	}
	slices.Sort(used)
	parts := map[string]filePartition{}
	if EverPartitioned(tbl) {
		var err error
		if parts, err = fp.lookup(ctx, tbl, used); err != nil {
			return set, err
		}
	} else {
		spec := tbl.Spec()
		for _, p := range used {
			parts[p] = filePartition{specID: spec.ID()}
		}
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return set, fmt.Errorf("lake: file IO: %w", err)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return set, fmt.Errorf("lake: %s: the file IO cannot write files", lakecat.IdentString(tbl.Identifier()))
	}
	want := make(map[string]bool, len(used))
	for _, p := range used {
		want[p] = true
	}
	old, err := liveDVs(fs, tbl, want)
	if err != nil {
		return set, err
	}
	specs := tbl.Metadata().PartitionSpecs()
	w := dv.NewDVWriter(wfs, func(id int32) *iceberg.PartitionSpec {
		for i := range specs {
			if specs[i].ID() == int(id) {
				return &specs[i]
			}
		}
		return nil
	})
	for _, p := range used {
		part := parts[p]
		if prev, ok := old[p]; ok {
			bm, err := dv.ReadDV(fs, prev)
			if err != nil {
				return set, fmt.Errorf("lake: read the deletion vector of %s: %w", p, err)
			}
			w.Load(p, bm, int32(part.specID), part.values)
			set.Replaced = append(set.Replaced, prev)
		}
		if err := w.Add(p, byFile[p], int32(part.specID), part.values); err != nil {
			return set, fmt.Errorf("lake: deletion vector of %s: %w", p, err)
		}
	}
	lp, err := tbl.LocationProvider()
	if err != nil {
		return set, fmt.Errorf("lake: location provider: %w", err)
	}
	loc := lp.NewDataLocation(fmt.Sprintf("dv-%s.puffin", uuid.New()))
	if set.Add, err = w.Flush(ctx, loc); err != nil {
		return set, fmt.Errorf("lake: write deletion vectors of %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	return set, nil
}

// ReadDVs reads deletion vectors and returns, per referenced data file
// path in want, the sorted positions they remove. Errors: file IO, a
// malformed blob (magic, length, CRC or cardinality wrong).
func ReadDVs(fs iceio.IO, files []iceberg.DataFile, want map[string]bool) (map[string][]int64, error) {
	out := map[string][]int64{}
	for _, f := range files {
		ref := f.ReferencedDataFile()
		if ref == nil || !want[*ref] {
			continue
		}
		bm, err := dv.ReadDV(fs, f)
		if err != nil {
			return nil, fmt.Errorf("lake: read deletion vector %s of %s: %w", f.FilePath(), *ref, err)
		}
		for p := range bm.Positions() {
			out[*ref] = append(out[*ref], int64(p))
		}
	}
	return out, nil
}
