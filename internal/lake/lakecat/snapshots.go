package lakecat

import (
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Ancestors returns tbl's snapshot id and that snapshot's ancestors, newest
// first, following the parent ids as far as tbl's metadata keeps them
// (an expired parent ends the list); nil when tbl has no snapshot id.
func Ancestors(tbl *table.Table, id int64) []table.Snapshot {
	var out []table.Snapshot
	md := tbl.Metadata()
	for s := md.SnapshotByID(id); s != nil; {
		out = append(out, *s)
		if s.ParentSnapshotID == nil {
			break
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
	return out
}

// SnapID is tbl's current snapshot id: 0 when tbl is nil or has no
// snapshot.
func SnapID(tbl *table.Table) int64 {
	if tbl == nil {
		return 0
	}
	if snap := tbl.CurrentSnapshot(); snap != nil {
		return snap.SnapshotID
	}
	return 0
}

// LiveDataFiles are the data files snapshot s reaches (its data
// manifests' live entries), by path.
// Errors: reading the manifest list or a manifest.
func LiveDataFiles(fs iceio.IO, s table.Snapshot) (map[string]iceberg.DataFile, error) {
	mans, err := s.Manifests(fs)
	if err != nil {
		return nil, err
	}
	out := map[string]iceberg.DataFile{}
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, err
			}
			if df := e.DataFile(); df.ContentType() == iceberg.EntryContentData {
				out[df.FilePath()] = df
			}
		}
	}
	return out, nil
}
