//go:build e2e

package lake

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// Real Debezium captures (testdata/debezium, see its PROVENANCE.md)
// applied one record per batch with snapshot expiry down to 3 snapshots
// and a manifest merge due every 3 commits end with exactly the mirror
// and history of the same batches with neither, and each table's
// directory holds exactly the files its kept snapshots name.
func TestExpiryAndManifestMergeOnRealCaptures(t *testing.T) {
	mergeManifestsEvery(t, 3)
	for _, c := range []struct{ file, key string }{
		{"flink/debezium-postgres-data-schema-include.txt", "id"},
		{"risingwave/debezium_log.1", "id"},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "debezium", c.file))
			if err != nil {
				t.Fatal(err)
			}
			var msgs []sample.Message
			for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
				if line = bytes.TrimSpace(line); len(line) > 0 {
					msgs = append(msgs, sample.Message{Value: line})
				}
			}
			churned, plain := capturePipeline(t, c.key), capturePipeline(t, c.key)
			churned.batch(msgs[:1])
			plain.batch(msgs[:1])
			setTableProps(t, churned, iceberg.Properties{maintain.PropSnapshotsRetain: "3", table.ManifestMinMergeCountKey: "2"})
			setTableProps(t, plain, iceberg.Properties{maintain.PropSnapshotsRetain: "0", table.ManifestMergeEnabledKey: "false"})
			for _, m := range msgs[1:] {
				churned.batch([]sample.Message{m})
				plain.batch([]sample.Message{m})
			}
			if got, want := mirrorLines(t, churned.cat), mirrorLines(t, plain.cat); got != want || got == "" {
				t.Fatalf("mirror with expiry and merges:\n%s\nwithout:\n%s", got, want)
			}
			if got, want := churned.historyLines(), plain.historyLines(); got != want || got == "" {
				t.Fatalf("history with expiry and merges:\n%s\nwithout:\n%s", got, want)
			}
			for _, ident := range []table.Identifier{churned.name.Mirror(), churned.name.History(), churned.name.Bronze()} {
				tbl, _ := loadWithFS(t, churned, ident)
				kept, _ := loadWithFS(t, plain, ident)
				if n, all := len(tbl.Metadata().Snapshots()), len(kept.Metadata().Snapshots()); n > 4 || all <= 4 {
					t.Errorf("%v keeps %d Iceberg snapshots (want at most 4) against %d without expiry", ident, n, all)
				}
				m, _ := dataManifests(t, churned, ident)
				pm, _ := dataManifests(t, plain, ident)
				if m >= pm || m > 3 {
					t.Errorf("%v lists %d data manifests with merges, %d without; want at most 3 and fewer", ident, m, pm)
				}
			}
			checkFilesExact(t, churned)
		})
	}
}

// capturePipeline is newLakePipeline for a table keyed by key.
func capturePipeline(t *testing.T, key string) *lakePipeline {
	p := newLakePipeline(t, merge.HistoryOptions{})
	keys := []string{key}
	p.dec = schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: keys})
	p.mirror, p.history = NewMirrorWriter(p.cat, testTable, keys), scd2.NewHistoryWriter(p.cat, testTable, keys, merge.HistoryOptions{})
	return p
}
