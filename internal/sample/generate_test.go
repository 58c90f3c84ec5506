package sample

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

var faulty = Options{
	Seed: 7, Inserts: 200, Updates: 300, Deletes: 60, UnseenDeletes: 15,
	Duplicates: 25, Late: 10, OutOfOrder: 12, Tombstones: true, TxMaxChanges: 4,
}

func TestDeterministic(t *testing.T) {
	for _, env := range []bool{false, true} {
		o := faulty
		o.Envelope = env
		a, b := Generate(o), Generate(o)
		if !sameMessages(a.Clean, b.Clean) || !sameMessages(a.Delivered, b.Delivered) {
			t.Fatalf("envelope=%v: same options gave different streams", env)
		}
		o.Seed++
		if c := Generate(o); sameMessages(a.Clean, c.Clean) {
			t.Fatalf("envelope=%v: different seeds gave the same stream", env)
		}
	}
	// Fault options change only Delivered.
	o := faulty
	o.Duplicates, o.Late, o.OutOfOrder = 0, 0, 0
	if !sameMessages(Generate(o).Clean, Generate(faulty).Clean) {
		t.Fatal("fault options changed Clean")
	}
}

func sameMessages(a, b []Message) bool {
	return slices.EqualFunc(a, b, func(x, y Message) bool {
		return bytes.Equal(x.Key, y.Key) && bytes.Equal(x.Value, y.Value) && (x.Value == nil) == (y.Value == nil) &&
			x.Op == y.Op && x.OrderID == y.OrderID && x.Seq == y.Seq
	})
}

func TestOpCounts(t *testing.T) {
	for _, tomb := range []bool{false, true} {
		o := faulty
		o.Tombstones = tomb
		s := Generate(o)
		count := map[byte]int{}
		inserted := map[int64]bool{}
		unseen := 0
		for i, m := range s.Clean {
			count[m.Op]++
			switch m.Op {
			case 'c':
				inserted[m.OrderID] = true
			case 'd':
				if !inserted[m.OrderID] {
					unseen++
				}
				if tomb {
					if nx := s.Clean[i+1]; !nx.Tombstone() || nx.OrderID != m.OrderID || !bytes.Equal(nx.Key, m.Key) {
						t.Fatalf("delete of %d at %d not followed by its tombstone", m.OrderID, i)
					}
				}
			case 'u':
				if !inserted[m.OrderID] {
					t.Fatalf("update of never-inserted key %d", m.OrderID)
				}
			}
		}
		wantTomb := 0
		if tomb {
			wantTomb = o.Deletes + o.UnseenDeletes
		}
		want := map[byte]int{'c': o.Inserts, 'u': o.Updates, 'd': o.Deletes + o.UnseenDeletes, 0: wantTomb}
		for op, n := range want {
			if count[op] != n {
				t.Errorf("tombstones=%v: %d × op %q, want %d", tomb, count[op], op, n)
			}
		}
		if unseen != o.UnseenDeletes {
			t.Errorf("%d deletes of unseen keys, want %d", unseen, o.UnseenDeletes)
		}
		if n := len(s.Clean); n != o.Inserts+o.Updates+o.Deletes+o.UnseenDeletes+wantTomb {
			t.Errorf("len(Clean) = %d", n)
		}
	}
}

func TestCountsAreCapped(t *testing.T) {
	s := Generate(Options{Seed: 3, Inserts: 2, Updates: 5, Deletes: 9})
	n := map[byte]int{}
	for _, m := range s.Clean {
		n[m.Op]++
	}
	if n['c'] != 2 || n['u'] != 5 || n['d'] != 2 {
		t.Fatalf("counts %v, want 2 c, 5 u, 2 d (deletes capped at inserts)", n)
	}
	if s := Generate(Options{Seed: 3, Updates: 5}); len(s.Clean) != 0 {
		t.Fatalf("updates without inserts: %d messages, want 0", len(s.Clean))
	}
}

// valueShape checks one value's JSON: field names and order, the source
// block, and the images; it returns the payload.
func valueShape(t *testing.T, m Message, envelope bool) map[string]any {
	t.Helper()
	raw := m.Value
	if envelope {
		keys, obj := orderedKeys(t, raw)
		if !slices.Equal(keys, []string{"schema", "payload"}) {
			t.Fatalf("envelope keys %v", keys)
		}
		schema := obj["schema"].(map[string]any)
		if schema["name"] != "shop.public.orders.Envelope" || schema["version"] != 2.0 {
			t.Fatalf("value schema name/version %v/%v", schema["name"], schema["version"])
		}
		raw = payloadBytes(t, raw)
		kk, kobj := orderedKeys(t, m.Key)
		if !slices.Equal(kk, []string{"schema", "payload"}) || kobj["schema"].(map[string]any)["name"] != "shop.public.orders.Key" {
			t.Fatalf("key %s", m.Key)
		}
		if id := kobj["payload"].(map[string]any)["order_id"]; id != float64(m.OrderID) {
			t.Fatalf("key %s, OrderID %d", m.Key, m.OrderID)
		}
	} else if string(m.Key) != fmt.Sprintf(`{"order_id":%d}`, m.OrderID) {
		t.Fatalf("key %s, OrderID %d", m.Key, m.OrderID)
	}
	keys, p := orderedKeys(t, raw)
	if want := []string{"before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"}; !slices.Equal(keys, want) {
		t.Fatalf("payload keys %v, want %v", keys, want)
	}
	srcKeys, src := orderedKeys(t, subObject(t, raw, "source"))
	if want := []string{"version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns", "schema", "table", "txId", "lsn", "xmin"}; !slices.Equal(srcKeys, want) {
		t.Fatalf("source keys %v, want %v", srcKeys, want)
	}
	for k, v := range map[string]any{"version": "2.7.3.Final", "connector": "postgresql", "name": "shop", "snapshot": "false",
		"db": "shop", "schema": "public", "table": "orders", "xmin": nil} {
		if src[k] != v {
			t.Fatalf("source.%s = %v, want %v", k, src[k], v)
		}
	}
	if p["op"] != string(m.Op) || p["transaction"] != nil {
		t.Fatalf("op %v transaction %v", p["op"], p["transaction"])
	}
	for _, side := range []string{"before", "after"} {
		if p[side] == nil {
			continue
		}
		ik, img := orderedKeys(t, subObject(t, raw, side))
		if want := []string{"order_id", "customer", "status", "amount", "note", "updated_at"}; !slices.Equal(ik, want) {
			t.Fatalf("%s keys %v", side, ik)
		}
		if img["order_id"] != float64(m.OrderID) {
			t.Fatalf("%s.order_id %v, key %d", side, img["order_id"], m.OrderID)
		}
	}
	return p
}

func TestValuesAreDebeziumJSON(t *testing.T) {
	for _, env := range []bool{false, true} {
		for _, full := range []bool{false, true} {
			o := faulty
			o.Envelope, o.ReplicaIdentityFull = env, full
			s := Generate(o)
			for _, m := range s.Clean {
				if m.Tombstone() {
					continue
				}
				p := valueShape(t, m, env)
				before, _ := p["before"].(map[string]any)
				after, _ := p["after"].(map[string]any)
				switch {
				case m.Op == 'c' && (before != nil || after == nil),
					m.Op == 'u' && (after == nil || (before == nil) == full),
					m.Op == 'd' && (before == nil || after != nil):
					t.Fatalf("full=%v op %c: before %v after %v", full, m.Op, before, after)
				}
				if m.Op == 'd' && !full {
					for _, f := range []string{"customer", "status", "amount", "note", "updated_at"} {
						if before[f] != nil {
							t.Fatalf("default identity delete: before.%s = %v", f, before[f])
						}
					}
				}
				if after != nil {
					status := after["status"].(string)
					if !slices.Contains([]string{"placed", "paid", "shipped", "delivered", "cancelled"}, status) {
						t.Fatalf("status %q", status)
					}
					if _, err := time.Parse(time.RFC3339Nano, after["updated_at"].(string)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

func TestAmountIsBase64Decimal(t *testing.T) {
	s := Generate(faulty)
	n := 0
	for _, m := range s.Clean {
		if m.Op != 'c' && m.Op != 'u' {
			continue
		}
		var p struct {
			After struct {
				Amount string `json:"amount"`
			} `json:"after"`
		}
		if err := json.Unmarshal(m.Value, &p); err != nil {
			t.Fatal(err)
		}
		raw, err := base64.StdEncoding.DecodeString(p.After.Amount)
		if err != nil {
			t.Fatal(err)
		}
		var unscaled int64
		for _, b := range raw {
			unscaled = unscaled<<8 | int64(b)
		}
		if raw[0]&0x80 != 0 || len(raw) > 1 && raw[0] == 0 && raw[1]&0x80 == 0 {
			t.Fatalf("amount %q is negative or not minimal", p.After.Amount)
		}
		if unscaled < 100 || unscaled > 250_000 {
			t.Fatalf("amount %q = %d cents, outside 1.00–2500.00", p.After.Amount, unscaled)
		}
		n++
	}
	if n != faulty.Inserts+faulty.Updates {
		t.Fatalf("checked %d amounts", n)
	}
	// One exact value: order 1001 of the hand-checked stream.
	if got := string(appendDecimal(nil, 81653)); got != "AT71" {
		t.Fatalf("81653 → %q, want AT71", got)
	}
}

func TestPositions(t *testing.T) {
	s := Generate(faulty)
	var prevSeq cdc.Seq
	var prevLSN, prevCommit uint64
	var prevTx, prevTs, firstTx int64 = -1, -1, -1
	var txLSNs []uint64
	for i, m := range s.Clean {
		if m.Tombstone() {
			if m.Seq != "" {
				t.Fatalf("tombstone %d has Seq %s", i, m.Seq)
			}
			continue
		}
		var p struct {
			Source struct {
				TsMs     int64  `json:"ts_ms"`
				TsUs     int64  `json:"ts_us"`
				TsNs     int64  `json:"ts_ns"`
				Sequence string `json:"sequence"`
				TxID     int64  `json:"txId"`
				LSN      uint64 `json:"lsn"`
			} `json:"source"`
			TsMs int64 `json:"ts_ms"`
			TsUs int64 `json:"ts_us"`
			TsNs int64 `json:"ts_ns"`
		}
		if err := json.Unmarshal(m.Value, &p); err != nil {
			t.Fatal(err)
		}
		var pair [2]*string
		if err := json.Unmarshal([]byte(p.Source.Sequence), &pair); err != nil {
			t.Fatalf("sequence %q: %v", p.Source.Sequence, err)
		}
		if i == 0 {
			firstTx = p.Source.TxID
		}
		var commit uint64
		if pair[0] != nil {
			commit, _ = strconv.ParseUint(*pair[0], 10, 64)
		}
		if (pair[0] == nil) != (p.Source.TxID == firstTx) {
			t.Fatalf("%d: sequence[0] %v in transaction %d: want null exactly in the first transaction", i, pair[0], p.Source.TxID)
		}
		if *pair[1] != strconv.FormatUint(p.Source.LSN, 10) {
			t.Fatalf("%d: sequence %q vs lsn %d", i, p.Source.Sequence, p.Source.LSN)
		}
		if m.Seq != cdc.PostgresSeq(max(commit, p.Source.LSN), p.Source.LSN) { // cdc.PostgresEventWords
			t.Fatalf("%d: Seq %s does not match the JSON (%d, %d)", i, m.Seq, commit, p.Source.LSN)
		}
		if m.Seq <= prevSeq || p.Source.LSN <= prevLSN || commit < prevCommit {
			t.Fatalf("%d: positions not increasing: Seq %s after %s", i, m.Seq, prevSeq)
		}
		if p.Source.TxID == prevTx {
			if commit != prevCommit || p.Source.TsUs != prevTs {
				t.Fatalf("%d: transaction %d with two commit positions/times", i, p.Source.TxID)
			}
			txLSNs = append(txLSNs, p.Source.LSN)
		} else {
			if p.Source.TxID < prevTx || p.Source.TsUs <= prevTs {
				t.Fatalf("%d: txId/commit time going backwards", i)
			}
			for _, l := range txLSNs { // this transaction's last-commit LSN is the previous one's commit
				if commit <= l {
					t.Fatalf("%d: commit LSN %d not above change LSN %d of its transaction", i, commit, l)
				}
			}
			txLSNs = []uint64{p.Source.LSN}
		}
		if p.Source.TsMs != p.Source.TsUs/1000 || p.Source.TsNs != p.Source.TsUs*1000 ||
			p.TsMs != p.TsNs/1_000_000 || p.TsUs != p.TsNs/1000 || p.TsUs < p.Source.TsUs {
			t.Fatalf("%d: inconsistent timestamps %+v", i, p)
		}
		prevSeq, prevLSN, prevCommit, prevTx, prevTs = m.Seq, p.Source.LSN, commit, p.Source.TxID, p.Source.TsUs
	}
}

func TestDeliveredIsCleanPlusDuplicates(t *testing.T) {
	for _, o := range []Options{
		faulty,
		{Seed: 2, Inserts: 50, Updates: 50, Deletes: 10, Duplicates: 100, Tombstones: true},
		{Seed: 4, Inserts: 3, Duplicates: 20},
		{Seed: 5, Inserts: 100, Updates: 100, Late: 20, OutOfOrder: 20},
	} {
		s := Generate(o)
		count := map[string]int{}
		for _, m := range s.Delivered {
			count[msgID(m)]++
		}
		for _, m := range s.Clean {
			if count[msgID(m)] == 0 {
				t.Fatalf("seed %d: Clean message %s missing from Delivered", o.Seed, m.Value)
			}
			count[msgID(m)]--
		}
		extra := 0
		for _, n := range count {
			extra += n
		}
		if extra != o.Duplicates || len(s.Delivered) != len(s.Clean)+o.Duplicates {
			t.Fatalf("seed %d: %d extra records (len %d vs %d), want %d", o.Seed, extra, len(s.Delivered), len(s.Clean), o.Duplicates)
		}
		if o.Late+o.OutOfOrder > 0 && sameMessages(s.Clean, s.Delivered) {
			t.Fatalf("seed %d: faults left the order unchanged", o.Seed)
		}
	}
}

func msgID(m Message) string {
	if m.Value == nil {
		return string(m.Key) + "\x00tombstone"
	}
	return string(m.Key) + "\x00" + string(m.Value)
}

func TestLateRecordsMoveTowardsTheEnd(t *testing.T) {
	o := Options{Seed: 9, Inserts: 400, Updates: 400, Late: 10}
	s := Generate(o)
	pos := map[string]int{}
	for i, m := range s.Clean {
		pos[msgID(m)] = i
	}
	far := 0
	for i, m := range s.Delivered {
		if i-pos[msgID(m)] > len(s.Clean)/10 {
			far++
		}
	}
	if far != o.Late {
		t.Fatalf("%d records delivered much later than their position, want %d", far, o.Late)
	}
}

func TestWriteJSONLines(t *testing.T) {
	s := Generate(Options{Seed: 1, Inserts: 3, Updates: 2, Deletes: 1, UnseenDeletes: 1, Tombstones: true})
	var buf bytes.Buffer
	if err := WriteJSONLines(&buf, s.Clean); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != len(s.Clean) {
		t.Fatalf("%d lines for %d messages", len(lines), len(s.Clean))
	}
	for i, m := range s.Clean {
		want := m.Value
		if m.Tombstone() {
			want = []byte("null")
		}
		if !bytes.Equal(lines[i], want) {
			t.Fatalf("line %d = %s, want %s", i, lines[i], want)
		}
	}
}

// BenchmarkGenerate100k generates 100k source changes (plus tombstones and
// faults) and reports ns per change event.
func BenchmarkGenerate100k(b *testing.B) {
	for _, env := range []bool{false, true} {
		b.Run(fmt.Sprintf("envelope=%v", env), func(b *testing.B) {
			o := Options{Seed: 1, Inserts: 40_000, Updates: 45_000, Deletes: 10_000, UnseenDeletes: 5_000,
				Duplicates: 1_000, Late: 100, OutOfOrder: 500, Tombstones: true, Envelope: env}
			events := o.Inserts + o.Updates + o.Deletes + o.UnseenDeletes
			b.ReportAllocs()
			for b.Loop() {
				s := Generate(o)
				if len(s.Clean) != events+o.Deletes+o.UnseenDeletes {
					b.Fatal(len(s.Clean))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
		})
	}
}
