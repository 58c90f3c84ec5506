package lake

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// MirrorReplayState is what the replay check (validate.Replay) compares
// bronze's changes with: every mirror row's key (hex of the encoded
// primary key, as bronze's `_key`) with its `_seq` (hex) and soft-delete
// flag, the keys tombstone purges removed, and the late keys the mirror
// has yet to rebuild (its pending-rebuild set, hex).
type MirrorReplayState struct {
	Rows    map[string]validate.Stored
	Purges  validate.Purges
	Pending map[string]bool
}

// ReadMirrorReplayState reads the mirror's current Iceberg snapshot
// (every row, position deletes applied), its purged-keys table and its
// pending-rebuild set. It returns nil when the mirror does not exist.
// Memory: about 100 bytes per mirror row. Errors: catalog and file IO
// failures, a mirror without recorded key columns, a key that cannot be
// encoded, a malformed purged key or position.
func ReadMirrorReplayState(ctx context.Context, cat catalog.Catalog, name TableName) (*MirrorReplayState, error) {
	mirror, err := LoadTable(ctx, cat, name.Mirror())
	if err != nil || mirror == nil {
		return nil, err
	}
	keyCols, err := KeyColumnsOf(mirror)
	if err != nil {
		return nil, err
	}
	out := &MirrorReplayState{Rows: map[string]validate.Stored{}, Pending: map[string]bool{}}
	if _, err := ScanMirrorRows(ctx, cat, name, func(r MirrorRow) error {
		k, err := cdc.KeyOf(r.Row, keyCols)
		if err != nil {
			return fmt.Errorf("lake: mirror %s: %w", name, err)
		}
		out.Rows[hex.EncodeToString([]byte(k))] = validate.Stored{Seq: r.Seq, Deleted: r.Deleted}
		return nil
	}); err != nil {
		return nil, err
	}
	pending, err := PendingKeys(mirror)
	if err != nil {
		return nil, err
	}
	for _, k := range pending {
		out.Pending[hex.EncodeToString([]byte(k))] = true
	}
	if out.Purges, err = readPurges(ctx, cat, name, mirror.Properties()); err != nil {
		return nil, err
	}
	return out, nil
}

// readPurges reads the keys the purged-keys table holds, each with its
// highest purged `_seq`, and the legacy horizon the way loadPurged takes
// it (the mirror's PropPurgeLegacy; without a purged-keys table, the
// higher of it and PropPurgeHorizon).
func readPurges(ctx context.Context, cat catalog.Catalog, name TableName, mirrorProps map[string]string) (validate.Purges, error) {
	p := validate.Purges{Keys: map[string]string{}, Horizon: mirrorProps[PropPurgeLegacy]}
	tbl, err := LoadTable(ctx, cat, name.Purged())
	if err != nil {
		return p, err
	}
	if tbl == nil {
		p.Horizon = max(p.Horizon, mirrorProps[PropPurgeHorizon])
		return p, nil
	}
	if tbl.CurrentSnapshot() == nil {
		return p, nil
	}
	rows, _, err := ReadRows(ctx, tbl, nil)
	if err != nil {
		return p, err
	}
	for _, r := range rows {
		k, _ := r[ColKey].(string)
		s, _ := r[ColSeq].(string)
		if _, err := hex.DecodeString(k); err != nil || k == "" {
			return p, fmt.Errorf("lake: bad %s %q in %s", ColKey, k, IdentString(name.Purged()))
		}
		if _, err := cdc.ParseSeqHex(s); err != nil {
			return p, fmt.Errorf("lake: bad %s %q in %s: %w", ColSeq, s, IdentString(name.Purged()), err)
		}
		if s > p.Keys[k] {
			p.Keys[k] = s
		}
	}
	return p, nil
}
