package validate

import (
	"fmt"
	"maps"
	"slices"
)

// CheckReplay: re-applying the row changes bronze holds (every change the
// pipeline applied) to the mirror would change nothing.
const CheckReplay = "replay"

// Stored is what the mirror holds for a key: its row's `_seq` (hex) and
// soft-delete flag.
type Stored struct {
	Seq     string
	Deleted bool
}

// Purges is what tombstone purges removed from the mirror: the purged
// keys with the `_seq` (hex) of the row each purge removed, and the legacy
// horizon ("" when none): purges made before purged keys were recorded
// removed soft-deleted rows at or below it without naming them.
type Purges struct {
	Keys    map[string]string
	Horizon string
}

// Replay checks that replaying bronze's row changes (recs: each key's
// changes with their `_seq`, hex) through the sequence guard
// (docs/design.md, rules 3 and 4) would change no mirror row: for every
// key, the mirror's row (mirror[key]) is at or above the key's last
// change, and a row at exactly that change's position is soft-deleted if
// and only if the change is a delete. A key without a row must have been
// purged at or above its last change (purged.Keys), or, for purges made
// before purged keys were recorded, have its last change at or below
// purged.Horizon. Keys in pending (late keys a rebuild has yet to apply)
// are left out. A row above the last change is newer than bronze (a
// truncate, a direct load or re-snapshot) and passes. A finding names
// each key whose row a replay would change: a lost update, a lost delete,
// a lost create or a missing row. Keys come out sorted.
func Replay(recs []Record, mirror map[string]Stored, purged Purges, pending map[string]bool) Result {
	last := map[string]Record{}
	for _, r := range recs {
		if l, ok := last[r.Key]; !ok || r.Seq > l.Seq {
			last[r.Key] = r
		}
	}
	var found []Finding
	skipped := 0
	for _, k := range slices.Sorted(maps.Keys(last)) {
		if pending[k] {
			skipped++
			continue
		}
		e := last[k]
		change := fmt.Sprintf("last change (op %s) at %s, partition %d offset %d", e.Op, e.Seq, e.Partition, e.Offset)
		s, ok := mirror[k]
		switch {
		case !ok:
			if p, purgedKey := purged.Keys[k]; purgedKey && p >= e.Seq {
				continue
			}
			if purged.Horizon != "" && e.Seq <= purged.Horizon {
				continue
			}
			found = append(found, Finding{Key: k, What: fmt.Sprintf("no mirror row and no purge of the key after its %s", change)})
		case s.Seq < e.Seq:
			found = append(found, Finding{Key: k, What: fmt.Sprintf("mirror row at %s, below its %s: a lost change", s.Seq, change)})
		case s.Seq == e.Seq && s.Deleted != (e.Op == "d"):
			found = append(found, Finding{Key: k, What: fmt.Sprintf("mirror row at its %s has soft delete %v", change, s.Deleted)})
		}
	}
	r := Result{Check: CheckReplay, Scope: count(len(recs), "event", "events") + " of " + count(len(last), "key", "keys") + ", " + count(len(mirror), "mirror row", "mirror rows") + ", " +
		count(len(purged.Keys), "purged key", "purged keys") + ", " + count(skipped, "pending key", "pending keys") + " left out",
		Expected: "every key's mirror row at or above its last change, deleted iff that change is a delete (or the key purged)",
		Observed: fmt.Sprintf("%d keys a replay would change", len(found))}
	r.finish(found)
	return r
}
