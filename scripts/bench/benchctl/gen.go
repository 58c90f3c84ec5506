package main

// The workload generator: the semantics of the team's gen.py (same
// distributions and formats, not the same random stream), streaming, for
// up to ~10M rows and changes (memory ~80 bytes per row plus per change).

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

const (
	snapLSN  = 22_000_000
	baseTsMs = 1_793_491_200_000 // 2026-11-01T00:00:00Z
)

var statuses = []string{"pending", "paid", "packed", "shipped", "delivered", "cancelled", "refunded", "on_hold"}

var words = strings.Fields("customer asked for gift wrap please call before delivery leave at the back door " +
	"fragile handle with care second attempt address updated by support priority lane " +
	"invoice requested split shipment partial refund approved express courier weekend")

// row is one version of an order's non-key columns.
type row struct {
	ts    int64 // updated_at, µs since the epoch
	cust  int32
	cents int32
	note  uint16
	st    uint8
}

type intList []int

func (l *intList) String() string { return fmt.Sprint(*l) }
func (l *intList) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		return fmt.Errorf("want a positive integer, got %q", s)
	}
	*l = append(*l, v)
	return nil
}

type genOpts struct {
	out                string
	rows, changes      int
	batches            []int
	lateLo, lateHi     int
	dupFrac, lateFrac  float64
	seed               uint64
	parquetRowGroupMax int
}

func genCmd(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	var o genOpts
	var bs intList
	var late string
	var seed int64
	fs.StringVar(&o.out, "out", "", "output directory")
	fs.IntVar(&o.rows, "rows", 1_000_000, "N0, rows of the initial state")
	fs.IntVar(&o.changes, "changes", 1_000_000, "S, change events before redeliveries")
	fs.Var(&bs, "batch", "micro-batch size to cut the peers' files for (repeatable; the first also scales lateness)")
	fs.StringVar(&late, "late-batches", "2,4", "late events are delivered this many (min,max) batches of the first --batch later")
	fs.Float64Var(&o.dupFrac, "dup-frac", 0.05, "fraction of changes delivered twice")
	fs.Float64Var(&o.lateFrac, "late-frac", 0.05, "fraction of changes delivered late")
	fs.Int64Var(&seed, "seed", 42, "random seed")
	_ = fs.Parse(args)
	if o.out == "" {
		return fmt.Errorf("gen: --out is required")
	}
	if o.rows < 0 || o.changes < 0 || o.rows+o.changes >= 1<<31-1 {
		return fmt.Errorf("gen: --rows and --changes must be >= 0 and sum below 2^31")
	}
	o.batches = bs
	if len(o.batches) == 0 {
		o.batches = []int{50_000}
	}
	if _, err := fmt.Sscanf(late, "%d,%d", &o.lateLo, &o.lateHi); err != nil || o.lateLo > o.lateHi || o.lateLo < 0 {
		return fmt.Errorf("gen: --late-batches %q: want MIN,MAX", late)
	}
	o.seed = uint64(seed)
	o.parquetRowGroupMax = 1 << 20
	return generate(o, genSink{})
}

// genSink is where generate sends the Debezium values: by default (the
// zero value) to snapshot.jsonl and changes.jsonl, with the peers'
// Parquet files; streamed, to functions, without the peers' files. Either
// way the same random stream makes the same values, and expected.parquet,
// orders.table.json and meta.json are written to the output directory.
type genSink struct {
	// snapshot and changes, when set, take each value of phase 1 and of
	// the delivered change stream, in order, without the newline; the
	// slice is reused after the call returns.
	snapshot, changes func([]byte) error
	// between, when set, is called after phase 1's last value and before
	// phase 2 is generated (a streamed run loads the snapshot there).
	between func() error
}

func (s genSink) streamed() bool { return s.snapshot != nil }

// gen holds the generator's state: every row version, and the changes in
// log order as parallel slices (index i = the i-th change).
type gen struct {
	o     genOpts
	rng   *rand.Rand
	notes []string

	rows []row    // every row version ever written
	cur  []int32  // key -> index in rows of its current version (0 = none; rows[0] is a dummy)
	evOp []byte   // 'c', 'u', 'd'
	evK  []int32  // key
	evL  []int64  // LSN
	evB  []int32  // before image (row index, 0 = none)
	evA  []int32  // after image (row index, 0 = none)
	last []uint32 // key -> 1 + index of its last change (0 = snapshot only)
}

func (g *gen) randn(lo, hi int) int { return lo + g.rng.IntN(hi-lo) } // [lo, hi)

func makeNotes(rng *rand.Rand, n int) []string {
	notes := make([]string, n)
	for i := range notes {
		s := ""
		for len(s) < 36 {
			s = strings.TrimSpace(s + " " + words[rng.IntN(len(words))])
		}
		if len(s) > 44 {
			s = s[:44]
		}
		notes[i] = s
	}
	return notes
}

func (g *gen) randRow(tsUs int64) row {
	return row{cust: int32(g.randn(1, 200_001)), st: uint8(g.rng.IntN(len(statuses))), cents: int32(g.randn(100, 1_000_000)),
		note: uint16(g.rng.IntN(len(g.notes))), ts: tsUs}
}

// appendRowJSON appends the row image {"order_id":..,...,"updated_at":..}.
func (g *gen) appendRowJSON(b []byte, k int32, r row) []byte {
	b = append(b, `{"order_id":`...)
	b = strconv.AppendInt(b, int64(k), 10)
	b = append(b, `,"customer_id":`...)
	b = strconv.AppendInt(b, int64(r.cust), 10)
	b = append(b, `,"status":"`...)
	b = append(b, statuses[r.st]...)
	b = append(b, `","amount":"`...)
	b = appendCents(b, int64(r.cents))
	b = append(b, `","note":"`...)
	b = append(b, g.notes[r.note]...)
	b = append(b, `","updated_at":`...)
	b = strconv.AppendInt(b, r.ts, 10)
	return append(b, '}')
}

func appendCents(b []byte, c int64) []byte {
	b = strconv.AppendInt(b, c/100, 10)
	b = append(b, '.')
	if c%100 < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, c%100, 10)
}

// appendValueJSON appends a Debezium PostgreSQL value without the schema
// envelope (the format of gen.py's value_json). prev < 0: a snapshot read.
func (g *gen) appendValueJSON(b []byte, op byte, k int32, before, after int32, lsn, prev, tsMs, txid int64) []byte {
	b = append(b, `{"before":`...)
	if before != 0 {
		b = g.appendRowJSON(b, k, g.rows[before])
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"after":`...)
	if after != 0 {
		b = g.appendRowJSON(b, k, g.rows[after])
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"source":{"version":"2.7.3.Final","connector":"postgresql","name":"shop","ts_ms":`...)
	b = strconv.AppendInt(b, tsMs, 10)
	if prev < 0 {
		b = append(b, `,"snapshot":"true","db":"shop","sequence":"[null,\"`...)
	} else {
		b = append(b, `,"snapshot":"false","db":"shop","sequence":"[\"`...)
		b = strconv.AppendInt(b, prev, 10)
		b = append(b, `\",\"`...)
	}
	b = strconv.AppendInt(b, lsn, 10)
	b = append(b, `\"]","schema":"public","table":"orders","txId":`...)
	b = strconv.AppendInt(b, txid, 10)
	b = append(b, `,"lsn":`...)
	b = strconv.AppendInt(b, lsn, 10)
	b = append(b, `,"xmin":null},"op":"`...)
	b = append(b, op)
	b = append(b, `","ts_ms":`...)
	b = strconv.AppendInt(b, tsMs+7, 10)
	return append(b, `,"transaction":null}`...)
}

// ---- Parquet: the peers' flattened changes (op, seq, columns)

var decType = &arrow.Decimal128Type{Precision: 12, Scale: 2}
var tsType = &arrow.TimestampType{Unit: arrow.Microsecond} // no time zone: Parquet TIMESTAMP(isAdjustedToUTC=false), like pyarrow's timestamp("us")

var flatSchema = arrow.NewSchema([]arrow.Field{
	{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "order_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "customer_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: decType, Nullable: true},
	{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "updated_at", Type: tsType, Nullable: true},
}, nil)

var expectedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "order_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: decType, Nullable: true},
	{Name: "deleted", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// pqFile writes record batches of one schema to a Parquet file (Snappy),
// in row groups of at most maxRG rows.
type pqFile struct {
	f     *os.File
	w     *pqarrow.FileWriter
	b     *array.RecordBuilder
	n     int // rows in the builder
	maxRG int
	flush int // rows per record batch
}

func newPQFile(path string, schema *arrow.Schema, maxRG int) (*pqFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(int64(maxRG)))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		return nil, err
	}
	return &pqFile{f: f, w: w, b: array.NewRecordBuilder(memory.DefaultAllocator, schema), maxRG: maxRG, flush: min(maxRG, 1<<16)}, nil
}

// added is called after a row was appended to the builder.
func (p *pqFile) added() error {
	p.n++
	if p.n >= p.flush {
		return p.writeBatch()
	}
	return nil
}

func (p *pqFile) writeBatch() error {
	if p.n == 0 {
		return nil
	}
	rec := p.b.NewRecordBatch()
	defer rec.Release()
	p.n = 0
	if n, err := p.w.RowGroupNumRows(); err == nil && n > 0 && int64(n)+rec.NumRows() > int64(p.maxRG) {
		p.w.NewBufferedRowGroup()
	}
	return p.w.WriteBuffered(rec)
}

func (p *pqFile) close() error {
	err := p.writeBatch()
	p.b.Release()
	if cerr := p.w.Close(); err == nil {
		err = cerr
	}
	return err
}

// appendFlat appends one flattened change to a flatSchema builder.
func (g *gen) appendFlat(b *array.RecordBuilder, op byte, seq int64, k int32, r row) {
	b.Field(0).(*array.StringBuilder).Append(string(op))
	b.Field(1).(*array.Int64Builder).Append(seq)
	b.Field(2).(*array.Int64Builder).Append(int64(k))
	b.Field(3).(*array.Int64Builder).Append(int64(r.cust))
	b.Field(4).(*array.StringBuilder).Append(statuses[r.st])
	b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r.cents)))
	b.Field(6).(*array.StringBuilder).Append(g.notes[r.note])
	b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts))
}

func bufCreate(path string) (*os.File, *bufio.Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return f, bufio.NewWriterSize(f, 4<<20), nil
}

func closeBuf(f *os.File, w *bufio.Writer) error {
	err := w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func generate(o genOpts, sink genSink) error {
	t0 := time.Now()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if sink.streamed() != (sink.changes != nil) {
		return errors.New("gen: a streamed workload needs both its snapshot and its changes sink")
	}
	def := map[string]any{"table": "bench.orders", "key": []string{"order_id"}, "columns": []map[string]any{
		{"name": "order_id", "type": "long", "nullable": false},
		{"name": "customer_id", "type": "long"},
		{"name": "status", "type": "string"},
		{"name": "amount", "type": "decimal(12,2)"},
		{"name": "note", "type": "string"},
		{"name": "updated_at", "type": "timestamp", "source": "io.debezium.time.MicroTimestamp"}}}
	if err := writeJSON(filepath.Join(o.out, "orders.table.json"), def); err != nil {
		return err
	}
	g := &gen{o: o, rng: rand.New(rand.NewPCG(o.seed, 0x6c616b656d6972))}
	g.notes = makeNotes(g.rng, 4096)
	nKeys := o.rows + o.changes + 1
	g.rows = make([]row, 1, o.rows+o.changes+1)
	g.cur = make([]int32, nKeys)
	g.last = make([]uint32, nKeys)

	// ---- phase 1: the initial state as snapshot reads
	snapTs := int64(baseTsMs - 3_600_000)
	var (
		sf, cf *os.File
		sw, cw *bufio.Writer
		ip     *pqFile
		err    error
	)
	emitSnap, emitChange := sink.snapshot, sink.changes
	if !sink.streamed() {
		if sf, sw, err = bufCreate(filepath.Join(o.out, "snapshot.jsonl")); err != nil {
			return err
		}
		if ip, err = newPQFile(filepath.Join(o.out, "initial.parquet"), flatSchema, o.parquetRowGroupMax); err != nil {
			return err
		}
		emitSnap = lineWriter(sw)
	}
	live := make([]int32, 0, o.rows+o.changes/5+16)
	livePos := make([]int32, nKeys)
	buf := make([]byte, 0, 4096)
	for k := int32(1); int(k) <= o.rows; k++ {
		r := g.randRow((snapTs - int64(g.rng.IntN(86_400_000))) * 1000)
		g.rows = append(g.rows, r)
		g.cur[k] = int32(len(g.rows) - 1)
		livePos[k] = int32(len(live))
		live = append(live, k)
		buf = g.appendValueJSON(buf[:0], 'r', k, 0, g.cur[k], snapLSN, -1, snapTs, 1000)
		if err := emitSnap(buf); err != nil {
			return err
		}
		if ip != nil {
			g.appendFlat(ip.b, 'r', snapLSN, k, r)
			if err := ip.added(); err != nil {
				return err
			}
		}
	}
	if !sink.streamed() {
		if err := closeBuf(sf, sw); err != nil {
			return err
		}
		if err := ip.close(); err != nil {
			return err
		}
	}
	if sink.between != nil {
		if err := sink.between(); err != nil {
			return err
		}
	}

	// ---- phase 2: S changes in log order, one transaction each
	S := o.changes
	g.evOp = make([]byte, S)
	g.evK = make([]int32, S)
	g.evL = make([]int64, S)
	g.evB = make([]int32, S)
	g.evA = make([]int32, S)
	counts := map[string]int{"c": 0, "u": 0, "d": 0}
	nextKey := int32(o.rows + 1)
	lsn := int64(snapLSN + 1_000_000)
	for i := range S {
		tsMs := int64(baseTsMs + i)
		lsn += int64(g.randn(40, 400))
		x := g.rng.Float64()
		var op byte
		var k, before, after int32
		switch {
		case x < 0.2 || len(live) == 0:
			op, k = 'c', nextKey
			nextKey++
			g.rows = append(g.rows, g.randRow(tsMs*1000))
			after = int32(len(g.rows) - 1)
			g.cur[k] = after
			livePos[k] = int32(len(live))
			live = append(live, k)
		case x < 0.8:
			op, k = 'u', live[g.rng.IntN(len(live))]
			before = g.cur[k]
			nr := g.rows[before]
			nr.st = uint8(g.rng.IntN(len(statuses)))
			nr.cents = int32(g.randn(100, 1_000_000))
			if g.rng.Float64() < 0.3 {
				nr.note = uint16(g.rng.IntN(len(g.notes)))
			}
			nr.ts = tsMs * 1000
			g.rows = append(g.rows, nr)
			after = int32(len(g.rows) - 1)
			g.cur[k] = after
		default:
			op, k = 'd', live[g.rng.IntN(len(live))]
			before = g.cur[k] // the key keeps its last values (a soft delete)
			i2, lastK := livePos[k], live[len(live)-1]
			live = live[:len(live)-1]
			if lastK != k {
				live[i2] = lastK
				livePos[lastK] = i2
			}
		}
		counts[string(op)]++
		g.evOp[i], g.evK[i], g.evL[i], g.evB[i], g.evA[i] = op, k, lsn, before, after
		g.last[k] = uint32(i + 1)
	}
	live, livePos = nil, nil

	// ---- delivery order: late events moved, exact redeliveries added
	B := o.batches[0]
	type dv struct {
		key float64
		pos int32 // position in the list before sorting (stable tie-break)
		ev  int32
	}
	nLate, nDup := int(float64(S)*o.lateFrac), int(float64(S)*o.dupFrac)
	orderKey := make([]float64, S)
	for i := range orderKey {
		orderKey[i] = float64(i)
	}
	for _, i := range g.sample(S, nLate) {
		orderKey[i] = float64(i) + float64(g.randn(o.lateLo*B, o.lateHi*B+1)) + 0.5
	}
	del := make([]dv, 0, S+nDup)
	for i := range S {
		del = append(del, dv{orderKey[i], int32(i), int32(i)})
	}
	for _, i := range g.sample(S, nDup) {
		del = append(del, dv{orderKey[i] + float64(g.randn(1, B+1)) + 0.25, int32(len(del)), int32(i)})
	}
	orderKey = nil
	slices.SortFunc(del, func(a, b dv) int {
		if a.key != b.key {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		return int(a.pos - b.pos)
	})

	if !sink.streamed() {
		if cf, cw, err = bufCreate(filepath.Join(o.out, "changes.jsonl")); err != nil {
			return err
		}
		emitChange = lineWriter(cw)
	}
	type cut struct {
		size, n, file int
		dir           string
		p             *pqFile
	}
	cuts := make([]*cut, 0, len(o.batches))
	for _, bs := range slices.Compact(slices.Clone(o.batches)) {
		if sink.streamed() {
			break // no peers' files
		}
		d := filepath.Join(o.out, fmt.Sprintf("changes-b%d", bs))
		_ = os.RemoveAll(d)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		cuts = append(cuts, &cut{size: bs, dir: d})
	}
	for _, d := range del {
		i := int(d.ev)
		op, k, l := g.evOp[i], g.evK[i], g.evL[i]
		prev := int64(snapLSN)
		if i > 0 {
			prev = g.evL[i-1]
		}
		buf = g.appendValueJSON(buf[:0], op, k, g.evB[i], g.evA[i], l, prev, int64(baseTsMs+i), int64(5000+i))
		if err := emitChange(buf); err != nil {
			return err
		}
		img := g.evA[i]
		if img == 0 {
			img = g.evB[i] // a delete carries its before image
		}
		for _, c := range cuts {
			if c.p == nil {
				if c.p, err = newPQFile(filepath.Join(c.dir, fmt.Sprintf("batch-%05d.parquet", c.file)), flatSchema, c.size); err != nil {
					return err
				}
				c.file++
			}
			g.appendFlat(c.p.b, op, l, k, g.rows[img])
			if err := c.p.added(); err != nil {
				return err
			}
			if c.n++; c.n == c.size {
				if err := c.p.close(); err != nil {
					return err
				}
				c.p, c.n = nil, 0
			}
		}
	}
	if !sink.streamed() {
		if err := closeBuf(cf, cw); err != nil {
			return err
		}
	}
	for _, c := range cuts {
		if c.p != nil {
			if err := c.p.close(); err != nil {
				return err
			}
		}
	}

	// ---- the expected final mirror: per key the change with the highest seq
	ep, err := newPQFile(filepath.Join(o.out, "expected.parquet"), expectedSchema, o.parquetRowGroupMax)
	if err != nil {
		return err
	}
	deleted := 0
	for k := int32(1); k < nextKey; k++ {
		r := g.rows[g.cur[k]]
		seq, isDel := int64(snapLSN), false
		if e := g.last[k]; e > 0 {
			seq, isDel = g.evL[e-1], g.evOp[e-1] == 'd'
		}
		if isDel {
			deleted++
		}
		ep.b.Field(0).(*array.Int64Builder).Append(int64(k))
		ep.b.Field(1).(*array.StringBuilder).Append(statuses[r.st])
		ep.b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r.cents)))
		ep.b.Field(3).(*array.BooleanBuilder).Append(isDel)
		ep.b.Field(4).(*array.Int64Builder).Append(seq)
		if err := ep.added(); err != nil {
			return err
		}
	}
	if err := ep.close(); err != nil {
		return err
	}

	meta := map[string]any{"rows": o.rows, "changes": S, "delivered": len(del), "late": nLate, "redeliveries": nDup,
		"ops": counts, "batches": o.batches, "late_batches": []int{o.lateLo, o.lateHi}, "late_batch_unit": B,
		"seed": o.seed, "expected_keys": int(nextKey) - 1, "expected_deleted": deleted,
		"generator": "benchctl gen", "gen_seconds": round(time.Since(t0).Seconds(), 1)}
	if sink.streamed() {
		meta["streamed"] = true // snapshot.jsonl, changes.jsonl and the peers' files were not written
	}
	if err := writeJSON(filepath.Join(o.out, "meta.json"), meta); err != nil {
		return err
	}
	if !sink.streamed() {
		mb, _ := json.Marshal(meta)
		fmt.Println(string(mb))
	}
	return nil
}

// lineWriter writes each value as a line of w.
func lineWriter(w *bufio.Writer) func([]byte) error {
	return func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		return w.WriteByte('\n')
	}
}

// sample returns m distinct indexes of [0, n) in random order (a partial
// Fisher-Yates shuffle).
func (g *gen) sample(n, m int) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	for j := range m {
		r := j + g.rng.IntN(n-j)
		idx[j], idx[r] = idx[r], idx[j]
	}
	return idx[:m]
}
