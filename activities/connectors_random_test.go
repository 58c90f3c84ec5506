//go:build e2e

package activities

// Written from a breaker's run (2026-12-04): non-PostgreSQL connectors (MySQL, SQL Server, Oracle)
// against the merge rules. A consistent source is simulated (initial
// snapshot overlapping the stream, transactions of several changes, the
// same key changed twice in one transaction, primary-key changes, deletes
// with tombstones, later snapshot re-reads), rendered as each connector's
// Debezium JSON, and applied in source order, in split batches with late,
// swapped and duplicated records, steady and with restarts. Every run
// must give the tables of the source's truth.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
)

// xconn renders source blocks of one connector.
type xconn interface {
	name() string
	// read is the source block of a snapshot read at the current position
	// (taken between transactions); mark is the source.snapshot value.
	read(mark string, tsMs int64) string
	// begin starts a transaction; change allocates the position of its
	// next change of key; commit ends it and returns the source blocks of
	// its changes, in order.
	begin(tx int)
	change(key int)
	commit(tsMs int64) []string
}

// ---- MySQL: positions at commit; (file, pos, row) ----

type xmysql struct {
	r         *rand.Rand
	file, pos int
	tx        int
	keys      []int
	flavor    string // "mysql" or "mariadb"
}

func (m *xmysql) name() string { return m.flavor }
func (m *xmysql) read(mark string, tsMs int64) string {
	return fmt.Sprintf(`{"version":"2.7.3.Final","connector":%q,"name":"my","ts_ms":%d,"snapshot":%q,"db":"shop","sequence":null,"table":"orders","server_id":0,"gtid":null,"file":"mysql-bin.%06d","pos":%d,"row":0,"thread":null,"query":null}`,
		m.flavor, tsMs, mark, m.file, m.pos)
}
func (m *xmysql) begin(tx int)   { m.tx, m.keys = tx, nil }
func (m *xmysql) change(key int) { m.keys = append(m.keys, key) }
func (m *xmysql) commit(tsMs int64) []string {
	if m.r.IntN(5) == 0 {
		m.file++
		m.pos = 4
	}
	m.pos += 70 // GTID, BEGIN
	out := make([]string, len(m.keys))
	row := 0
	inEvent := map[int]bool{}
	for i, k := range m.keys {
		// several rows of one statement share an event (pos), differing in row;
		// one statement changes a row once
		if i > 0 && !inEvent[k] && m.r.IntN(2) == 0 {
			row++
		} else {
			m.pos += 50 + m.r.IntN(200)
			row = 0
			clear(inEvent)
		}
		inEvent[k] = true
		out[i] = fmt.Sprintf(`{"version":"2.7.3.Final","connector":%q,"name":"my","ts_ms":%d,"snapshot":"false","db":"shop","sequence":null,"table":"orders","server_id":1,"gtid":"3E11FA47-71CA-11E1-9E33-C80AA9429562:%d","file":"mysql-bin.%06d","pos":%d,"row":%d,"thread":7,"query":null}`,
			m.flavor, tsMs, m.tx, m.file, m.pos, row)
	}
	m.pos += 31 // XID
	return out
}

// ---- SQL Server: change LSN per change, commit LSN at commit ----

type xsqlserver struct {
	r                *rand.Rand
	vlf, block, slot int
	changes          []string
}

func (s *xsqlserver) next() string {
	s.slot += 1 + s.r.IntN(3)
	if s.slot > 0xfff0 || s.r.IntN(6) == 0 {
		s.slot, s.block = 1, s.block+8*(1+s.r.IntN(4))
		if s.r.IntN(10) == 0 {
			s.block, s.vlf = 0x10, s.vlf+1
		}
	}
	return fmt.Sprintf("%08x:%08x:%04x", s.vlf, s.block, s.slot)
}
func (s *xsqlserver) name() string { return "sqlserver" }
func (s *xsqlserver) read(mark string, tsMs int64) string {
	// the snapshot's LSN: the highest LSN at the snapshot (no new record)
	return fmt.Sprintf(`{"version":"2.7.3.Final","connector":"sqlserver","name":"ss","ts_ms":%d,"snapshot":%q,"db":"shop","sequence":null,"schema":"dbo","table":"orders","change_lsn":null,"commit_lsn":"%08x:%08x:%04x","event_serial_no":null}`,
		tsMs, mark, s.vlf, s.block, s.slot)
}
func (s *xsqlserver) begin(int)      { s.changes = nil }
func (s *xsqlserver) change(key int) { s.changes = append(s.changes, s.next()) }
func (s *xsqlserver) commit(tsMs int64) []string {
	commit := s.next()
	out := make([]string, len(s.changes))
	for i, c := range s.changes {
		out[i] = fmt.Sprintf(`{"version":"2.7.3.Final","connector":"sqlserver","name":"ss","ts_ms":%d,"snapshot":"false","db":"shop","sequence":null,"schema":"dbo","table":"orders","change_lsn":%q,"commit_lsn":%q,"event_serial_no":%%d}`,
			tsMs, c, commit)
	}
	return out
}

// ---- Oracle (LogMiner): SCN per change, RS_ID, commit SCN ----

type xoracle struct {
	r                 *rand.Rand
	scn               int
	logSeq, blk, offs int
	tx                int
	scns, rsids       []string
	withRS            bool
}

func (o *xoracle) name() string { return "oracle" }
func (o *xoracle) read(mark string, tsMs int64) string {
	return fmt.Sprintf(`{"version":"2.7.3.Final","connector":"oracle","name":"or","ts_ms":%d,"snapshot":%q,"db":"ORCL","sequence":null,"schema":"SHOP","table":"ORDERS","txId":null,"scn":"%d","commit_scn":null,"lcr_position":null,"rs_id":null,"ssn":0,"redo_thread":null,"user_name":null}`,
		tsMs, mark, o.scn)
}
func (o *xoracle) begin(tx int) { o.tx, o.scns, o.rsids = tx, nil, nil }
func (o *xoracle) change(int) {
	if o.r.IntN(2) == 0 {
		o.scn++
	}
	o.offs += 0x10 * (1 + o.r.IntN(4))
	if o.offs > 0x1f0 {
		o.offs, o.blk = 0x10, o.blk+1
	}
	if o.r.IntN(30) == 0 {
		o.logSeq, o.blk = o.logSeq+1, 2
	}
	o.scns = append(o.scns, fmt.Sprint(o.scn))
	o.rsids = append(o.rsids, fmt.Sprintf(" 0x%06x.%08x.%04x ", o.logSeq, o.blk, o.offs))
}
func (o *xoracle) commit(tsMs int64) []string {
	o.scn++
	commit := o.scn
	out := make([]string, len(o.scns))
	for i := range o.scns {
		rs := "null"
		if o.withRS {
			rs = fmt.Sprintf("%q", o.rsids[i])
		}
		out[i] = fmt.Sprintf(`{"version":"2.7.3.Final","connector":"oracle","name":"or","ts_ms":%d,"snapshot":"false","db":"ORCL","sequence":null,"schema":"SHOP","table":"ORDERS","txId":"%02x.%d.1","scn":%q,"commit_scn":"%d","lcr_position":null,"rs_id":%s,"ssn":0,"redo_thread":1,"user_name":"SHOP"}`,
			tsMs, o.tx%256, o.tx, o.scns[i], commit, rs)
	}
	return out
}

// xchange is one source change before its source block is known.
type xchange struct {
	op            string
	key           int
	before, after string
	hdr           []schemas.Header
	tombstone     bool
}

type xopts struct {
	keys, txs  int
	initial    bool // an initial snapshot whose reads overlap the stream
	rereads    int  // later snapshots (blocking / incremental) re-reading every live row
	keyChanges bool
	twice      bool // transactions changing one key twice
	tombstones bool
	toast      bool // Oracle LOB placeholders in updates (note unchanged)
	lobBefore  bool // Oracle LOB placeholders for note in every before image
	late, dups int
	oos        int
	collapse   bool
	tracked    bool
}

func ximg(k int, x *krow) string { return img(k, x) }

func xkey(k int) []byte { return []byte(fmt.Sprintf(`{"order_id":%d}`, k)) }

// xmsg renders a Debezium envelope.
func xmsg(op, before, after, src string, tsMs int64, key int) sample.Message {
	v := fmt.Sprintf(`{"before":%s,"after":%s,"source":%s,"op":%q,"ts_ms":%d,"transaction":null}`, before, after, src, op, tsMs+7)
	return sample.Message{Key: xkey(key), Value: []byte(v), Op: op[0]}
}

// xgen returns the stream in source (emission) order. The initial
// snapshot's reads are emitted interleaved with the first transactions
// streamed after it (their positions sort above the reads').
func xgen(r *rand.Rand, c xconn, o xopts) []wev {
	rows := map[int]*krow{}
	for k := 1; k <= o.keys; k++ {
		rows[k] = &krow{}
	}
	var out []wev
	n := 0
	emit := func(m sample.Message, hdr []schemas.Header) {
		n++
		out = append(out, wev{m: m, hdr: hdr, lsn: n})
	}
	ts := int64(1767258000000)
	tx := 100
	var pendingReads []wev
	if o.initial {
		for k := 1; k <= o.keys; k++ {
			if r.IntN(3) > 0 {
				x := rows[k]
				x.live, x.status, x.note = true, fmt.Sprintf("i%d", k), fmt.Sprintf("in%d", k)
			}
		}
		var live []int
		for k := 1; k <= o.keys; k++ {
			if rows[k].live {
				live = append(live, k)
			}
		}
		for i, k := range live {
			mark := "true"
			if i == 0 {
				mark = "first"
			}
			if i == len(live)-1 {
				mark = "last"
			}
			pendingReads = append(pendingReads, wev{m: xmsg("r", "null", ximg(k, rows[k]), c.read(mark, ts), ts, k)})
		}
	}
	snapAt := map[int]bool{}
	for range o.rereads {
		snapAt[1+r.IntN(o.txs)] = true
	}
	for i := range o.txs {
		// the initial snapshot's reads come out with the first transactions
		for len(pendingReads) > 0 && r.IntN(2) == 0 {
			n++
			pendingReads[0].lsn = n
			out = append(out, pendingReads[0])
			pendingReads = pendingReads[1:]
		}
		ts += 1000 + int64(r.IntN(5000))
		if snapAt[i] {
			mark := "true"
			if r.IntN(2) == 0 {
				mark = "incremental"
			}
			for k := 1; k <= o.keys; k++ {
				if x := rows[k]; x.live {
					emit(xmsg("r", "null", ximg(k, x), c.read(mark, ts), ts, k), nil)
				}
			}
			ts += 1000
		}
		tx++
		c.begin(tx)
		var chs []xchange
		size := 1 + r.IntN(3)
		for j := 0; j < size; j++ {
			k := 1 + r.IntN(o.keys)
			if j > 0 && o.twice && r.IntN(2) == 0 {
				k = chs[len(chs)-1].key // the same key again in this transaction
				if chs[len(chs)-1].op == "d" && chs[len(chs)-1].hdr != nil {
					continue
				}
			}
			x := rows[k]
			if !x.live {
				x.live, x.status, x.note = true, fmt.Sprintf("s%d.%d", tx, j), fmt.Sprintf("n%d.%d", tx, j)
				c.change(k)
				chs = append(chs, xchange{op: "c", key: k, before: "null", after: ximg(k, x)})
				continue
			}
			if o.keyChanges && r.IntN(6) == 0 {
				nk := 0
				for cand := 1; cand <= o.keys; cand++ {
					if !rows[cand].live && cand != k {
						nk = cand
						break
					}
				}
				if nk != 0 {
					y := rows[nk]
					before := ximg(k, x)
					y.live, y.status, y.note = true, x.status, x.note
					if r.IntN(2) == 0 {
						y.status = fmt.Sprintf("k%d.%d", tx, j)
					}
					x.live = false
					c.change(k) // one change record: both events share its position
					chs = append(chs, xchange{op: "d", key: k, before: before, after: "null",
						hdr: []schemas.Header{{Key: "__debezium.newkey", Value: xkey(nk)}}})
					chs = append(chs, xchange{op: "c", key: nk, before: "null", after: ximg(nk, y),
						hdr: []schemas.Header{{Key: "__debezium.oldkey", Value: xkey(k)}}})
					continue
				}
			}
			before := ximg(k, x)
			if r.IntN(4) == 0 {
				x.live = false
				c.change(k)
				chs = append(chs, xchange{op: "d", key: k, before: before, after: "null", tombstone: o.tombstones})
				continue
			}
			after := ""
			switch r.IntN(3) {
			case 0:
				x.status = fmt.Sprintf("s%d.%d", tx, j)
				after = ximg(k, x)
				if o.toast && r.IntN(2) == 0 {
					after = fmt.Sprintf(`{"order_id":%d,"status":%q,"note":%s}`, k, x.status, toast)
				}
			case 1:
				x.note = fmt.Sprintf("n%d.%d", tx, j)
				after = ximg(k, x)
			default:
				x.status, x.note = fmt.Sprintf("s%d.%d", tx, j), fmt.Sprintf("n%d.%d", tx, j)
				after = ximg(k, x)
			}
			c.change(k)
			chs = append(chs, xchange{op: "u", key: k, before: before, after: after})
		}
		if o.lobBefore {
			for j := range chs {
				if chs[j].before != "null" {
					var id int
					var st string
					fmt.Sscanf(chs[j].before, `{"order_id":%d,"status":%q`, &id, &st)
					chs[j].before = fmt.Sprintf(`{"order_id":%d,"status":%q,"note":%s}`, id, st, toast)
				}
			}
		}
		srcs := c.commit(ts)
		si := 0
		for j, ch := range chs {
			s := srcs[si]
			// a key change's create shares its delete's change record
			if !(ch.op == "c" && ch.hdr != nil) || j == 0 {
				s = srcs[si]
			}
			if ch.op == "d" && ch.hdr != nil {
				// next event (the create) reuses this position
			} else {
				si++
			}
			if strings.Contains(s, `"event_serial_no":%d`) {
				serial := 1
				if ch.op == "u" {
					serial = 2
				}
				s = strings.Replace(s, `"event_serial_no":%d`, fmt.Sprintf(`"event_serial_no":%d`, serial), 1)
			}
			emit(xmsg(ch.op, ch.before, ch.after, s, ts, ch.key), ch.hdr)
			if ch.tombstone {
				emit(sample.Message{Key: xkey(ch.key)}, nil)
			}
		}
	}
	for _, e := range pendingReads {
		n++
		e.lsn = n
		out = append(out, e)
	}
	return out
}

// xtables prints mirror and history with positions and times.
func (w *wrun) xtables() (string, string) {
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	m := tableText(w.t, w.cat, name, false, "order_id", "status", "note", lake.ColSeq, lake.ColDeleted, lakecat.ColSourceTs)
	h := ""
	if !w.spec.WithoutHistory {
		h = tableText(w.t, w.cat, name, true, "order_id", "status", "note", lake.ColSeq, lake.ColValidToSeq, lake.ColIsCurrent, lakecat.ColValidFrom, lakecat.ColValidTo)
	}
	sortLines := func(s string) string {
		l := strings.Split(s, "\n")
		slices.Sort(l)
		return strings.Join(l, "\n")
	}
	return sortLines(m), sortLines(h)
}

// xtruth computes the mirror (values and soft delete per key) and the history
// (values, from and to positions per version) from the stream in source
// order, by the documented rules, from decoded events.
func xtruth(t *testing.T, src []wev, tracked []string) (string, string) {
	d := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"order_id"}})
	type ver struct {
		status, note string
		from, to     string
	}
	type st struct {
		status, note string
		deleted      bool
		vers         []ver
	}
	keys := map[int64]*st{}
	str := func(r *cdc.Row, c string) string {
		if r == nil {
			return ""
		}
		v, ok := r.Get(c)
		if !ok || v.Kind == cdc.KindNull {
			return "<nil>"
		}
		return v.S
	}
	var evs []*cdc.Event
	for i, e := range src {
		if e.m.Value == nil {
			continue
		}
		dec, err := d.Decode(schemas.Record{Topic: "t", Offset: int64(i), Key: e.m.Key, Value: e.m.Value})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, dec.Event)
	}
	// source order is position order (the initial snapshot's reads are
	// emitted among later changes)
	slices.SortStableFunc(evs, func(a, b *cdc.Event) int { return a.Seq.Compare(b.Seq) })
	for _, ev := range evs {
		id := int64(0)
		if ev.After != nil {
			v, _ := ev.After.Get("order_id")
			id = v.I
		} else {
			v, _ := ev.Before.Get("order_id")
			id = v.I
		}
		s := keys[id]
		if s == nil {
			s = &st{}
			keys[id] = s
		}
		seq := ev.Seq.Hex()
		switch ev.Op {
		case cdc.OpDelete:
			s.deleted = true
			if n := len(s.vers); n > 0 && s.vers[n-1].to == "" {
				s.vers[n-1].to = seq
			}
		default:
			st, no := str(ev.After, "status"), str(ev.After, "note")
			if v, _ := ev.After.Get("note"); v.Kind == cdc.KindUnavailable {
				no = s.note
			}
			wasLive := !s.deleted && len(s.vers) > 0
			changed := st != s.status || no != s.note
			if tracked != nil {
				changed = st != s.status
			}
			s.status, s.note, s.deleted = st, no, false
			n := len(s.vers)
			if wasLive && !changed {
				s.vers[n-1].status, s.vers[n-1].note = st, no
				continue
			}
			if wasLive {
				s.vers[n-1].to = seq
			}
			s.vers = append(s.vers, ver{status: st, note: no, from: seq})
		}
	}
	var ids []int64
	for id := range keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var ml, hl []string
	for _, id := range ids {
		s := keys[id]
		ml = append(ml, fmt.Sprintf("%d %s %s %v", id, s.status, s.note, s.deleted))
		for _, v := range s.vers {
			to := v.to
			if to == "" {
				to = "<nil>"
			}
			hl = append(hl, fmt.Sprintf("%d %s %s %s %s", id, v.status, v.note, v.from, to))
		}
	}
	slices.Sort(hl)
	return strings.Join(ml, "\n"), strings.Join(hl, "\n")
}

// xshort is the mirror and history as xtruth prints them.
func (w *wrun) xshort() (string, string) {
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	m := tableText(w.t, w.cat, name, false, "order_id", "status", "note", lake.ColDeleted)
	ml := strings.Split(m, "\n")
	slices.SortFunc(ml, func(a, b string) int {
		var x, y int
		fmt.Sscan(a, &x)
		fmt.Sscan(b, &y)
		return x - y
	})
	h := ""
	if !w.spec.WithoutHistory {
		h = tableText(w.t, w.cat, name, true, "order_id", "status", "note", lake.ColSeq, lake.ColValidToSeq)
		hl := strings.Split(h, "\n")
		slices.Sort(hl)
		h = strings.Join(hl, "\n")
	}
	return strings.Join(ml, "\n"), h
}

func newXconn(r *rand.Rand, kind string) xconn {
	switch kind {
	case "mysql", "mariadb":
		return &xmysql{r: r, file: 3, pos: 154, flavor: kind}
	case "sqlserver":
		return &xsqlserver{r: r, vlf: 0x27, block: 0x758, slot: 1}
	case "oracle":
		return &xoracle{r: r, scn: 2122185, logSeq: 13, blk: 2, offs: 0x10, withRS: true}
	case "oracle-nors":
		return &xoracle{r: r, scn: 2122185, logSeq: 13, blk: 2, offs: 0x10}
	}
	panic(kind)
}

// TestConnectorsRandom: the tables of every delivery equal the
// source's truth, for MySQL, MariaDB, SQL Server and Oracle envelopes.
// CONNECTORS_SEED/CONNECTORS_SEEDS widen, CONNECTORS_CONN/CONNECTORS_VARIANT
// narrow. By default each connector and variant runs with one of the
// table options (all three tables, without history, without bronze), in
// turn; CONNECTORS_TABLES=all runs every option (about 3x the time).
func TestConnectorsRandom(t *testing.T) {
	conns := []string{"mysql", "mariadb", "sqlserver", "oracle"}
	if c := envStr("CONNECTORS_CONN"); c != "" {
		conns = []string{c}
	}
	variants := []xopts{
		{keys: 3, txs: 20, initial: true, late: 4, dups: 3, oos: 2, tombstones: true},
		{keys: 4, txs: 25, initial: true, twice: true, late: 6, dups: 4, oos: 3, tombstones: true},
		{keys: 4, txs: 25, initial: true, keyChanges: true, late: 6, dups: 4, oos: 3},
		{keys: 3, txs: 25, initial: true, rereads: 2, twice: true, late: 6, dups: 4, oos: 3},
		{keys: 5, txs: 40, initial: true, rereads: 2, keyChanges: true, twice: true, late: 10, dups: 6, oos: 4, tombstones: true},
		{keys: 3, txs: 30, initial: true, twice: true, late: 8, dups: 4, oos: 3, tracked: true},
		{keys: 3, txs: 30, initial: true, twice: true, rereads: 1, late: 8, dups: 4, oos: 3, collapse: true},
		{keys: 4, txs: 30, initial: true, twice: true, toast: true, rereads: 1, keyChanges: true, late: 8, dups: 4, oos: 3},
		{keys: 3, txs: 30, initial: true, twice: true, toast: true, lobBefore: true, late: 8, dups: 4, oos: 3},
	}
	first, n, vfilter := envInt("CONNECTORS_SEED", 1), envInt("CONNECTORS_SEEDS", 1), envInt("CONNECTORS_VARIANT", -1)
	tablesOpts := []TableSpec{{}, {WithoutHistory: true}, {WithoutBronze: true}}
	allTables := envStr("CONNECTORS_TABLES") == "all"
	fails := 0
	for seed := first; seed < first+n; seed++ {
		for ci, cn := range conns {
			for vi, o := range variants {
				if vfilter >= 0 && vi != vfilter {
					continue
				}
				for ti, topts := range tablesOpts {
					if !allTables && ti != (ci+vi)%len(tablesOpts) {
						continue
					}
					r := rand.New(rand.NewPCG(uint64(seed), uint64(vi)))
					src := xgen(r, newXconn(r, cn), o)
					del := deliverFaults(r, src, wopts{late: o.late, dups: o.dups, oos: o.oos})
					if cn == "mysql" || cn == "mariadb" {
						// the generator lets the initial source snapshot's
						// reads come out among the first transactions; a
						// MySQL connector emits them before it streams,
						// so a read below its key's streamed position
						// comes through another partition, in src too
						src = binlogPartitions(t, src)
						del = binlogPartitions(t, del)
					}
					sizes := splitSizes(r, len(del), 6)
					if o.tracked {
						topts.HistoryColumns = []string{"order_id", "status"}
					}
					tag := fmt.Sprintf("%s seed %d variant %d tables %d", cn, seed, vi, ti)
					fails += xcheck(t, tag, uint64(seed), topts, o, src, del, sizes)
					if fails > 4 {
						t.Fatal("too many")
					}
				}
			}
		}
	}
}

func envStr(name string) string { return strings.TrimSpace(os.Getenv(name)) }

// xcheck: clean (source order, one batch) against the truth, then split
// deliveries (steady and restarted) against clean.
func xcheck(t *testing.T, tag string, seed uint64, topts TableSpec, o xopts, src, del []wev, sizes []int) int {
	t.Helper()
	fails := 0
	clean := newBrun(t, topts, o.collapse)
	clean.apply(src, false)
	cm, ch := clean.xtables()
	if !o.collapse {
		tm, th := xtruth(t, src, topts.HistoryColumns)
		gm, gh := clean.xshort()
		if topts.WithoutHistory {
			th = ""
		}
		if gm != tm || gh != th {
			t.Errorf("%s: clean pass differs from the source's truth\nmirror:\n%s\nwant:\n%s\nhistory:\n%s\nwant:\n%s\nsource:\n%s", tag, gm, tm, gh, th, xdump(src))
			fails++
		}
	}
	for _, mode := range []string{"steady", "restarts"} {
		if mode == "restarts" && topts.WithoutBronze {
			continue // docs/design.md, Known gaps: without bronze a restart leaves late changes out of history
		}
		w := newBrun(t, topts, o.collapse)
		w.applySplit(del, sizes, mode == "restarts", seed)
		if sm, sh := w.xtables(); sm != cm || sh != ch {
			t.Errorf("%s %s: differs from clean\nmirror:\n%s\nwant:\n%s\nhistory:\n%s\nwant:\n%s\ndelivered: %v\nsizes %v", tag, mode, sm, cm, sh, ch, lsnsOp(del), sizes)
			fails++
		}
	}
	return fails
}

func xdump(src []wev) string {
	var b strings.Builder
	for _, e := range src {
		fmt.Fprintf(&b, "%d %s %s\n", e.lsn, e.m.Value, e.hdr)
	}
	return b.String()
}

var binlogPos = regexp.MustCompile(`"file":"mysql-bin\.(\d+)","pos":(\d+),"row":(\d+)`)

// binlogPartitions delivers each MySQL record that comes after a record
// of its key at a higher binlog position (a late or swapped one) through
// another Kafka partition: within one partition a key's MySQL changes
// arrive in binlog order, and one that does not is a binlog restart that
// stops the table (merge.FindBinlogRestart). A redelivery goes to the
// partition of the record it repeats. Records without a position
// (tombstones) stay in partition 0.
func binlogPartitions(t *testing.T, del []wev) []wev {
	type kp struct {
		key  string
		part int32
	}
	hi := map[kp]cdc.Seq{}
	at := map[string]int32{} // key + position → partition
	out := make([]wev, len(del))
	for i, e := range del {
		out[i] = e
		m := binlogPos.FindSubmatch(e.m.Value)
		if m == nil {
			continue
		}
		// decimal, not fmt.Sscan: it reads the file number's leading zeros
		// ("000009") as an octal prefix and fails on 8 and 9
		f, _ := strconv.ParseUint(string(m[1]), 10, 64)
		p, _ := strconv.ParseUint(string(m[2]), 10, 64)
		r, _ := strconv.ParseUint(string(m[3]), 10, 64)
		seq, k := cdc.MySQLSeq(f, p, r), string(e.m.Key)
		if part, ok := at[k+string(seq)]; ok {
			out[i].part = part
			continue
		}
		part := int32(0)
		for hi[kp{k, part}] > seq {
			part++
		}
		if part > 9 {
			t.Fatal("binlogPartitions: more than 10 partitions")
		}
		out[i].part, hi[kp{k, part}], at[k+string(seq)] = part, seq, part
	}
	return out
}
