package lake

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// The history of rows written before a column was added does not depend
// on how the events were split into batches: an update that leaves every
// value as it was (the new column NULL) opens no version whether the
// version it follows was written before or after the column existed
// (_row_hash skips NULLs, merge.RowHash), and a later real change of the
// new column does.
func TestHistoryAcrossColumnAddition(t *testing.T) {
	msgs := []sample.Message{
		pgChange("c", "null", `{"order_id":1,"status":"new"}`, 100),
		pgChange("c", "null", `{"order_id":2,"status":"new"}`, 110),
		pgChange("u", `{"order_id":1,"status":"new"}`, `{"order_id":1,"status":"paid"}`, 200),
		// the source adds column note; Debezium's images now carry it
		pgChange("u", `{"order_id":1,"status":"paid","note":null}`, `{"order_id":1,"status":"paid","note":null}`, 300), // no-op
		pgChange("u", `{"order_id":2,"status":"new","note":null}`, `{"order_id":2,"status":"new","note":null}`, 310),   // no-op
		pgChange("u", `{"order_id":1,"status":"paid","note":null}`, `{"order_id":1,"status":"paid","note":"gift"}`, 400),
		pgChange("u", `{"order_id":2,"status":"new","note":null}`, `{"order_id":2,"status":"shipped","note":null}`, 410),
	}
	var want string
	for _, size := range []int{1, 2, 3, 100} {
		p := newLakePipeline(t, merge.HistoryOptions{})
		for d := msgs; len(d) > 0; {
			n := min(size, len(d))
			p.batch(d[:n])
			d = d[n:]
		}
		got := p.historyLines()
		var seqs []string
		for _, l := range strings.Split(got, "\n") {
			f := strings.Fields(l)
			seqs = append(seqs, f[0]+"@"+strings.Split(f[1], "..")[0])
		}
		// key 1: opened at 100, 200 and 400 (not at the no-op 300); key 2: at 110 and 410
		at := func(k, lsn int) string { return fmt.Sprintf("%d@%s", k, cdc.SeqOf(uint64(lsn), uint64(lsn)).Hex()) }
		if s, w := strings.Join(seqs, " "), strings.Join([]string{at(1, 100), at(1, 200), at(1, 400), at(2, 110), at(2, 410)}, " "); s != w {
			t.Fatalf("batch size %d: versions %s, want %s (lines:\n%s)", size, s, w, got)
		}
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("batch size %d: history differs from batch size 1\ngot:\n%s\nwant:\n%s", size, got, want)
		}
	}
}
