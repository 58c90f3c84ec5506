package activities

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/schemas"
)

// ghostSuffix ends the bronze topic of a re-snapshot's ghost deletes,
// "<topic>#<load id>@<P>#ghosts" (a Kafka topic name cannot hold '#').
const ghostSuffix = "#ghosts"

// ghostTopic is the bronze topic of the ghost deletes of load id at WAL
// position p: a load id used again (a table workflow started anew counts
// its re-snapshots from 1) gets a topic of its own with its new position.
func ghostTopic(topic, loadID string, p uint64) string {
	return fmt.Sprintf("%s#%s@%d%s", topic, loadID, p, ghostSuffix)
}

// asGhostDelete turns a ghost delete, decoded from a record of a ghost
// topic, into what it stands for: the per-key truncate at (P, 0) ("delete
// the row if it is live there", merge.Fold), so a row a late delete below
// P removed keeps that delete's position, as in source order. Other
// events are left as they are.
func asGhostDelete(topic string, e *cdc.Event) {
	if e.Op == cdc.OpDelete && strings.HasSuffix(topic, ghostSuffix) {
		e.Op = cdc.OpTruncate
	}
}

// ghostChunk is how many ghost deletes one batch applies: memory holds
// one chunk (its stored rows, records and events).
var ghostChunk = 50_000

// deleteGhosts soft-deletes, at the re-snapshot's position (P, 0), every
// live mirror row below it whose key the snapshot did not contain (a
// ghost row: its delete was lost). Each delete is the Debezium delete the
// connector would have sent, with a key-only before image
// (source.Renderer.GhostDeleteValue), stored in bronze under
// ghostTopic(…) at offsets 0, 1, … in key order and applied to mirror and
// history in batches of ghostChunk, so a key rebuilt later from bronze (a
// late change below P on a restarted worker) folds it too (docs/design.md,
// rule 1). A retried attempt first applies again the chunks an earlier
// one stored in bronze, unchanged (same keys, times and offsets; mirror
// and history skip what they committed), then looks for the ghosts they
// do not hold. It heartbeats while it works and returns the number of
// ghost records. Errors: applyRecords'.
func (a *Activities) deleteGhosts(ctx context.Context, st *tableState, name lake.TableName, spec TableSpec, renderer *source.Renderer,
	req LoadRequest, lsn uint64, read int64, seen map[cdc.Key]bool, snaps []cdc.PostgresSnapshot) (int, error) {
	cursor := &lake.LoadCursor{ID: req.LoadID, LSN: lsn, Read: read, Done: true, Snapshots: snaps}
	stop := keepAlive(ctx, 5*time.Second, func() any { return cursor })
	defer stop()
	topic := ghostTopic(spec.Topic, req.LoadID, lsn)
	batchPrefix := fmt.Sprintf("%s#%s@%d.ghosts.", spec.Table, req.LoadID, lsn) // + the chunk's first offset
	apply := func(recs []schemas.Record) error {
		from := recs[0].Offset
		b := lake.Batch{ID: batchPrefix + strconv.FormatInt(from, 10), Topic: topic,
			Ranges: []lake.Range{{From: from, To: from + int64(len(recs))}}, EndOffsets: req.Position, Load: cursor}
		stage := ""
		ares, _, err := a.applyRecords(ctx, st, name, spec, b, recs, nil, "", &stage)
		if err != nil {
			return err
		}
		if ares.History.Pending+ares.Mirror.Pending > 0 {
			_, err = a.rebuildPending(ctx, st, name)
		}
		return err
	}
	stored, storedKeys, err := a.storedGhosts(ctx, name, topic, batchPrefix)
	if err != nil {
		return 0, err
	}
	for from := 0; from < len(stored); from += ghostChunk {
		if err := apply(stored[from:min(from+ghostChunk, len(stored))]); err != nil {
			return 0, err
		}
	}
	ghosts, err := a.findGhosts(ctx, st, name, lsn, seen, storedKeys)
	if err != nil {
		return 0, err
	}
	mirror, _ := st.writers(a, name)
	for from := 0; from < len(ghosts); from += ghostChunk {
		chunk := ghosts[from:min(from+ghostChunk, len(ghosts))]
		recs, err := renderGhosts(ctx, mirror, spec, renderer, topic, lsn, int64(len(stored)+from), chunk)
		if err != nil {
			return 0, err
		}
		if err := apply(recs); err != nil {
			return 0, err
		}
	}
	return len(stored) + len(ghosts), nil
}

// storedGhosts returns the ghost records of topic an earlier attempt
// stored in bronze, by offset, and their keys; none on a first attempt.
// Bronze is read only when its last batch is a ghost batch (its id starts
// with batchPrefix): nothing else writes it during a load, and a topic
// filter prunes no file (manifest bounds keep 16 characters of a topic).
func (a *Activities) storedGhosts(ctx context.Context, name lake.TableName, topic, batchPrefix string) ([]schemas.Record, map[cdc.Key]bool, error) {
	var out []schemas.Record
	keys := map[cdc.Key]bool{}
	tbl, err := lake.LoadTable(ctx, a.Catalog, name.Bronze())
	if err != nil || tbl == nil {
		return nil, keys, err
	}
	if cp, err := lake.ReadCheckpoint(tbl); err != nil || !strings.HasPrefix(cp.BatchID, batchPrefix) {
		return nil, keys, err
	}
	err = tableread.ReadBronzeTopic(ctx, a.Catalog, name, topic, func(rows []lake.BronzeRow) error {
		for _, r := range rows {
			out = append(out, r.Record) // of topic (ReadBronzeTopic's filter); ghost records have no headers
			keys[r.PK] = true
		}
		return nil
	})
	slices.SortFunc(out, func(x, y schemas.Record) int { return cmp.Compare(x.Offset, y.Offset) })
	return out, keys, err
}

// findGhosts returns, in key order, the mirror's keys live below (P, 0)
// that are neither in seen (read by the re-snapshot) nor in done (ghost
// records already stored).
func (a *Activities) findGhosts(ctx context.Context, st *tableState, name lake.TableName, lsn uint64, seen, done map[cdc.Key]bool) ([]cdc.Key, error) {
	mirror, _ := st.writers(a, name)
	live, err := mirror.LiveKeysBelow(ctx, cdc.PostgresSeq(lsn, 0))
	if err != nil {
		return nil, err
	}
	var ghosts []cdc.Key
	for _, k := range live {
		if !seen[k] && !done[k] {
			ghosts = append(ghosts, k)
		}
	}
	slices.Sort(ghosts)
	return ghosts, nil
}

// renderGhosts renders the deletes of ghost keys as records of topic at
// offsets from, from+1, …, all with the time of now.
func renderGhosts(ctx context.Context, mirror *lake.MirrorWriter, spec TableSpec, renderer *source.Renderer,
	topic string, lsn uint64, from int64, keys []cdc.Key) ([]schemas.Record, error) {
	rows, err := mirror.StoredRows(ctx, keys)
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixMicro()
	recs := make([]schemas.Record, len(keys))
	for i, k := range keys {
		v, err := renderer.GhostDeleteValue(rows[k], lsn, now)
		if err != nil {
			return nil, badSpec(fmt.Errorf("table %s: ghost delete of key %x: %w", spec.Table, string(k), err))
		}
		kb, err := renderer.Key(rows[k])
		if err != nil {
			return nil, badSpec(fmt.Errorf("table %s: ghost delete of key %x: %w", spec.Table, string(k), err))
		}
		recs[i] = schemas.Record{Topic: topic, Offset: from + int64(i), Key: kb, Value: v, Timestamp: now}
	}
	return recs, nil
}
