package schemas

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Property: for every row, ordering its change events by `_seq` gives the
// order in which the source committed them (docs/design.md, rule 1). Each test
// simulates a database with interleaved transactions that touch the same
// rows under row locks (a writer waits for the row's previous writer to
// commit; deadlocked transactions roll back and are never emitted), lets
// a simulated connector assign positions the way that database and
// Debezium do, renders real Debezium JSON source blocks, decodes them and
// checks the order.

// simChange is one row change inside a transaction.
type simChange struct {
	row   int
	op    cdc.Op
	value int // a unique value: tx*1000 + step
	log   simPos
}

// simPos is a log position taken when a change or a commit happens.
type simPos struct {
	a, b, c uint64 // connector-specific parts
}

type simTx struct {
	id        int
	planned   []int // rows to change, in order
	done      []simChange
	commit    simPos
	committed bool
	aborted   bool
}

// simSource assigns log positions; it is told about every change and
// commit in the order they happen.
type simSource interface {
	change(tx *simTx, row int) simPos
	commit(tx *simTx) simPos
}

// simulate runs transactions on rows with row locks and returns the
// committed ones in commit order.
func simulate(rng *rand.Rand, src simSource, nTx, nRows int) []*simTx {
	txs := make([]*simTx, nTx)
	for i := range txs {
		n := 1 + rng.IntN(4)
		tx := &simTx{id: i + 1}
		for range n {
			tx.planned = append(tx.planned, 1+rng.IntN(nRows))
		}
		txs[i] = tx
	}
	locks := map[int]*simTx{}
	existing := map[int]bool{}
	var committed []*simTx
	active := slices.Clone(txs)
	for len(active) > 0 {
		// Try a random runnable transaction; if every one is blocked, the
		// database breaks the deadlock by rolling one back.
		order := rng.Perm(len(active))
		progressed := false
		for _, i := range order {
			tx := active[i]
			if len(tx.done) == len(tx.planned) {
				tx.commit = src.commit(tx)
				tx.committed = true
				committed = append(committed, tx)
				for r, o := range locks {
					if o == tx {
						delete(locks, r)
					}
				}
				for _, c := range tx.done {
					existing[c.row] = c.op != cdc.OpDelete
				}
				active = slices.Delete(active, i, i+1)
				progressed = true
				break
			}
			row := tx.planned[len(tx.done)]
			if o := locks[row]; o != nil && o != tx {
				continue // blocked: the row's writer has not committed
			}
			locks[row] = tx
			op := cdc.OpUpdate
			exists := existing[row]
			for _, c := range tx.done {
				if c.row == row {
					exists = c.op != cdc.OpDelete
				}
			}
			switch {
			case !exists:
				op = cdc.OpCreate
			case rng.IntN(5) == 0:
				op = cdc.OpDelete
			}
			tx.done = append(tx.done, simChange{row: row, op: op, value: tx.id*1000 + len(tx.done), log: src.change(tx, row)})
			progressed = true
			break
		}
		if !progressed {
			i := rng.IntN(len(active))
			tx := active[i]
			tx.aborted = true
			for r, o := range locks {
				if o == tx {
					delete(locks, r)
				}
			}
			active = slices.Delete(active, i, i+1)
		}
	}
	return committed
}

// checkRowOrder decodes the emitted events (in emission order, which is
// the truth: commit order, then order within a transaction) in a
// shuffled delivery order and checks that, per row, ordering by Seq
// gives the truth; with global, also that Seq increases along the whole
// stream (strictly, except between the rows of one source snapshot,
// which share the snapshot's position).
func checkRowOrder(t *testing.T, rng *rand.Rand, values []string, opts DecoderOptions, global bool) {
	t.Helper()
	type got struct {
		truth int
		ev    *cdc.Event
	}
	var evs []got
	perm := rng.Perm(len(values))
	d := NewDecoder(opts)
	for _, i := range perm {
		dec, err := d.Decode(Record{Topic: "sim", Offset: int64(i), Value: []byte(values[i])})
		if err != nil {
			t.Fatalf("event %d: %v\n%s", i, err, values[i])
		}
		evs = append(evs, got{truth: i, ev: dec.Event})
	}
	byKey := map[cdc.Key][]got{}
	for _, g := range evs {
		byKey[g.ev.Key] = append(byKey[g.ev.Key], g)
	}
	for k, list := range byKey {
		slices.SortFunc(list, func(a, b got) int { return a.ev.Seq.Compare(b.ev.Seq) })
		for i := 1; i < len(list); i++ {
			if list[i-1].ev.Seq == list[i].ev.Seq {
				t.Fatalf("key %x: two changes share the position %v", k, list[i].ev.Seq)
			}
			if list[i-1].truth > list[i].truth {
				t.Fatalf("key %x: by _seq, event %d (%v) sorts before event %d (%v), but the source committed it later",
					k, list[i-1].truth, list[i-1].ev.Seq, list[i].truth, list[i].ev.Seq)
			}
		}
	}
	if global {
		slices.SortFunc(evs, func(a, b got) int { return a.truth - b.truth })
		for i := 1; i < len(evs); i++ {
			c := evs[i-1].ev.Seq.Compare(evs[i].ev.Seq)
			if c > 0 || c == 0 && (evs[i].ev.Snapshot == cdc.SnapshotNone || evs[i-1].ev.Snapshot == cdc.SnapshotNone) {
				t.Fatalf("event %d (%v) does not sort before event %d (%v)", i-1, evs[i-1].ev.Seq, i, evs[i].ev.Seq)
			}
		}
	}
}

// image renders a row image of the simulated table.
func image(c simChange) string {
	return `{"id":` + strconv.Itoa(c.row) + `,"v":` + strconv.Itoa(c.value) + `}`
}

func envelope(c simChange, source string, extra string) string {
	before, after := "null", image(c)
	switch c.op {
	case cdc.OpDelete:
		before, after = image(c), "null"
	case cdc.OpUpdate:
		before = image(c)
	}
	return `{"before":` + before + `,"after":` + after + `,"source":` + source + `,"op":"` + c.op.String() + `","ts_ms":1700000000000` + extra + `}`
}

const simRuns = 300

// PostgreSQL: WAL LSNs are byte positions that grow with every record;
// a change's lsn is its WAL record, the commit LSN the commit record's.
// Logical decoding streams whole transactions at commit, in commit order;
// source.sequence is [lastCommitLsn, lsn] with lastCommitLsn the commit
// LSN of the previously streamed transaction.
type pgSim struct {
	rng *rand.Rand
	wal uint64
}

func (s *pgSim) change(*simTx, int) simPos {
	s.wal += 24 + uint64(s.rng.IntN(200))
	return simPos{a: s.wal}
}

func (s *pgSim) commit(*simTx) simPos {
	s.wal += 16 + uint64(s.rng.IntN(40))
	return simPos{a: s.wal}
}

func TestPostgresSeqFollowsCommitOrder(t *testing.T) {
	for run := range simRuns {
		rng := rand.New(rand.NewPCG(uint64(run), 1))
		sim := &pgSim{rng: rng, wal: 0x1000000}
		snapshotLSN := sim.wal
		var values, old []string
		// A snapshot of rows 1..3 first: snapshot reads carry the
		// snapshot's LSN and no commit LSN.
		for row := 1; row <= 3; row++ {
			src := `{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":1,"snapshot":"true","db":"d","sequence":"[null,\"` +
				strconv.FormatUint(snapshotLSN, 10) + `\"]","schema":"public","table":"t","txId":1,"lsn":` + strconv.FormatUint(snapshotLSN, 10) + `}`
			c := simChange{row: row, op: cdc.OpRead, value: row}
			values = append(values, envelope(c, src, ""))
			old = append(old, envelope(c, `{"connector":"postgresql","ts_ms":1,"snapshot":"true","lsn":`+strconv.FormatUint(snapshotLSN, 10)+`}`, ""))
		}
		last := "null"
		for _, tx := range simulate(rng, sim, 12, 5) {
			for _, c := range tx.done {
				lsn := strconv.FormatUint(c.log.a, 10)
				src := `{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":1,"snapshot":"false","db":"d","sequence":"[` + last + `,\"` + lsn +
					`\"]","schema":"public","table":"t","txId":` + strconv.Itoa(100+tx.id) + `,"lsn":` + lsn + `,"xmin":null}`
				values = append(values, envelope(c, src, ""))
				// Before Debezium 1.5 there was no source.sequence: only lsn.
				old = append(old, envelope(c, `{"connector":"postgresql","ts_ms":1,"lsn":`+lsn+`}`, ""))
			}
			last = `\"` + strconv.FormatUint(tx.commit.a, 10) + `\"`
		}
		checkRowOrder(t, rng, values, idKey, true)
		checkRowOrder(t, rng, old, idKey, false) // per row only: lsn alone is not commit order across rows
	}
}

// MySQL: the binlog receives a transaction's row events when it commits,
// so positions are assigned at commit; one statement's rows share an
// event (pos) and differ in row; the server rotates to the next binlog
// file (index + 1, pos restarting at 4) between transactions. With GTIDs
// source.gtid names the transaction.
type mySim struct {
	rng       *rand.Rand
	file, pos uint64
}

func (s *mySim) change(*simTx, int) simPos { return simPos{} } // nothing is written before commit

func (s *mySim) commit(tx *simTx) simPos {
	if s.rng.IntN(4) == 0 {
		s.file++
		s.pos = 4
	}
	s.pos += 70 // GTID and BEGIN events
	for i := range tx.done {
		if i > 0 && s.rng.IntN(3) == 0 { // same multi-row event as the previous change
			tx.done[i].log = simPos{a: s.file, b: tx.done[i-1].log.b, c: tx.done[i-1].log.c + 1}
			continue
		}
		s.pos += 50 + uint64(s.rng.IntN(300))
		tx.done[i].log = simPos{a: s.file, b: s.pos}
	}
	s.pos += 31 // XID event
	return simPos{a: s.file, b: s.pos}
}

func TestMySQLSeqFollowsCommitOrder(t *testing.T) {
	for run := range simRuns {
		rng := rand.New(rand.NewPCG(uint64(run), 2))
		sim := &mySim{rng: rng, file: 3, pos: 4}
		var values []string
		for _, tx := range simulate(rng, sim, 12, 5) {
			gtid := `"3E11FA47-71CA-11E1-9E33-C80AA9429562:` + strconv.Itoa(tx.id) + `"`
			for _, c := range tx.done {
				src := `{"version":"2.7.0.Final","connector":"mysql","name":"my","ts_ms":1,"snapshot":"false","db":"inv","table":"t","server_id":1,"gtid":` + gtid +
					`,"file":"mysql-bin.` + fmt.Sprintf("%06d", c.log.a) + `","pos":` + strconv.FormatUint(c.log.b, 10) + `,"row":` + strconv.FormatUint(c.log.c, 10) + `,"thread":7,"query":null}`
				values = append(values, envelope(c, src, ""))
			}
		}
		checkRowOrder(t, rng, values, idKey, true)
	}
}

// SQL Server: every log record gets the next LSN (VLF:block:slot); a
// change's change_lsn is its record (__$seqval), commit_lsn the
// transaction's commit record (__$start_lsn). Debezium reads the change
// tables by (commit LSN, change LSN); event_serial_no is 2 for an update
// (its before and after rows) and 1 otherwise.
type ssSim struct {
	rng              *rand.Rand
	vlf, block, slot uint64
}

func (s *ssSim) next() simPos {
	s.slot += 1 + uint64(s.rng.IntN(3))
	if s.slot > 0xffff || s.rng.IntN(8) == 0 {
		s.slot, s.block = 1, s.block+8*uint64(1+s.rng.IntN(4))
		if s.block > 0xfffff000 || s.rng.IntN(16) == 0 {
			s.block, s.vlf = 0x10, s.vlf+1
		}
	}
	return simPos{a: s.vlf, b: s.block, c: s.slot}
}

func (s *ssSim) change(*simTx, int) simPos { return s.next() }
func (s *ssSim) commit(*simTx) simPos      { return s.next() }

func ssLSN(p simPos) string { return fmt.Sprintf("%08x:%08x:%04x", p.a, p.b, p.c) }

func TestSQLServerSeqFollowsCommitOrder(t *testing.T) {
	for run := range simRuns {
		rng := rand.New(rand.NewPCG(uint64(run), 3))
		sim := &ssSim{rng: rng, vlf: 0x27, block: 0x758, slot: 1}
		snap := sim.next()
		var values []string
		for row := 1; row <= 3; row++ {
			src := `{"version":"2.7.0.Final","connector":"sqlserver","name":"s","ts_ms":1,"snapshot":"true","db":"testDB","schema":"dbo","table":"t","change_lsn":null,"commit_lsn":"` + ssLSN(snap) + `","event_serial_no":null}`
			values = append(values, envelope(simChange{row: row, op: cdc.OpRead, value: row}, src, ""))
		}
		for _, tx := range simulate(rng, sim, 12, 5) {
			for _, c := range tx.done {
				serial := "1"
				if c.op == cdc.OpUpdate {
					serial = "2"
				}
				src := `{"version":"2.7.0.Final","connector":"sqlserver","name":"s","ts_ms":1,"snapshot":"false","db":"testDB","sequence":null,"schema":"dbo","table":"t","change_lsn":"` +
					ssLSN(c.log) + `","commit_lsn":"` + ssLSN(tx.commit) + `","event_serial_no":` + serial + `}`
				values = append(values, envelope(c, src, ""))
			}
		}
		checkRowOrder(t, rng, values, idKey, true)
	}
}

// Oracle (LogMiner): the SCN advances now and then, so several redo
// records share an SCN; each change has an SCN and a redo address (RS_ID
// = log sequence, block, offset; SSN); a commit gets a new SCN. Debezium
// buffers each transaction and emits it at commit, in commit order, with
// commit_scn, and (transaction metadata on) total_order. Log switches
// move RS_ID to the next log sequence.
type oraSim struct {
	rng                    *rand.Rand
	scn, logSeq, blk, offs uint64
}

func (s *oraSim) redo() (uint64, uint64) {
	if s.rng.IntN(3) == 0 {
		s.scn++
	}
	s.offs += 0x10 * uint64(1+s.rng.IntN(4))
	if s.offs > 0x1f0 {
		s.offs, s.blk = 0x10, s.blk+1
	}
	if s.rng.IntN(40) == 0 {
		s.logSeq, s.blk = s.logSeq+1, 2
	}
	return s.blk, s.offs
}

func (s *oraSim) change(*simTx, int) simPos {
	blk, off := s.redo()
	return simPos{a: s.scn, b: s.logSeq, c: blk<<16 | off}
}

func (s *oraSim) commit(*simTx) simPos {
	s.scn++
	s.redo()
	return simPos{a: s.scn}
}

func TestOracleSeqFollowsCommitOrder(t *testing.T) {
	for run := range simRuns {
		rng := rand.New(rand.NewPCG(uint64(run), 4))
		sim := &oraSim{rng: rng, scn: 2122185, logSeq: 13, blk: 2, offs: 0x10}
		var values, noRS []string
		snapSCN := strconv.FormatUint(sim.scn, 10)
		for row := 1; row <= 3; row++ {
			src := `{"version":"2.7.0.Final","connector":"oracle","name":"o","ts_ms":1,"snapshot":"true","db":"ORCL","schema":"S","table":"T","txId":null,"scn":"` + snapSCN + `","commit_scn":null}`
			c := simChange{row: row, op: cdc.OpRead, value: row}
			values = append(values, envelope(c, src, ""))
			noRS = append(noRS, envelope(c, src, ""))
		}
		sim.scn++
		for _, tx := range simulate(rng, sim, 12, 5) {
			for i, c := range tx.done {
				rs := fmt.Sprintf(" 0x%06x.%08x.%04x ", c.log.b, c.log.c>>16, c.log.c&0xffff)
				common := `{"version":"2.7.0.Final","connector":"oracle","name":"o","ts_ms":1,"snapshot":"false","db":"ORCL","schema":"S","table":"T","txId":"` +
					strconv.Itoa(tx.id) + `.0.1","scn":"` + strconv.FormatUint(c.log.a, 10) + `","commit_scn":"` + strconv.FormatUint(tx.commit.a, 10) + `",`
				values = append(values, envelope(c, common+`"rs_id":"`+rs+`","ssn":0,"redo_thread":1}`, ""))
				// log.mining.buffer.track.rs_id=false: no rs_id; the
				// transaction block's total_order keeps the order.
				txBlock := `,"transaction":{"id":"` + strconv.Itoa(tx.id) + `.0.1","total_order":` + strconv.Itoa(i+1) + `,"data_collection_order":` + strconv.Itoa(i+1) + `}`
				noRS = append(noRS, envelope(c, common+`"rs_id":null,"ssn":0,"redo_thread":1}`, txBlock))
			}
		}
		opts := DecoderOptions{KeyColumns: []string{"id"}}
		checkRowOrder(t, rng, values, opts, true)
		checkRowOrder(t, rng, noRS, opts, true)
	}
}
