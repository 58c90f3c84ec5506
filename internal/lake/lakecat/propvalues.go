package lakecat

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// SeqProp reads a hex `_seq` table property ("" when absent).
func SeqProp(tbl *table.Table, prop string) (cdc.Seq, error) {
	h := tbl.Properties()[prop]
	if h == "" {
		return "", nil
	}
	s, err := cdc.ParseSeqHex(h)
	if err != nil {
		return "", fmt.Errorf("lake: bad %s: %w", prop, err)
	}
	return s, nil
}

// ReadPending returns the table's pending-rebuild keys (PropPendingRebuild).
func ReadPending(tbl *table.Table) (map[cdc.Key]bool, error) {
	out := map[cdc.Key]bool{}
	t := tbl.Properties()[PropPendingRebuild]
	if t == "" {
		return out, nil
	}
	var hexKeys []string
	if err := json.Unmarshal([]byte(t), &hexKeys); err != nil {
		return nil, fmt.Errorf("lake: bad %s: %w", PropPendingRebuild, err)
	}
	for _, h := range hexKeys {
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("lake: bad key %q in %s: %w", h, PropPendingRebuild, err)
		}
		out[cdc.Key(b)] = true
	}
	return out, nil
}

// PendingJSON is the value of PropPendingRebuild for the keys of p.
func PendingJSON(p map[cdc.Key]bool) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, hex.EncodeToString([]byte(k)))
	}
	sort.Strings(keys)
	b, _ := json.Marshal(keys)
	return string(b)
}

// BatchLateKeys is the value of PropBatchLateKeys for batch Batch: Pre
// maps each key (hex) with a change at or below its mirror `_seq` before
// the batch to that `_seq` (hex); Rebuild lists the keys (hex) the
// history sends to the late-key rebuild whatever their positions. All is
// set instead when there were more than MaxBatchLateKeys of them together
// (the retried history then treats every key of the batch as late).
type BatchLateKeys struct {
	Batch   int64             `json:"batch"`
	Pre     map[string]string `json:"pre,omitempty"`
	Rebuild []string          `json:"rebuild,omitempty"`
	All     bool              `json:"all,omitempty"`
}

// MaxBatchLateKeys bounds the keys PropBatchLateKeys lists (the property
// is in every mirror metadata file).
const MaxBatchLateKeys = 256

// BatchLateKeysJSON is the value of PropBatchLateKeys for batch seq: pre
// holds the late keys with their `_seq` before the batch, rebuild the
// keys to rebuild.
func BatchLateKeysJSON(seq int64, pre map[cdc.Key]cdc.Seq, rebuild map[cdc.Key]bool) string {
	v := BatchLateKeys{Batch: seq}
	if len(pre)+len(rebuild) > MaxBatchLateKeys {
		v.All = true
	} else {
		if len(pre) > 0 {
			v.Pre = make(map[string]string, len(pre))
			for k, s := range pre {
				v.Pre[hex.EncodeToString([]byte(k))] = s.Hex()
			}
		}
		for k := range rebuild {
			v.Rebuild = append(v.Rebuild, hex.EncodeToString([]byte(k)))
		}
		sort.Strings(v.Rebuild)
	}
	b, _ := json.Marshal(v) // map keys are sorted
	return string(b)
}

// ReadBatchLateKeys returns what the mirror recorded for batch seq in
// PropBatchLateKeys: the late keys with their `_seq` before the batch,
// and the keys to rebuild; ok is false when it recorded nothing usable for
// that batch (a mirror committed by code before the property, another
// batch's, or too many keys). Errors: a malformed property.
func ReadBatchLateKeys(mirror *table.Table, seq int64) (pre map[cdc.Key]cdc.Seq, rebuild map[cdc.Key]bool, ok bool, err error) {
	t := mirror.Properties()[PropBatchLateKeys]
	if t == "" {
		return nil, nil, false, nil
	}
	var v BatchLateKeys
	if err := json.Unmarshal([]byte(t), &v); err != nil {
		return nil, nil, false, fmt.Errorf("lake: bad %s: %w", PropBatchLateKeys, err)
	}
	if v.Batch != seq || v.All {
		return nil, nil, false, nil
	}
	key := func(h string) (cdc.Key, error) {
		b, err := hex.DecodeString(h)
		if err != nil {
			return "", fmt.Errorf("lake: bad key %q in %s: %w", h, PropBatchLateKeys, err)
		}
		return cdc.Key(b), nil
	}
	pre = make(map[cdc.Key]cdc.Seq, len(v.Pre))
	for h, sh := range v.Pre {
		k, err := key(h)
		if err != nil {
			return nil, nil, false, err
		}
		if pre[k], err = cdc.ParseSeqHex(sh); err != nil {
			return nil, nil, false, fmt.Errorf("lake: bad position %q in %s: %w", sh, PropBatchLateKeys, err)
		}
	}
	rebuild = make(map[cdc.Key]bool, len(v.Rebuild))
	for _, h := range v.Rebuild {
		k, err := key(h)
		if err != nil {
			return nil, nil, false, err
		}
		rebuild[k] = true
	}
	return pre, rebuild, true, nil
}

// PurgeLegacy is the horizon of the purges made before purged keys were
// recorded, below which a change of a key absent from the mirror counts
// as purged: the mirror's PropPurgeLegacy, and while the mirror has no
// purged-keys table (withPurgedTable false) the higher of it and
// PropPurgeHorizon. "" when none. Errors: a malformed property.
func PurgeLegacy(mirror *table.Table, withPurgedTable bool) (cdc.Seq, error) {
	legacy, err := SeqProp(mirror, PropPurgeLegacy)
	if err != nil || withPurgedTable {
		return legacy, err
	}
	horizon, err := SeqProp(mirror, PropPurgeHorizon)
	if err != nil {
		return "", err
	}
	return max(legacy, horizon), nil
}

// PendingKeys returns the keys tbl (a mirror or history table) lists in
// its pending-rebuild set, in no particular order. Errors: a malformed
// property.
func PendingKeys(tbl *table.Table) ([]cdc.Key, error) {
	p, err := ReadPending(tbl)
	if err != nil {
		return nil, err
	}
	out := make([]cdc.Key, 0, len(p))
	for k := range p {
		out = append(out, k)
	}
	return out, nil
}

// FetchedPastOf returns the mirror's PropFetchedPast: per partition the
// position (hex) every change at or below it has been fetched on that
// partition; nil when absent. Errors: a value that is not that JSON, a
// position that is not hex.
func FetchedPastOf(tbl *table.Table) (map[int32]string, error) {
	return parseFetchedPast(tbl.Properties()[PropFetchedPast])
}

// parseFetchedPast reads a PropFetchedPast value ("" is nil).
func parseFetchedPast(v string) (map[int32]string, error) {
	if v == "" {
		return nil, nil
	}
	var m map[int32]string
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, fmt.Errorf("lake: bad %s: %w", PropFetchedPast, err)
	}
	for p, h := range m {
		if _, err := cdc.ParseSeqHex(h); err != nil {
			return nil, fmt.Errorf("lake: bad %s, partition %d: %w", PropFetchedPast, p, err)
		}
	}
	return m, nil
}

// MergeFetchedPast returns the PropFetchedPast value holding, per
// partition, the higher of old's (a PropFetchedPast value, "" none) and
// add's positions (payload.MergeFetchedPast), and whether it differs
// from old. A malformed old is replaced by add (the property is a hint
// the group takes at most as a fetched position).
func MergeFetchedPast(old string, add map[int32]string) (string, bool) {
	m, err := parseFetchedPast(old)
	if err != nil {
		m = nil
	}
	m, moved := payload.MergeFetchedPast(m, add)
	if !moved {
		return old, false
	}
	b, _ := json.Marshal(m) // map[int32]string always marshals (keys sorted)
	return string(b), true
}

// NewestTxOf returns the mirror's PropNewestTx (nil when absent).
// Errors: a value that is not that JSON.
func NewestTxOf(tbl *table.Table) (map[int32]payload.TxAt, error) {
	return parseNewestTx(tbl.Properties()[PropNewestTx])
}

func parseNewestTx(v string) (map[int32]payload.TxAt, error) {
	if v == "" {
		return nil, nil
	}
	var m map[int32]payload.TxAt
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, fmt.Errorf("lake: bad %s: %w", PropNewestTx, err)
	}
	return m, nil
}

// MergeNewestTx returns the PropNewestTx value after a batch whose
// newest transaction events per partition are add's (payload.MergeNewestTx
// on old, a PropNewestTx value, "" none), and whether it differs from
// old. A malformed old is dropped.
func MergeNewestTx(old string, add map[int32]payload.TxAt) (string, bool) {
	m, err := parseNewestTx(old)
	if err != nil {
		m = nil
	}
	m = payload.MergeNewestTx(m, add)
	if len(m) == 0 {
		return old, false
	}
	b, _ := json.Marshal(m) // always marshals (keys sorted)
	return string(b), string(b) != old
}
