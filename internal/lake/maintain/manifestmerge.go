package maintain

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// ManifestMergeEvery is how often a batch commit checks whether its
// table's data manifests need merging: when the committed Iceberg
// snapshot's sequence number is a multiple of it. Checking reads the
// table's manifest list, so it is not done on every commit.
var ManifestMergeEvery int64 = 50 // a variable: internal/lake's tests lower it

// AutoMergeManifests merges tbl's small data manifests (below Iceberg's
// commit.manifest.target-size-bytes, default 8 MiB) into target-sized
// ones, in a metadata-only `replace` commit of its own (iceberg-go's
// RewriteManifests), when the current Iceberg snapshot lists at least
// commit.manifest.min-count-to-merge of them (default 100) and its
// sequence number is a multiple of ManifestMergeEvery. It returns the
// table as committed, or tbl when nothing was due.
//
// Why: every batch commit appends a data manifest (and the mirror and
// history a delete manifest) and keeps the others, so without merging the
// manifest list every commit reads and rewrites, the lists a snapshot
// expiry reads, and the manifests every reader's scan planning opens grow
// by one to two per batch until a compaction. Java's Iceberg merges data
// and delete manifests on commit (commit.manifest-merge.enabled, default
// true there); iceberg-go's row delta does not, and its RewriteManifests
// merges data manifests only, so delete manifests still accumulate until
// a compaction drops the delete files they list. The merge moves no row
// and keeps each entry's sequence numbers (Iceberg spec, "Manifests":
// existing entries), so the position deletes and the local state's row
// positions stay valid. commit.manifest-merge.enabled=false turns it off.
//
// Errors: reading the manifest list, staging or committing the merge (a
// conflict with another writer among them); tbl is returned with them,
// and the caller's own commit has landed either way.
func AutoMergeManifests(ctx context.Context, tbl *table.Table) (*table.Table, error) {
	cur := tbl.CurrentSnapshot()
	props := tbl.Properties()
	if cur == nil || cur.SequenceNumber%ManifestMergeEvery != 0 ||
		strings.EqualFold(props[table.ManifestMergeEnabledKey], "false") {
		return tbl, nil
	}
	target := int64(props.GetInt(table.ManifestTargetSizeBytesKey, table.ManifestTargetSizeBytesDefault))
	minCount := props.GetInt(table.ManifestMinMergeCountKey, table.ManifestMinMergeCountDefault)
	fs, err := tbl.FS(ctx)
	if err != nil {
		return tbl, err
	}
	mans, err := cur.Manifests(fs)
	if err != nil {
		return tbl, err
	}
	small := 0
	for _, m := range mans {
		if m.ManifestContent() == iceberg.ManifestContentData && m.Length() < target {
			small++
		}
	}
	if small < max(minCount, 2) {
		return tbl, nil
	}
	tx := tbl.NewTransaction()
	res, err := tx.RewriteManifests(ctx, table.WithManifestTargetSize(target),
		table.WithRewriteManifestPredicate(func(m iceberg.ManifestFile) bool { return m.Length() < target }))
	if err != nil {
		return tbl, fmt.Errorf("lake: merge the manifests of %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	if res.IsNoOp() {
		return tbl, nil
	}
	out, err := lakecat.CommitTx(ctx, tbl, tx)
	if err != nil {
		return tbl, fmt.Errorf("lake: commit the manifest merge of %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	return out, nil
}
