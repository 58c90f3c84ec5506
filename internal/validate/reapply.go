package validate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CheckReapply: re-applying a recent range of batches, from bronze, to a
// scratch copy of the mirror as it was before them gives the mirror as it
// is after them (docs/validation.md).
const CheckReapply = "reapply"

// Image is one key's row as a table holds it: its `_seq` (hex), soft
// delete flag and the digest of its source columns' values
// (merge.RowHash, hex).
type Image struct {
	Seq     string
	Deleted bool
	Digest  string
}

// ReapplyScope is what a re-apply covered: the mirror's Iceberg snapshot
// it started from (Base) and the one it is compared with (Target), the
// batch sequence numbers of the first and last batch re-applied and how
// many, the bronze records read for them, and the keys left out of the
// comparison (Skipped: keys tombstone purges removed, whose late changes
// the mirror refuses and a scratch table without the purged-keys table
// would accept).
type ReapplyScope struct {
	Base, Target        int64
	FromBatch, ToBatch  int64
	Batches             int
	Records             int
	Skipped             int
	Table, ScratchTable string
}

// Reapply compares the mirror at the target snapshot (mirror, by key:
// hex of the encoded primary key) with the scratch table the range was
// re-applied to (scratch), leaving out the keys in skip. dups names the
// keys a side holds more than one row of ("mirror", "re-applied" or
// both; the images hold one of them): each is a finding, whatever the
// rows. Expected and Observed are each side's row count and
// order-independent checksum (RangeSum over each row's key, `_seq`,
// soft-delete flag and digest). A finding names each key whose rows
// differ: absent from one side, another `_seq`, another soft-delete flag,
// or other values at the same `_seq`. Keys come out sorted.
func Reapply(scope ReapplyScope, mirror, scratch map[string]Image, dups map[string]string, skip map[string]bool) Result {
	var want, got RangeSum
	for k, m := range mirror {
		if !skip[k] {
			want.Add(m.fingerprint(k))
		}
	}
	for k, s := range scratch {
		if !skip[k] {
			got.Add(s.fingerprint(k))
		}
	}
	res := Result{
		Check: CheckReapply,
		Scope: fmt.Sprintf("batches %d to %d (%d, %d bronze records) re-applied to %s, a copy of %s at Iceberg snapshot %d; compared with snapshot %d; %d purged keys left out",
			scope.FromBatch, scope.ToBatch, scope.Batches, scope.Records, scope.ScratchTable, scope.Table, scope.Base, scope.Target, scope.Skipped),
		Expected: "mirror: " + want.String(),
		Observed: "re-applied: " + got.String(),
	}
	keys := map[string]bool{}
	for k := range mirror {
		keys[k] = true
	}
	for k := range scratch {
		keys[k] = true
	}
	var found []Finding
	for k := range dups {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if side, ok := dups[k]; ok {
			found = append(found, Finding{Key: k, What: "more than one row of the key: " + side})
			continue
		}
		if skip[k] {
			continue
		}
		m, inMirror := mirror[k]
		s, inScratch := scratch[k]
		if what := imageDiff(m, inMirror, s, inScratch); what != "" {
			found = append(found, Finding{Key: k, What: what})
		}
	}
	res.finish(found)
	return res
}

// imageDiff describes how the mirror's row m and the re-applied row s
// differ ("" when they do not).
func imageDiff(m Image, inMirror bool, s Image, inScratch bool) string {
	switch {
	case !inScratch:
		return fmt.Sprintf("the mirror holds a row (_seq %s%s) the re-apply does not produce", m.Seq, deletedNote(m))
	case !inMirror:
		return fmt.Sprintf("the re-apply produces a row (_seq %s%s) the mirror does not hold", s.Seq, deletedNote(s))
	}
	var d []string
	if m.Seq != s.Seq {
		d = append(d, fmt.Sprintf("_seq %s in the mirror, %s re-applied", m.Seq, s.Seq))
	}
	if m.Deleted != s.Deleted {
		d = append(d, fmt.Sprintf("soft-deleted %t in the mirror, %t re-applied", m.Deleted, s.Deleted))
	}
	if m.Digest != s.Digest {
		d = append(d, fmt.Sprintf("values differ (digest %s in the mirror, %s re-applied)", m.Digest, s.Digest))
	}
	return strings.Join(d, "; ")
}

func deletedNote(i Image) string {
	if i.Deleted {
		return ", soft-deleted"
	}
	return ""
}

// fingerprint is the digest of everything the comparison covers for key
// k (hex, 32 digits), summed by RangeSum.
func (i Image) fingerprint(k string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%t\x00%s", k, i.Seq, i.Deleted, i.Digest)
	return hex.EncodeToString(h.Sum(nil)[:16])
}
