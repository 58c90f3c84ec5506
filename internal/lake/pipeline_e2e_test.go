//go:build e2e

package lake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/localstate"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// Through the real writers and Iceberg tables: a faulty delivery split
// into random batches gives the history of one clean pass.
func TestLakeHistoryMatchesCleanPass(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		s := sample.Generate(sample.Options{Seed: seed, Inserts: 15, Updates: 50, Deletes: 6, Duplicates: 6, Late: 10,
			OutOfOrder: 8, UnseenDeletes: 2, Tombstones: true, ReplicaIdentityFull: seed%2 == 0})
		p := newLakePipeline(t, merge.HistoryOptions{})
		p.deliver(s.Delivered, rand.New(rand.NewPCG(uint64(seed), 5)))
		if got, want := p.historyLines(), cleanHistory(t, s, merge.HistoryOptions{}); got != want {
			t.Fatalf("seed %d (%d keys rebuilt): history differs\ngot:\n%s\nwant:\n%s", seed, p.rebuilt, got, want)
		}
	}
}

// A local state log that cannot be written or read (a failing disk, here
// its file closed under it), while batches are recorded in the background
// or when a batch reads it, invalidates the state: the next batch (or the
// failed batch's retry) rebuilds it from the tables, and the tables end
// exactly as without the failure.
func TestStateLogFailureRebuildsFromTables(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		s := sample.Generate(sample.Options{Seed: seed, Inserts: 20, Updates: 60, Deletes: 8, Duplicates: 6, Late: 10,
			OutOfOrder: 8, UnseenDeletes: 2, Tombstones: true, ReplicaIdentityFull: seed%2 == 0})
		var sizes []int
		r := rand.New(rand.NewPCG(uint64(seed), 9))
		for left := len(s.Delivered); left > 0; {
			n := 1 + r.IntN(min(left, 12))
			sizes = append(sizes, n)
			left -= n
		}
		run := func(breakAfter map[int]bool) (*lakePipeline, []*localstate.Log) {
			p := newLakePipeline(t, merge.HistoryOptions{})
			var broken []*localstate.Log
			d := s.Delivered
			for i, n := range sizes {
				p.retryingBatch(d[:n]) // a batch that meets the broken log fails and is retried, as by the activity
				d = d[n:]
				if breakAfter[i] {
					for _, st := range []*tablestate.State{p.mirror.state, p.history.State()} {
						if l := st.ChainLog(); l != nil {
							l.CloseFile()
							broken = append(broken, l)
						}
					}
				}
			}
			return p, broken
		}
		steady, _ := run(nil)
		failing, broken := run(map[int]bool{2: true, len(sizes) / 2: true})
		if len(broken) == 0 {
			t.Fatalf("seed %d: no log was broken", seed)
		}
		for _, st := range []*tablestate.State{failing.mirror.state, failing.history.State()} {
			st.Settle()
			for _, b := range broken {
				if st.ChainLog() == b {
					t.Fatalf("seed %d: the state still uses a broken log", seed)
				}
			}
		}
		if got, want := failing.historyLines(), steady.historyLines(); got != want {
			t.Fatalf("seed %d: history differs after log failures\ngot:\n%s\nwant:\n%s", seed, got, want)
		}
		if got, want := mirrorLive(t, failing), mirrorLive(t, steady); got != want {
			t.Fatalf("seed %d: mirror differs after log failures\ngot:\n%s\nwant:\n%s", seed, got, want)
		}
	}
}

// Chain records encoded on two goroutines (recordPlan, here from two keys
// on instead of 4,096) give the same tables as sequential recording: the
// late keys woven or rebuilt from them end with the clean pass's history,
// and mirror and history are those of the same batches recorded
// sequentially.
func TestParallelRecordingMatchesSequential(t *testing.T) {
	defer tablestate.SetParallelRecordKeys(4096)()
	for seed := int64(1); seed <= 4; seed++ {
		s := sample.Generate(sample.Options{Seed: seed, Inserts: 15, Updates: 50, Deletes: 6, Duplicates: 6, Late: 10,
			OutOfOrder: 8, UnseenDeletes: 2, Tombstones: true, ReplicaIdentityFull: seed%2 == 0})
		var mirrors, histories [2]string
		for run, keys := range []int{1 << 30, 2} {
			tablestate.SetParallelRecordKeys(keys)
			p := newLakePipeline(t, merge.HistoryOptions{})
			p.deliver(s.Delivered, rand.New(rand.NewPCG(uint64(seed), 7)))
			mirrors[run], histories[run] = mirrorLive(t, p), p.historyLines()
		}
		if want := cleanHistory(t, s, merge.HistoryOptions{}); histories[1] != want {
			t.Fatalf("seed %d: history with parallel recording differs from the clean pass\ngot:\n%s\nwant:\n%s", seed, histories[1], want)
		}
		if histories[0] != histories[1] || mirrors[0] != mirrors[1] {
			t.Fatalf("seed %d: parallel recording differs from sequential\nmirror:\n%s\nwant:\n%s", seed, mirrors[1], mirrors[0])
		}
	}
}

// A batch's history versions written in chunks of two (a row group each,
// encoded while the next keys are decided) give the tables of one row
// group per file: the same history as the clean pass, the same mirror,
// and history files with more than one row group.
func TestChunkedHistoryFileMatchesOneRowGroup(t *testing.T) {
	defer scd2.SetChunkRows(16 * 1024)()
	ctx := context.Background()
	for seed := int64(1); seed <= 4; seed++ {
		s := sample.Generate(sample.Options{Seed: seed, Inserts: 15, Updates: 50, Deletes: 6, Duplicates: 6, Late: 10,
			OutOfOrder: 8, UnseenDeletes: 2, Tombstones: true, ReplicaIdentityFull: seed%2 == 0})
		var mirrors, histories [2]string
		maxGroups := 0
		for run, chunk := range []int{1 << 30, 2} {
			scd2.SetChunkRows(chunk)
			p := newLakePipeline(t, merge.HistoryOptions{})
			p.deliver(s.Delivered, rand.New(rand.NewPCG(uint64(seed), 11)))
			mirrors[run], histories[run] = mirrorLive(t, p), p.historyLines()
			if run == 1 {
				maxGroups = maxRowGroups(t, ctx, p)
			}
		}
		if want := cleanHistory(t, s, merge.HistoryOptions{}); histories[1] != want {
			t.Fatalf("seed %d: chunked history differs from the clean pass\ngot:\n%s\nwant:\n%s", seed, histories[1], want)
		}
		if histories[0] != histories[1] || mirrors[0] != mirrors[1] {
			t.Fatalf("seed %d: chunked history file differs from one row group\nmirror:\n%s\nwant:\n%s", seed, mirrors[1], mirrors[0])
		}
		if maxGroups < 2 {
			t.Fatalf("seed %d: no history file has more than one row group (max %d)", seed, maxGroups)
		}
	}
}

// deliver applies d in consecutive batches of 1 to 12 messages, sized by r.
func (p *lakePipeline) deliver(d []sample.Message, r *rand.Rand) {
	for len(d) > 0 {
		n := 1 + r.IntN(min(len(d), 12))
		p.batch(d[:n])
		d = d[n:]
	}
}

// retryingBatch applies a batch, retrying it (same id and ranges) after
// errors such as commit conflicts, as the activity's retry policy does.
func (p *lakePipeline) retryingBatch(msgs []sample.Message) {
	var err error
	for attempt := 0; attempt < 30; attempt++ {
		if err = p.tryBatch(msgs); err == nil {
			return
		}
		p.seq-- // the same batch again
		p.offset -= int64(len(msgs))
		time.Sleep(time.Millisecond)
	}
	p.t.Fatalf("batch never committed: %v", err)
}

func cleanHistory(t *testing.T, s sample.Stream, o merge.HistoryOptions) string {
	d := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"order_id"}})
	var events []*cdc.Event
	for i, m := range s.Clean {
		dec, err := d.Decode(schemas.Record{Topic: "t", Offset: int64(i), Key: m.Key, Value: m.Value})
		if err != nil {
			t.Fatal(err)
		}
		if dec.Kind == schemas.KindChange {
			events = append(events, dec.Event)
		}
	}
	var lines []string
	for _, g := range merge.GroupByKey(events) {
		vs, _ := merge.Replay(nil, g.Events, o)
		for _, v := range vs {
			id, _ := v.Values.Get("order_id")
			to := "<nil>"
			if !v.Current() {
				to = v.ToSeq.Hex()
			}
			lines = append(lines, fmt.Sprintf("%d %s..%s %s %v", id.I, v.Seq.Hex(), to, v.Hash, v.Current()))
		}
	}
	return strings.Join(lines, "\n")
}

// checkBronzeOnce asserts bronze holds offsets 0..n-1 once each.
func checkBronzeOnce(t *testing.T, p *lakePipeline, n int64) {
	tbl, err := p.cat.LoadTable(context.Background(), p.name.Bronze())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadRows(context.Background(), tbl, []string{lakecat.BronzeOffset})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(rows)) != n {
		t.Fatalf("bronze has %d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		if r[lakecat.BronzeOffset] != int64(i) {
			t.Fatalf("bronze row %d has offset %v", i, r[lakecat.BronzeOffset])
		}
	}
}

// maxRowGroups is the largest number of row groups of a live history data
// file of p.
func maxRowGroups(t *testing.T, ctx context.Context, p *lakePipeline) int {
	tbl, err := p.cat.LoadTable(ctx, p.name.History())
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, task := range tasks {
		f, err := fs.Open(task.File.FilePath())
		if err != nil {
			t.Fatal(err)
		}
		rd, err := file.NewParquetReader(f)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, rd.NumRowGroups())
		rd.Close()
	}
	return most
}
