package scd2

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
)

// historyChunkRows is how many decided versions HistoryStage.Write hands
// to the file writer at a time: each chunk becomes one row group (per
// partition), built and encoded on another goroutine while the batch's
// next keys are decided (docs/design.md, "Write path"). A batch with
// fewer versions is written as one row group once every key is decided.
var historyChunkRows = 16 * 1024 // a variable for tests

// historyFile writes one batch's history versions as one data file per
// partition of the table's spec (one for an unpartitioned table), a row
// group per queued chunk and partition. Each version's file and row
// position are returned by finish in the order queued (what the local
// state records); within a chunk a partitioned or sorted table orders a
// partition's versions by the sort order. The chunks are encoded on one
// goroutine, started by the first queue.
type historyFile struct {
	ctx    context.Context
	tbl    *table.Table
	sh     *tablestate.Shape
	queued int                            // versions queued so far
	chunks chan []tablestate.KeyedVersion // nil until the first queue
	done   chan historyFileResult
}

type historyFileResult struct {
	files []rowdelta.FileOut
	locs  []rowdelta.RowLocation // of each version queued, in queue order
	err   error
}

func newHistoryFile(ctx context.Context, tbl *table.Table, sh *tablestate.Shape) *historyFile {
	return &historyFile{ctx: ctx, tbl: tbl, sh: sh}
}

// queue hands versions vs (not modified afterwards) to the writer; an
// empty vs is ignored.
func (h *historyFile) queue(vs []tablestate.KeyedVersion) {
	if len(vs) == 0 {
		return
	}
	if h.chunks == nil {
		h.chunks = make(chan []tablestate.KeyedVersion, 64)
		h.done = make(chan historyFileResult, 1)
		go h.run()
	}
	h.queued += len(vs)
	h.chunks <- vs
}

// historyStream is one partition's file being written.
type historyStream struct {
	ps     *parquetio.Stream
	rows   int64
	values map[int]any
}

// run builds and writes each chunk; after a failure it only drains.
func (h *historyFile) run() {
	var res historyFileResult
	var streams []*historyStream
	byKey := map[string]int{}
	var l *rowdelta.RecordLayout
	bound := false
	fail := func(err error) {
		res.err = err
		for _, s := range streams {
			s.ps.Abort()
		}
		streams = nil
	}
	for vs := range h.chunks {
		if res.err != nil {
			continue
		}
		rec, err := buildHistoryRows(h.tbl, h.sh, vs)
		if err != nil {
			fail(err)
			continue
		}
		if !bound {
			if l, err = rowdelta.BindLayout(h.tbl, rec.Schema()); err != nil {
				rec.Release()
				fail(err)
				continue
			}
			bound = true
		}
		groups := []*rowdelta.RowGroup{{Rows: nil}}
		if l != nil {
			if groups, err = l.Group(rec); err != nil {
				rec.Release()
				fail(err)
				continue
			}
		} else {
			groups[0].Rows = make([]int, len(vs))
			for i := range groups[0].Rows {
				groups[0].Rows[i] = i
			}
		}
		base := len(res.locs)
		res.locs = append(res.locs, make([]rowdelta.RowLocation, len(vs))...)
		for _, g := range groups {
			part, release, err := rowdelta.TakeRows(h.ctx, rec, g.Rows)
			if err != nil {
				fail(err)
				break
			}
			si, ok := byKey[g.Key]
			if !ok {
				si = len(streams)
				s := &historyStream{values: g.Values}
				var path string
				spec := parquetio.FileSpec{Schema: h.tbl.Schema(), Content: iceberg.EntryContentData, Unique: lakecat.UniqueColumns}
				if l != nil {
					path, err = l.NewPath(h.tbl, "history", g.Values)
					spec.Spec, spec.Partition, spec.SortOrderID = &l.Spec, g.Values, h.tbl.SortOrder().OrderID()
				} else {
					path, err = parquetio.NewFilePath(h.tbl, "history")
				}
				if err == nil {
					s.ps, err = parquetio.Create(h.ctx, h.tbl, path, part, spec)
				}
				if err != nil {
					release()
					fail(err)
					break
				}
				byKey[g.Key] = si
				streams = append(streams, s)
			}
			s := streams[si]
			for p, row := range g.Rows {
				res.locs[base+row] = rowdelta.RowLocation{File: int32(si), Pos: s.rows + int64(p)}
			}
			err = s.ps.Write(part) // abandons the file on error
			release()
			if err != nil {
				s.ps = nil
				fail(err)
				break
			}
			s.rows += int64(len(g.Rows))
		}
		rec.Release()
	}
	if res.err == nil {
		spec := h.tbl.Spec()
		specID := spec.ID()
		if l != nil {
			specID = l.Spec.ID()
		}
		for _, s := range streams {
			df, err := s.ps.Finish()
			if err != nil {
				res.err = err
				break
			}
			res.files = append(res.files, rowdelta.FileOut{DF: df, SpecID: specID, Values: s.values})
		}
	}
	h.done <- res
}

// finish waits for the queued versions to be written and returns the
// data files (none when nothing was queued) and each version's location.
// Errors: building the rows (a value that does not fit its column), the
// partition transforms', the file IO's.
func (h *historyFile) finish() ([]rowdelta.FileOut, []rowdelta.RowLocation, error) {
	if h.chunks == nil {
		return nil, nil, nil
	}
	close(h.chunks)
	r := <-h.done
	h.chunks = nil
	return r.files, r.locs, r.err
}

// abort stops the writer after a failure elsewhere (a no-op after
// finish); what it wrote is an orphan file no table refers to.
func (h *historyFile) abort() { h.finish() }

// historyWritten is a batch's history files, written and not yet
// committed.
type historyWritten struct {
	data    []rowdelta.FileOut
	locs    []rowdelta.RowLocation // of writes[i]
	deletes rowdelta.DeleteSet
}

// SetChunkRows sets historyChunkRows for tests of the writers (a small
// chunk gives files of many row groups) and returns a function restoring
// the old value. Not safe for concurrent use with running batches.
func SetChunkRows(n int) (restore func()) {
	old := historyChunkRows
	historyChunkRows = n
	return func() { historyChunkRows = old }
}
