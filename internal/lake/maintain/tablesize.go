package maintain

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go/table"
)

// TableSize is what a table holds and what its metadata costs, from its
// current metadata and snapshot summary (nothing is scanned).
type TableSize struct {
	Snapshots     int   `json:"snapshots"`      // snapshots kept (expiry drops old ones)
	MetadataFiles int   `json:"metadata_files"` // metadata.json files referenced: the current one and its kept predecessors
	MetadataBytes int64 `json:"metadata_bytes"` // size of the current metadata.json
	DataFiles     int64 `json:"data_files"`
	DeleteFiles   int64 `json:"delete_files"`
	Records       int64 `json:"records"`     // rows in data files, before position deletes
	FilesBytes    int64 `json:"files_bytes"` // data and delete files
}

// SizeOf reads tbl's size. Errors: the current metadata file cannot be
// read through the table's FileIO.
func SizeOf(ctx context.Context, tbl *table.Table) (TableSize, error) {
	md := tbl.Metadata()
	s := TableSize{Snapshots: len(md.Snapshots()), MetadataFiles: 1}
	for range md.PreviousFiles() {
		s.MetadataFiles++
	}
	if snap := tbl.CurrentSnapshot(); snap != nil && snap.Summary != nil {
		p := snap.Summary.Properties
		num := func(k string) int64 { n, _ := strconv.ParseInt(p[k], 10, 64); return n }
		s.DataFiles, s.DeleteFiles = num("total-data-files"), num("total-delete-files")
		s.Records, s.FilesBytes = num("total-records"), num("total-files-size")
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return s, fmt.Errorf("lake: file IO: %w", err)
	}
	f, err := fs.Open(tbl.MetadataLocation())
	if err != nil {
		return s, fmt.Errorf("lake: open %s: %w", tbl.MetadataLocation(), err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return s, fmt.Errorf("lake: stat %s: %w", tbl.MetadataLocation(), err)
	}
	s.MetadataBytes = info.Size()
	return s, nil
}
