package tablestate

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/table"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
)

// Heir is a key-change create applied before every change of its old
// key below it had arrived (State.Heirs): its new key and position.
type Heir struct {
	Key cdc.Key
	At  cdc.Seq
}

// maxHeirs bounds State.Heirs: past it a create is not listed (its
// value stays as filled when it was applied).
const maxHeirs = 100_000

// AddHeir lists h under old key k and reports whether it did (not when
// maxHeirs are listed).
func (s *State) AddHeir(k cdc.Key, h Heir) bool {
	n := 0
	for _, hs := range s.Heirs {
		n += len(hs)
		if n >= maxHeirs {
			return false
		}
	}
	if s.Heirs == nil {
		s.Heirs = map[cdc.Key][]Heir{}
	}
	if !slices.Contains(s.Heirs[k], h) {
		s.Heirs[k] = append(s.Heirs[k], h)
	}
	return true
}

// PropKeyChangeHeirs keeps State.Heirs on the mirror: a JSON array of
// [old key, new key, position] triples (hex; sorted), committed with each
// batch while any create is listed, so that a worker that restarts, or
// builds its state from the tables again, still lists the new key for
// RebuildKeys when its old key's changes below the create arrive. At most
// maxStoredHeirs are kept (the oldest positions first); past that a
// restart forgets the rest (docs/design.md, Known gaps).
const PropKeyChangeHeirs = "lakemirror.key-change-heirs"

// maxStoredHeirs bounds PropKeyChangeHeirs (about 100 bytes each: well
// under a catalog's property size limits, such as Glue's 512 KB).
const maxStoredHeirs = 1000

// HeirsJSON is PropKeyChangeHeirs for heirs without the creates of done
// ("[]" when none are left).
func HeirsJSON(heirs map[cdc.Key][]Heir, done []heirDone) string {
	var kept []heirDone
	for old, hs := range heirs {
		for _, h := range hs {
			if d := (heirDone{old: old, h: h}); !slices.Contains(done, d) {
				kept = append(kept, d)
			}
		}
	}
	slices.SortFunc(kept, func(a, b heirDone) int {
		return cmp.Or(a.h.At.Compare(b.h.At), cmp.Compare(a.old, b.old), cmp.Compare(a.h.Key, b.h.Key))
	})
	out := make([][3]string, 0, min(len(kept), maxStoredHeirs))
	for _, d := range kept[:min(len(kept), maxStoredHeirs)] {
		out = append(out, [3]string{hex.EncodeToString([]byte(d.old)), hex.EncodeToString([]byte(d.h.Key)), d.h.At.Hex()})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// loadHeirs lists the creates mirror's PropKeyChangeHeirs keeps in
// State.Heirs (a state built from the tables or a sidecar). Errors: a
// malformed property.
func (s *State) loadHeirs(mirror *table.Table) error {
	if mirror == nil {
		return nil
	}
	hs, err := parseHeirs(mirror.Properties()[PropKeyChangeHeirs])
	for _, h := range hs {
		s.AddHeir(h.old, h.h)
	}
	return err
}

// parseHeirs reads a PropKeyChangeHeirs value ("": none) as the old key
// and the create of each entry. Errors: malformed JSON, hex or position.
func parseHeirs(t string) ([]heirDone, error) {
	if t == "" {
		return nil, nil
	}
	var triples [][3]string
	if err := json.Unmarshal([]byte(t), &triples); err != nil {
		return nil, fmt.Errorf("lake: bad %s: %w", PropKeyChangeHeirs, err)
	}
	out := make([]heirDone, 0, len(triples))
	for _, tr := range triples {
		old, err1 := hex.DecodeString(tr[0])
		key, err2 := hex.DecodeString(tr[1])
		at, err3 := cdc.ParseSeqHex(tr[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("lake: bad entry %q in %s: %w", tr, PropKeyChangeHeirs, err)
		}
		out = append(out, heirDone{old: cdc.Key(old), h: Heir{Key: cdc.Key(key), At: at}})
	}
	return out, nil
}

// ChainHeirs lists key-change create e also under the old keys of the
// listed creates that made e's old key (a chain 1 → 2 → 3 whose first
// create still waits for key 1's changes): the value e took from its old
// key may come from such a create, so a change of key 1 below it fills
// e again too. It reports whether it listed e.
func (s *State) ChainHeirs(e *cdc.Event) bool {
	var up []heirDone
	for old, hs := range s.Heirs {
		for _, h := range hs {
			if h.Key == e.OldKey && h.At <= e.Seq && old != e.Key {
				up = append(up, heirDone{old: old, h: Heir{Key: e.Key, At: h.At}})
			}
		}
	}
	listed := false
	for _, u := range up {
		listed = s.AddHeir(u.old, u.h) || listed
	}
	return listed
}

// heirDone is a create of State.Heirs (h, under old key) to forget.
type heirDone struct {
	old cdc.Key
	h   Heir
}

// HeirsToRefill returns the new keys of the creates listed under the
// keys of groups whose changes reach below them with values (an upsert,
// a delete with a full before image: what a placeholder could take),
// and the creates whose old key's delete at or below them arrived (the
// old key's partition delivered every change before it), which
// forgetHeirs drops once the batch is recorded.
func (s *State) HeirsToRefill(groups []merge.Group, keyCols []string) (refill []cdc.Key, done []heirDone) {
	if len(s.Heirs) == 0 {
		return nil, nil
	}
	for _, g := range groups {
		for _, h := range s.Heirs[g.Key] {
			fill, deleted := false, false
			for _, e := range g.Events {
				if e.Seq > h.At {
					continue
				}
				if e.Op.IsUpsert() || e.Op == cdc.OpDelete && e.Before.HasValuesBeyond(keyCols) {
					fill = true
				}
				if e.Op == cdc.OpDelete && e.Seq == h.At {
					deleted = true // the key change's own delete: every earlier change came before it
				}
			}
			if fill {
				refill = append(refill, h.Key)
			}
			if deleted {
				done = append(done, heirDone{old: g.Key, h: h})
			}
		}
	}
	return refill, done
}

// forgetHeirs drops the creates of done from State.Heirs.
func (s *State) forgetHeirs(done []heirDone) {
	for _, d := range done {
		hs := slices.DeleteFunc(s.Heirs[d.old], func(h Heir) bool { return h == d.h })
		if len(hs) == 0 {
			delete(s.Heirs, d.old)
		} else {
			s.Heirs[d.old] = hs
		}
	}
}
