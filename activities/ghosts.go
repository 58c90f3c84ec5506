package activities

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
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

// deleteGhosts soft-deletes, at the re-snapshot's position (P, 0), every
// live mirror row below it whose key the snapshot did not contain (a
// ghost row: its delete was lost). Each delete is the Debezium delete the
// connector would have sent, with a key-only before image
// (source.Renderer.GhostDeleteValue), stored in bronze under
// ghostTopic(…) and applied to mirror and history as one batch, so a key
// rebuilt later from bronze (a late change below P on a restarted worker)
// folds it too (docs/design.md, rule 1). A retried attempt applies the
// records an earlier attempt stored in bronze, unchanged (same keys,
// times and offsets), so mirror and history get what bronze holds; keys
// it left live are not looked for again. It heartbeats while it works and
// returns the number of ghost records. Errors: applyRecords'.
func (a *Activities) deleteGhosts(ctx context.Context, st *tableState, name lake.TableName, spec TableSpec, renderer *source.Renderer,
	req LoadRequest, lsn uint64, read int64, seen map[cdc.Key]bool, snaps []cdc.PostgresSnapshot) (int, error) {
	cursor := &lake.LoadCursor{ID: req.LoadID, LSN: lsn, Read: read, Done: true, Snapshots: snaps}
	stop := keepAlive(ctx, 5*time.Second, func() any { return cursor })
	defer stop()
	topic := ghostTopic(spec.Topic, req.LoadID, lsn)
	recs, err := a.storedGhosts(ctx, name, topic)
	if err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		if recs, err = a.renderGhosts(ctx, st, name, spec, renderer, topic, lsn, seen); err != nil || len(recs) == 0 {
			return 0, err
		}
	}
	b := lake.Batch{ID: fmt.Sprintf("%s#%s@%d.ghosts", spec.Table, req.LoadID, lsn), Topic: topic,
		Ranges: []lake.Range{{From: 0, To: int64(len(recs))}}, EndOffsets: req.Position, Load: cursor}
	stage := ""
	ares, _, err := a.applyRecords(ctx, st, name, spec, b, recs, nil, "", &stage)
	if err != nil {
		return 0, err
	}
	if ares.History.Pending+ares.Mirror.Pending > 0 {
		if _, err := a.rebuildPending(ctx, st, name); err != nil {
			return 0, err
		}
	}
	return len(recs), nil
}

// storedGhosts returns the ghost records of topic an earlier attempt
// stored in bronze, by offset; none on a first attempt.
func (a *Activities) storedGhosts(ctx context.Context, name lake.TableName, topic string) ([]schemas.Record, error) {
	var out []schemas.Record
	err := lake.ReadBronzeTopic(ctx, a.Catalog, name, topic, func(rows []lake.BronzeRow) error {
		for _, r := range rows {
			out = append(out, schemas.Record{Topic: topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp})
		}
		return nil
	})
	slices.SortFunc(out, func(x, y schemas.Record) int { return cmp.Compare(x.Offset, y.Offset) })
	return out, err
}

// renderGhosts finds the ghost rows (live below (P, 0), not in seen) and
// renders their deletes as records of topic at offsets 0, 1, … in key
// order, all with the time of now.
func (a *Activities) renderGhosts(ctx context.Context, st *tableState, name lake.TableName, spec TableSpec, renderer *source.Renderer,
	topic string, lsn uint64, seen map[cdc.Key]bool) ([]schemas.Record, error) {
	mirror, _ := st.writers(a, name)
	live, err := mirror.LiveKeysBelow(ctx, cdc.PostgresSeq(lsn, 0))
	if err != nil {
		return nil, err
	}
	var ghosts []cdc.Key
	for _, k := range live {
		if !seen[k] {
			ghosts = append(ghosts, k)
		}
	}
	if len(ghosts) == 0 {
		return nil, nil
	}
	slices.Sort(ghosts)
	rows, err := mirror.StoredRows(ctx, ghosts)
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixMicro()
	recs := make([]schemas.Record, len(ghosts))
	for i, k := range ghosts {
		v, err := renderer.GhostDeleteValue(rows[k], lsn, now)
		if err != nil {
			return nil, badSpec(fmt.Errorf("table %s: ghost delete of key %x: %w", spec.Table, string(k), err))
		}
		kb, err := renderer.Key(rows[k])
		if err != nil {
			return nil, badSpec(fmt.Errorf("table %s: ghost delete of key %x: %w", spec.Table, string(k), err))
		}
		recs[i] = schemas.Record{Topic: topic, Offset: int64(i), Key: kb, Value: v, Timestamp: now}
	}
	return recs, nil
}
