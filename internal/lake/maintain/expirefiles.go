package maintain

import (
	"context"
	"errors"
	stdfs "io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// DeleteExpiredFiles deletes the files that only the Iceberg snapshots
// pre holds and post (the same table after an expiry commit) no longer
// does referenced: their manifest lists and statistics files, the
// manifests no snapshot of post lists, and the data and delete files
// those manifests name that no live entry of post's manifests names. It
// returns how many files it deleted. Tables with gc.enabled=false keep
// every file (Iceberg spec, table property gc.enabled).
//
// This is the clean-up iceberg-go runs after an expiry commit
// (removeSnapshotsUpdate.PostCommit), with one difference that keeps a
// streaming table's expiry from costing what its metadata holds: it
// reads the entries of the kept data (delete) manifests only when an
// expired manifest no kept snapshot lists named data (delete) files,
// which happens only after a compaction, a purge or a manifest merge
// replaced manifests: the delete manifests, one per batch commit, are
// read after a compaction, not after a merge of data manifests
// (AutoMergeManifests). Between them, every
// manifest of an expired snapshot is still listed by a kept one (a batch
// commit appends a manifest and keeps the others), so only the expired
// manifest lists are deleted, and reading the table's every manifest
// (one Avro file per batch commit) is skipped: measured with
// BenchmarkBatchAfterCommits at 1,000 commits, that reading was a
// quarter of each batch's time.
//
// Errors: reading manifest lists or manifests, deleting files; a file
// not deleted is left for the orphan clean-up (Expire's CleanOrphans).
func DeleteExpiredFiles(ctx context.Context, pre, post *table.Table) (int, error) {
	if strings.EqualFold(post.Properties()[table.GCEnabledKey], "false") {
		return 0, nil
	}
	kept := map[int64]bool{}
	for _, s := range post.Metadata().Snapshots() {
		kept[s.SnapshotID] = true
	}
	var expired []table.Snapshot
	for _, s := range pre.Metadata().Snapshots() {
		if !kept[s.SnapshotID] {
			expired = append(expired, s)
		}
	}
	if len(expired) == 0 {
		return 0, nil
	}
	fs, err := pre.FS(ctx)
	if err != nil {
		return 0, err
	}
	doomed := map[string]struct{}{}
	expiredIDs := map[int64]bool{}
	for _, s := range expired {
		doomed[s.ManifestList] = struct{}{}
		expiredIDs[s.SnapshotID] = true
	}
	for sf := range pre.Metadata().Statistics() {
		if expiredIDs[sf.SnapshotID] && sf.StatisticsPath != "" {
			doomed[sf.StatisticsPath] = struct{}{}
		}
	}
	for sf := range pre.Metadata().PartitionStatistics() {
		if expiredIDs[sf.SnapshotID] && sf.StatisticsPath != "" {
			doomed[sf.StatisticsPath] = struct{}{}
		}
	}
	// the manifests the kept snapshots list
	keptManifests := map[string]iceberg.ManifestFile{}
	for _, s := range post.Metadata().Snapshots() {
		mans, err := s.Manifests(fs)
		if err != nil {
			return 0, err
		}
		for _, m := range mans {
			keptManifests[m.FilePath()] = m
		}
	}
	// the expired snapshots' other manifests, and the files they name, by
	// content: a data file is named only by data manifests, a delete file
	// only by delete manifests
	files := map[iceberg.ManifestContent]map[string]struct{}{}
	visited := map[string]bool{}
	for _, s := range expired {
		mans, err := s.Manifests(fs)
		if err != nil {
			return 0, err
		}
		for _, m := range mans {
			p := m.FilePath()
			if _, ok := keptManifests[p]; ok || visited[p] {
				continue
			}
			visited[p] = true
			doomed[p] = struct{}{}
			for e, err := range m.Entries(fs, false) {
				if err != nil {
					return 0, err
				}
				c := m.ManifestContent()
				if files[c] == nil {
					files[c] = map[string]struct{}{}
				}
				files[c][e.DataFile().FilePath()] = struct{}{}
			}
		}
	}
	// a file a kept manifest of its content still names (live) stays
	for _, m := range keptManifests {
		named := files[m.ManifestContent()]
		if len(named) == 0 {
			continue
		}
		for e, err := range m.Entries(fs, false) {
			if err != nil {
				return 0, err
			}
			if e.Status() != iceberg.EntryStatusDELETED {
				delete(named, e.DataFile().FilePath())
			}
		}
	}
	for _, named := range files {
		maps.Copy(doomed, named)
	}
	for sf := range post.Metadata().Statistics() {
		delete(doomed, sf.StatisticsPath)
	}
	for sf := range post.Metadata().PartitionStatistics() {
		delete(doomed, sf.StatisticsPath)
	}
	return removeFiles(ctx, fs, slices.Sorted(maps.Keys(doomed)))
}

// removeFiles deletes paths (in one request where the IO can, then one
// by one what that request did not delete), returning how many are gone.
// A path already gone counts as deleted: two expiries that overlap (the
// scheduled one and a batch's) may both name the files of snapshots the
// other expired. Errors: the deletions that failed, joined.
func removeFiles(ctx context.Context, fs iceio.IO, paths []string) (int, error) {
	n := 0
	if bulk, ok := fs.(iceio.BulkRemovableIO); ok {
		deleted, err := bulk.DeleteFiles(ctx, paths)
		if err == nil {
			return len(deleted), nil
		}
		n = len(deleted)
		gone := make(map[string]bool, len(deleted))
		for _, p := range deleted {
			gone[p] = true
		}
		paths = slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return gone[p] })
	}
	var errs error
	for _, p := range paths {
		if err := fs.Remove(p); err != nil && !errors.Is(err, stdfs.ErrNotExist) {
			errs = errors.Join(errs, err)
			continue
		}
		n++
	}
	return n, errs
}
