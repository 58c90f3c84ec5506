package lake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/schemas"
)

// partBenchStream is the peer benchmark's workload (scripts/bench,
// `benchctl gen`) in small: an orders table (order_id key, customer_id,
// status of 8 values, amount, a ~40-character note, updated_at in µs)
// loaded with rows source-snapshot reads (op r, committed an hour before
// the changes), then changes in log order (20 % inserts of new keys,
// 60 % updates and 20 % deletes of random live keys), one transaction
// each, committed 1 ms apart. Debezium PostgreSQL JSON values without
// the envelope, before images as with REPLICA IDENTITY FULL. It returns
// the snapshot records and the change records, in delivery order.
func partBenchStream(rows, changes int) (snapshot, stream [][]byte) {
	const baseMs = 1_793_491_200_000 // 2026-11-01T00:00:00Z
	r := rand.New(rand.NewPCG(39, 7))
	statuses := []string{"new", "paid", "packed", "shipped", "delivered", "returned", "cancelled", "on_hold"}
	type row struct {
		cust, amount, ts int64
		status           string
		note             string
	}
	image := func(id int64, x row) string {
		return fmt.Sprintf(`{"order_id":%d,"customer_id":%d,"status":%q,"amount":%d,"note":%q,"updated_at":%d}`,
			id, x.cust, x.status, x.amount, x.note, x.ts)
	}
	newRow := func(ts int64) row {
		return row{cust: r.Int64N(100_000), amount: r.Int64N(1_000_000), ts: ts * 1000, status: statuses[r.IntN(8)],
			note: "note " + strconv.FormatUint(r.Uint64(), 36) + " " + strconv.FormatUint(r.Uint64(), 36)}
	}
	value := func(op string, lsn, tsMs int64, snap, before, after string) []byte {
		return []byte(fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"postgresql","name":"shop","ts_ms":%d,"snapshot":%q,"db":"shop","sequence":"[\"%d\",\"%d\"]","schema":"public","table":"orders","txId":%d,"lsn":%d,"xmin":null},"op":%q,"ts_ms":%d}`,
			before, after, tsMs, snap, lsn-1, lsn, lsn, lsn, op, tsMs+7))
	}
	live := make([]int64, 0, rows+changes)
	at := make(map[int64]int, rows+changes) // key -> index in live
	state := make(map[int64]row, rows+changes)
	snapMs, lsn := int64(baseMs-3_600_000), int64(1000)
	for id := int64(1); id <= int64(rows); id++ {
		x := newRow(snapMs)
		state[id] = x
		at[id] = len(live)
		live = append(live, id)
		snap := "true"
		if id == int64(rows) {
			snap = "last"
		}
		snapshot = append(snapshot, value("r", lsn, snapMs, snap, "null", image(id, x)))
	}
	next := int64(rows) + 1
	for i := 0; i < changes; i++ {
		lsn += 2
		tsMs := int64(baseMs + i)
		switch p := r.IntN(10); {
		case p < 2 || len(live) == 0:
			x := newRow(tsMs)
			state[next], at[next] = x, len(live)
			live = append(live, next)
			stream = append(stream, value("c", lsn, tsMs, "false", "null", image(next, x)))
			next++
		case p < 8:
			id := live[r.IntN(len(live))]
			before := image(id, state[id])
			x := newRow(tsMs)
			state[id] = x
			stream = append(stream, value("u", lsn, tsMs, "false", before, image(id, x)))
		default:
			j := r.IntN(len(live))
			id := live[j]
			before := image(id, state[id])
			last := live[len(live)-1]
			live[j], at[last] = last, j
			live = live[:len(live)-1]
			delete(at, id)
			delete(state, id)
			stream = append(stream, value("d", lsn, tsMs, "false", before, "null"))
		}
	}
	return snapshot, stream
}

// partBenchWriter applies batches of records to one table through
// TableWriter.Write, as the ApplyBatch activity does.
type partBenchWriter struct {
	tw  *TableWriter
	dec *schemas.Decoder
	seq int64
	off int64
}

func (p *partBenchWriter) apply(b *testing.B, records [][]byte, batch int) {
	b.Helper()
	ctx := context.Background()
	for len(records) > 0 {
		n := min(batch, len(records))
		var in WriteInput
		from := p.off
		for _, v := range records[:n] {
			in.Bronze = append(in.Bronze, BronzeRecord{Record: payload.Record{Offset: p.off, Value: v}})
			d, err := p.dec.Decode(schemas.Record{Topic: "t", Offset: p.off, Value: v})
			if err != nil {
				b.Fatal(err)
			}
			if d.Kind == schemas.KindChange {
				in.Events = append(in.Events, d.Event)
				in.Bronze[len(in.Bronze)-1].Op, in.Bronze[len(in.Bronze)-1].Seq = d.RawOp, d.Event.Seq
			}
			p.off++
		}
		records = records[n:]
		p.seq++
		in.Batch = Batch{ID: fmt.Sprint("b", p.seq), Seq: p.seq, Topic: "t", Ranges: []Range{{From: from, To: p.off}}, EndOffsets: Offsets{0: p.off}}
		in.MaxQuarantine = 10
		if _, err := p.tw.Write(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is this process's user + system CPU time so far, in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// BenchmarkApplyPartitioned measures the apply of the peer benchmark's
// phase 2 (partBenchStream: 100,000 changes in batches of 50,000
// records, after an untimed load of 100,000 rows) through
// TableWriter.Write into bronze (by ingestion day, the default), mirror
// and history, once unpartitioned and once with the layout issue 39
// measures: mirror bucket(16, order_id), history day(_valid_from). Each
// iteration starts from a new catalog. Besides wall time per iteration
// it reports cpu-s/op, the process's user + system seconds per
// iteration: compare the two sub-benchmarks' cpu-s/op (run them
// alternately, -count N) for the partitioned apply's extra cost.
//
//	go test ./internal/lake -run '^$' -bench BenchmarkApplyPartitioned -benchtime 1x -count 3
func BenchmarkApplyPartitioned(b *testing.B) {
	const rows, changes, batch = 100_000, 100_000, 50_000
	snapshot, stream := partBenchStream(rows, changes)
	for _, c := range []struct {
		name string
		lay  layout.Tables
	}{
		{"unpartitioned", layout.Tables{}},
		{"partitioned", layout.Tables{Mirror: layout.Spec{PartitionBy: []string{"bucket(16, order_id)"}}, History: layout.Spec{PartitionBy: []string{"day(_valid_from)"}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cpu float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := b.TempDir()
				cat, err := lakecat.OpenCatalog(context.Background(), lakecat.CatalogConfig{LocalDir: filepath.Join(dir, "lake")})
				if err != nil {
					b.Fatal(err)
				}
				keys := []string{"order_id"}
				p := &partBenchWriter{tw: NewTableWriter(cat, lakecat.TableName{Namespace: "shop", Name: "orders"}, keys,
					WriterOptions{History: true, Layout: c.lay, StateDir: filepath.Join(dir, "state")}),
					dec: schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: keys})}
				p.apply(b, snapshot, batch)
				b.StartTimer()
				c0 := processCPU()
				p.apply(b, stream, batch)
				cpu += processCPU() - c0
				b.StopTimer()
				p.tw.Mirror.State().Close()
				b.StartTimer()
			}
			b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(stream)*b.N)/cpu, "records/cpu-s")
		})
	}
}
