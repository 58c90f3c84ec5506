package validation

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
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
func ReadMirrorReplayState(ctx context.Context, cat catalog.Catalog, name lakecat.TableName) (*MirrorReplayState, error) {
	mirror, err := lakecat.LoadTable(ctx, cat, name.Mirror())
	if err != nil || mirror == nil {
		return nil, err
	}
	keyCols, err := lakecat.KeyColumnsOf(mirror)
	if err != nil {
		return nil, err
	}
	out := &MirrorReplayState{Rows: map[string]validate.Stored{}, Pending: map[string]bool{}}
	if _, err := tableread.ScanMirrorRows(ctx, cat, name, func(r tableread.MirrorRow) error {
		k, err := cdc.KeyOf(r.Row, keyCols)
		if err != nil {
			return fmt.Errorf("lake: mirror %s: %w", name, err)
		}
		out.Rows[hex.EncodeToString([]byte(k))] = validate.Stored{Seq: r.Seq, Deleted: r.Deleted}
		return nil
	}); err != nil {
		return nil, err
	}
	pending, err := lakecat.ReadPending(mirror)
	if err != nil {
		return nil, err
	}
	for k := range pending {
		out.Pending[hex.EncodeToString([]byte(k))] = true
	}
	if out.Purges, err = readPurges(ctx, cat, name, mirror); err != nil {
		return nil, err
	}
	return out, nil
}

// readPurges reads the keys the purged-keys table holds, each with its
// highest purged `_seq` (hex), and the legacy horizon (lakecat.PurgeLegacy), as
// internal/lake's mirror writer takes them (loadPurged).
func readPurges(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, mirror *table.Table) (validate.Purges, error) {
	p := validate.Purges{Keys: map[string]string{}}
	tbl, err := lakecat.LoadTable(ctx, cat, name.Purged())
	if err != nil {
		return p, err
	}
	legacy, err := lakecat.PurgeLegacy(mirror, tbl != nil)
	if err != nil {
		return p, err
	}
	p.Horizon = legacy.Hex()
	if tbl == nil || tbl.CurrentSnapshot() == nil {
		return p, nil
	}
	highest := map[cdc.Key]cdc.Seq{}
	err = tableread.ReadPurgedRows(ctx, tbl, func(k cdc.Key, seq cdc.Seq) error {
		if k == "" {
			return fmt.Errorf("lake: an empty %s in %s", lakecat.ColKey, lakecat.IdentString(name.Purged()))
		}
		highest[k] = max(highest[k], seq)
		return nil
	})
	for k, seq := range highest {
		p.Keys[hex.EncodeToString([]byte(k))] = seq.Hex()
	}
	return p, err
}
