package erasure

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Erasure on request (docs/design.md, "Erasure"): Erase removes the rows
// of a few primary keys from a table's five Iceberg tables (bronze,
// mirror, history, quarantine, purged), so that no data file reachable
// from any retained Iceberg snapshot holds them:
//
//  1. find: every data file any retained snapshot reaches is read (the
//     columns that tell a row's key: the key columns, bronze's `_key`,
//     and for bronze and quarantine rows without one the raw Kafka key
//     or value, read by the table's decoder); rows hidden by position
//     deletes count, their bytes are still in the file. A branch or tag
//     whose snapshot reaches such a file refuses the erasure (Force:
//     goes on, keeps that snapshot and its files, and warns);
//  2. guard: the erasures table records each key's hash and the erasure
//     position, and the mirror raises its erasure horizon in the same
//     step, so that from then on a change of the key at or below the
//     position (a backfill, a redelivery, a connector replay) is refused
//     and stored nowhere (Guard; internal/lake's StageErased), and a
//     batch prepared before prepares again (internal/lake's purgeFence);
//  3. rewrite: each data file of the current snapshot holding a key's
//     row is written again without it (copy-on-write of those files
//     only; their position deletes applied), in one `overwrite` commit
//     per table that also drops the delete files left pointing only at
//     rewritten files; bronze keeps a row per Kafka offset (a
//     placeholder without key, value, headers, op or position) and loses
//     a key change's header naming the key. Repeated (at most three
//     rounds) until the current snapshots hold no row of the keys;
//  4. expire: the data manifests are rewritten (dropping the entries of
//     removed files, which keep their column bounds), every snapshot
//     whose manifests still name a file that held a key, or whose
//     summary lists a key as pending rebuild, is expired, and the files
//     only those snapshots referenced are deleted;
//  5. previous metadata files that list a key as pending rebuild, and the
//     state sidecar (the worker's local state, which holds key values),
//     are deleted;
//  6. a "completed" row records what was done.
//
// Every step can be run again: a retried erasure (same ID) finds what is
// left and adds to what the tables record it did (PropErasure).

// RawMatcher reads raw Kafka records for an erasure: the bronze and
// quarantine rows that carry no typed key (tombstones, undecodable or
// quarantined records) and the key-change headers of bronze rows.
// Implemented by the caller with the table's decoder.
type RawMatcher interface {
	// RecordKeys returns the keys (TypedKey) of a raw Kafka record: its
	// Kafka key's and, when that cannot be read, its value's row
	// changes'; none when neither can be read.
	RecordKeys(key, value []byte) []cdc.Key
	// SerializedKey types a serialized Kafka key (the value of a
	// __debezium.oldkey or __debezium.newkey header); false when it
	// cannot be read.
	SerializedKey(b []byte) (cdc.Key, bool)
}

// EraseRequest asks Erase to erase keys.
type EraseRequest struct {
	// ID identifies the erasure (the Temporal workflow id of the
	// request): a retried Erase with the same ID continues it, one whose
	// completed row exists returns what it recorded.
	ID          string
	Keys        payload.ErasureKeys // HashEraseKeys' output: hashes, never values
	RequestedBy string
	RequestedAt time.Time
	// Force goes on where a branch or tag keeps a snapshot that reaches
	// a file holding a key: that snapshot and its files are kept, and a
	// warning says so. Without it Erase refuses (*ErasureRefusedError)
	// before changing anything.
	Force bool
	// Matcher reads raw Kafka records (RawMatcher); nil: bronze and
	// quarantine rows are found by their `_key` only.
	Matcher RawMatcher
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// eraseProgress is PropErasure: an erasure's result for one table so far.
type eraseProgress struct {
	ID string `json:"id"`
	payload.EraseTableResult
}

func progressOf(tbl *table.Table, id string) eraseProgress {
	var p eraseProgress
	if err := json.Unmarshal([]byte(tbl.Properties()[PropErasure]), &p); err != nil || p.ID != id {
		return eraseProgress{ID: id}
	}
	return p
}

func (p eraseProgress) json() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// eraseTable is one of the five tables during an erasure.
type eraseTable struct {
	kind  string
	ident table.Identifier
	tbl   *table.Table
	m     *rowMatcher
	hits  map[string]fileHits // data file path → the keys' rows in it (files scanned so far)
	files map[string]iceberg.DataFile
}

// fileHits are the rows of the erased keys one data file holds.
type fileHits struct {
	rows     int64 // rows of a key
	stripped int64 // bronze rows of other keys with a key-change header naming a key
	maxSeq   cdc.Seq
}

// holds reports whether the file holds bytes of a key.
func (h fileHits) holds() bool { return h.rows+h.stripped > 0 }

// Erase erases the keys of req from the tables of name (see the steps
// above). Errors: *EraseKeyError (the request does not fit the table),
// *ErasureRefusedError (nothing changed), catalog, storage and commit
// failures (retry: the erasure continues where it stopped).
func Erase(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, req EraseRequest) (payload.EraseResult, error) {
	now := req.Now
	if now == nil {
		now = time.Now
	}
	res := payload.EraseResult{ID: req.ID, RequestedBy: req.RequestedBy, RequestedAt: req.RequestedAt, Keys: len(req.Keys.Hashes), Tables: map[string]payload.EraseTableResult{}}
	if req.ID == "" || len(req.Keys.Hashes) == 0 {
		return res, &EraseKeyError{Msg: "an erasure needs an id and at least one key"}
	}
	mirror, err := lakecat.LoadTable(ctx, cat, name.Mirror())
	if err != nil {
		return res, err
	}
	if mirror == nil {
		return res, &EraseKeyError{Msg: fmt.Sprintf("table %s has no mirror table: nothing to erase", name)}
	}
	keyCols, err := lakecat.KeyColumnsOf(mirror)
	if err != nil {
		return res, err
	}
	if !slices.Equal(keyCols, req.Keys.KeyColumns) {
		return res, &EraseKeyError{Msg: fmt.Sprintf("the keys were given for key columns %v, the mirror's are %v", req.Keys.KeyColumns, keyCols)}
	}
	etbl, err := lakecat.LoadTable(ctx, cat, name.Erasures())
	if err != nil {
		return res, err
	}
	if etbl == nil {
		return res, &EraseKeyError{Msg: fmt.Sprintf("%s does not exist: the keys' hashes were made against another table (HashEraseKeys creates it)", lakecat.IdentString(name.Erasures()))}
	}
	salt, err := erasureSalt(etbl)
	if err != nil {
		return res, err
	}
	if saltFingerprint(salt) != req.Keys.SaltID {
		return res, &EraseKeyError{Msg: fmt.Sprintf("the keys were hashed with salt %s, %s has salt %s: hash them again", req.Keys.SaltID, lakecat.IdentString(name.Erasures()), saltFingerprint(salt))}
	}
	recorded, err := readErasureRows(ctx, etbl)
	if err != nil {
		return res, err
	}
	for _, r := range recorded {
		if r.id == req.ID && r.event == ErasureCompleted {
			return completedResult(res, r), nil
		}
	}
	ks := &keySet{h: newKeyHasher(salt), want: map[string]bool{}}
	for _, h := range req.Keys.Hashes {
		ks.want[h] = true
	}

	// 1. find, and refuse before any change
	var tables []*eraseTable
	var refused []string
	for _, kind := range erasureKinds {
		t := &eraseTable{kind: kind, ident: kindIdent(name, kind), hits: map[string]fileHits{}, files: map[string]iceberg.DataFile{}}
		if t.tbl, err = lakecat.LoadTable(ctx, cat, t.ident); err != nil {
			return res, err
		}
		if t.tbl == nil {
			continue
		}
		t.m = &rowMatcher{kind: kind, keyCols: keyCols, ks: ks, raw: req.Matcher}
		if strings.EqualFold(t.tbl.Properties()[table.GCEnabledKey], "false") {
			refused = append(refused, fmt.Sprintf("%s has gc.enabled=false: its files cannot be deleted", lakecat.IdentString(t.ident)))
			continue
		}
		if err := t.scanSnapshots(ctx, false); err != nil {
			return res, err
		}
		for _, ref := range t.refsHolding(ctx) {
			if !req.Force {
				refused = append(refused, ref+" (drop it, or give --force to keep it and erase everywhere else)")
			}
		}
		tables = append(tables, t)
	}
	if len(refused) > 0 {
		return res, &ErasureRefusedError{Reasons: refused}
	}

	// 2. the guard: from here on the keys' changes at or below the position are refused
	pos, err := lakecat.SeqProp(mirror, lakecat.PropAppliedPosition)
	if err != nil {
		return res, err
	}
	for _, t := range tables {
		for _, h := range t.hits {
			pos = max(pos, h.maxSeq)
		}
	}
	have := map[string]bool{}
	for _, r := range recorded {
		if r.id == req.ID && r.event == ErasureRequested {
			have[r.keyHash] = true
			pos = max(pos, r.position)
		}
	}
	var rows []erasureRow
	for _, h := range req.Keys.Hashes {
		if !have[h] {
			have[h] = true
			rows = append(rows, erasureRow{id: req.ID, event: ErasureRequested, by: req.RequestedBy, at: req.RequestedAt,
				keyColumns: keyCols, keyHash: h, position: pos})
		}
	}
	if len(rows) > 0 {
		if _, err = appendErasureRows(ctx, etbl, rows); err != nil {
			return res, err
		}
	}
	res.Position = pos.Hex()
	if err := raiseErasureHorizon(ctx, cat, name, pos, req.ID); err != nil {
		return res, err
	}

	// 3. rewrite the current snapshots' files until none holds a key's row
	for round := 0; ; round++ {
		rewrote := false
		for _, t := range tables {
			n, err := t.rewriteCurrent(ctx, cat, req.ID)
			if err != nil {
				return res, err
			}
			rewrote = rewrote || n > 0
		}
		if !rewrote {
			break
		}
		if round == 2 {
			return res, fmt.Errorf("lake: erase: the keys' rows were still being written after %d rounds of rewriting (another worker applying the table's batches?): run the erasure again", round+1)
		}
	}

	// 4. drop the manifests' entries of removed files, expire, delete
	for _, t := range tables {
		warn, err := t.expire(ctx, cat, req.ID)
		if err != nil {
			return res, err
		}
		res.Warnings = append(res.Warnings, warn...)
	}

	// 5. metadata files and the state sidecar that hold keys
	for _, t := range tables {
		if err := t.removeOldMetadata(ctx, cat); err != nil {
			return res, err
		}
	}
	if err := removeSidecar(ctx, cat, name); err != nil {
		return res, err
	}

	// 6. the audit row
	done := erasureRow{id: req.ID, event: ErasureCompleted, by: req.RequestedBy, at: now().UTC(), keyColumns: keyCols, rows: map[string]int64{}}
	for _, t := range tables {
		if t.tbl, err = lakecat.LoadTable(ctx, cat, t.ident); err != nil {
			return res, err
		}
		p := progressOf(t.tbl, req.ID)
		res.Tables[t.kind] = p.EraseTableResult
		done.rows[t.kind] = p.Rows
		done.rewritten = append(done.rewritten, p.FilesRewritten...)
		done.deleted = append(done.deleted, p.FilesDeleted...)
	}
	done.warnings = res.Warnings
	res.CompletedAt = done.at
	details, _ := json.Marshal(res)
	done.details = string(details)
	if etbl, err = lakecat.LoadTable(ctx, cat, name.Erasures()); err != nil {
		return res, err
	}
	if _, err := appendErasureRows(ctx, etbl, []erasureRow{done}); err != nil {
		return res, err
	}
	return res, nil
}

// completedResult is the result an erasure's completed row records.
func completedResult(res payload.EraseResult, r erasureRow) payload.EraseResult {
	var rec payload.EraseResult
	if json.Unmarshal([]byte(r.details), &rec) == nil {
		res = rec
	}
	res.AlreadyCompleted = true
	return res
}

// kindIdent is the identifier of one of the five tables.
func kindIdent(name lakecat.TableName, kind string) table.Identifier {
	switch kind {
	case "bronze":
		return name.Bronze()
	case "mirror":
		return name.Mirror()
	case "history":
		return name.History()
	case "quarantine":
		return name.Quarantine()
	}
	return name.Purged()
}

// raiseErasureHorizon sets the mirror's erasure horizon to at least pos
// and its last erasure to id, in one metadata commit. Errors: catalog and
// commit failures.
func raiseErasureHorizon(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, pos cdc.Seq, id string) error {
	mirror, err := lakecat.LoadTable(ctx, cat, name.Mirror())
	if err != nil || mirror == nil {
		return err
	}
	cur, err := lakecat.SeqProp(mirror, PropErasureHorizon)
	if err != nil {
		return err
	}
	if cur >= pos && mirror.Properties()[PropLastErasure] == id {
		return nil
	}
	tx := mirror.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{PropErasureHorizon: max(cur, pos).Hex(), PropLastErasure: id}); err != nil {
		return err
	}
	if _, err := lakecat.CommitTx(ctx, mirror, tx); err != nil {
		return fmt.Errorf("lake: commit the erasure horizon of %s: %w", name, err)
	}
	return nil
}

// refsHolding names the branches and tags (other than main) whose
// snapshot reaches a data file holding a key.
func (t *eraseTable) refsHolding(ctx context.Context) []string {
	var out []string
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return []string{fmt.Sprintf("%s: file IO: %v", lakecat.IdentString(t.ident), err)}
	}
	for name, ref := range t.tbl.Metadata().Refs() {
		if name == table.MainBranch {
			continue
		}
		s := t.tbl.Metadata().SnapshotByID(ref.SnapshotID)
		if s == nil {
			continue
		}
		live, err := lakecat.LiveDataFiles(fs, *s)
		if err != nil {
			return []string{fmt.Sprintf("%s: %v", lakecat.IdentString(t.ident), err)}
		}
		for p := range live {
			if t.hits[p].holds() {
				out = append(out, fmt.Sprintf("%s %q of %s (snapshot %d) keeps a data file holding a key", ref.SnapshotRefType, name, lakecat.IdentString(t.ident), ref.SnapshotID))
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// keyFiles are the paths of the data files known to hold a key's row.
func (t *eraseTable) keyFiles() map[string]bool {
	out := map[string]bool{}
	for p, h := range t.hits {
		if h.holds() {
			out[p] = true
		}
	}
	return out
}
