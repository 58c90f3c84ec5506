package lake

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
)

// historyChunkRows is how many decided versions HistoryStage.Write hands
// to the file writer at a time: each chunk becomes one row group, built
// and encoded on another goroutine while the batch's next keys are
// decided (docs/design.md, "Write path"). A batch with fewer versions is
// written as one row group once every key is decided.
var historyChunkRows = 16 * 1024 // a variable for tests

// historyFile writes one batch's history versions as one data file, a
// row group per queued chunk, in the order queued: row i of the file is
// the i-th version queued (the positions the local state records). The
// chunks are encoded on one goroutine, started by the first queue.
type historyFile struct {
	ctx    context.Context
	tbl    *table.Table
	sh     *shape
	queued int                 // versions queued so far
	chunks chan []keyedVersion // nil until the first queue
	done   chan historyFileResult
}

type historyFileResult struct {
	df  iceberg.DataFile
	err error
}

func newHistoryFile(ctx context.Context, tbl *table.Table, sh *shape) *historyFile {
	return &historyFile{ctx: ctx, tbl: tbl, sh: sh}
}

// queue hands versions vs (not modified afterwards) to the writer; an
// empty vs is ignored.
func (h *historyFile) queue(vs []keyedVersion) {
	if len(vs) == 0 {
		return
	}
	if h.chunks == nil {
		h.chunks = make(chan []keyedVersion, 64)
		h.done = make(chan historyFileResult, 1)
		go h.run()
	}
	h.queued += len(vs)
	h.chunks <- vs
}

// run builds and writes each chunk; after a failure it only drains.
func (h *historyFile) run() {
	var ps *parquetio.Stream
	var err error
	for vs := range h.chunks {
		if err != nil {
			continue
		}
		var rec arrow.RecordBatch
		if rec, err = buildHistoryRows(h.tbl, h.sh, vs); err != nil {
			continue
		}
		if ps == nil {
			var path string
			if path, err = parquetio.NewFilePath(h.tbl, "history"); err == nil {
				ps, err = parquetio.Create(h.ctx, h.tbl, path, rec, parquetio.FileSpec{Schema: h.tbl.Schema(), Content: iceberg.EntryContentData, Unique: uniqueColumns})
			}
			if err != nil {
				rec.Release()
				continue
			}
		}
		err = ps.Write(rec) // abandons the file on error
		rec.Release()
	}
	var df iceberg.DataFile
	if err == nil && ps != nil {
		df, err = ps.Finish()
	}
	h.done <- historyFileResult{df, err}
}

// finish waits for the queued versions to be written and returns the
// data file (nil when nothing was queued). Errors: building the rows
// (a value that does not fit its column), the file IO's.
func (h *historyFile) finish() (iceberg.DataFile, error) {
	if h.chunks == nil {
		return nil, nil
	}
	close(h.chunks)
	r := <-h.done
	h.chunks = nil
	return r.df, r.err
}

// abort stops the writer after a failure elsewhere (a no-op after
// finish); what it wrote is an orphan file no table refers to.
func (h *historyFile) abort() { h.finish() }
