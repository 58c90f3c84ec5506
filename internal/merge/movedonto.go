package merge

import "github.com/lakemirror/lakemirror/internal/cdc"

// MovedOntoLive counts the key-change creates of g (creates with an old
// key: the new row of a primary-key update, which Debezium sends as a
// delete of the old key and a create of the new one, headers
// __debezium.oldkey / __debezium.newkey) that land on a key whose row is
// live just below them: the stored row (when not past them) or the
// group's change before them. A primary key the source checks at each
// statement never lets a row take a key another row holds; only a
// deferrable one does, in a statement that swaps or shifts keys (`SET id
// = 3 - id`). Debezium's stream of such a statement is that of two key
// changes in a row, which the key-only images of the deletes cannot tell
// apart: applied in position order, a swap leaves one key deleted (the
// second row's delete of the key sorts after the first row's create of
// it) and a TOAST value filled from the wrong row. The count makes it
// seen (docs/design.md, "Known gaps"). Events at or below the stored
// position (stale or redelivered) are not counted; a truncate leaves the
// key not live. g's events are ascending by position (GroupByKey).
func MovedOntoLive(stored Stored, g Group) int {
	n := 0
	live, cur := stored.Found && !stored.Deleted, stored.Seq
	for _, e := range g.Events {
		if stored.Found && e.Seq <= cur {
			continue
		}
		if e.Op == cdc.OpCreate && e.OldKey != "" && live {
			n++
		}
		live, cur = e.Op.IsUpsert(), e.Seq
	}
	return n
}
