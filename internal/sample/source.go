package sample

import (
	"math/rand/v2"
)

// change is one row change as the source database committed it.
type change struct {
	op         byte
	id         int64
	before     orderRow // valid when hasBefore
	after      orderRow // valid when hasAfter
	hasBefore  bool     // false = JSON null
	hasAfter   bool     // false = JSON null
	keyOnly    bool     // before holds only order_id (default replica identity delete)
	prevCommit uint64   // source.sequence[0]: the previous transaction's commit LSN; 0 = null
	lsn        uint64   // source.lsn
	txID       int64
	commitUs   int64 // source commit time, µs since the epoch
	procNs     int64 // connector processing time, ns since the epoch
}

// source simulates the table and its WAL.
type source struct {
	rng  *rand.Rand
	o    Options
	rows map[int64]orderRow
	live []int64       // live keys
	pos  map[int64]int // key → index in live

	nextID   int64
	unseen   map[int64]bool
	unseenHi int64 // never-seen keys are drawn from [1, unseenHi]

	lsn, prevCommit uint64
	txID            int64
	commitUs        int64
	procNs          int64
}

// simulate returns the clean changes in commit order.
func simulate(rng *rand.Rand, o Options) []change {
	s := &source{
		rng:      rng,
		o:        o,
		rows:     make(map[int64]orderRow),
		pos:      make(map[int64]int),
		unseen:   make(map[int64]bool),
		unseenHi: max(1000, 2*int64(o.UnseenDeletes)),
		lsn:      o.StartLSN,
		txID:     1200 + rng.Int64N(100),
		commitUs: o.StartTime.UnixMicro(),
	}
	s.nextID = s.unseenHi + 1
	ins, upd, del, uns := o.Inserts, o.Updates, o.Deletes, o.UnseenDeletes
	out := make([]change, 0, ins+upd+del+uns)
	first := true
	for ins+upd+del+uns > 0 {
		// One transaction: 1..TxMaxChanges changes, one commit.
		if !first {
			s.commitUs += 1000*(1+rng.Int64N(8)) + rng.Int64N(1000)
			s.txID += 1 + rng.Int64N(3)
		}
		first = false
		txStart := s.commitUs - 50 - rng.Int64N(900) // now() inside the transaction
		size := 1 + rng.IntN(o.TxMaxChanges)
		begin := len(out)
		for range size {
			w := [4]int{} // feasible weights: insert, update, delete, unseen delete
			if ins > 0 {
				w[0] = ins
			}
			if upd > 0 && len(s.live) > 0 {
				w[1] = upd
			}
			if del > 0 && len(s.live) > 0 && (upd == 0 || len(s.live)-1+ins >= 1) {
				w[2] = del
			}
			w[3] = uns
			total := w[0] + w[1] + w[2] + w[3]
			if total == 0 {
				break
			}
			k, x := 0, rng.IntN(total)
			for x >= w[k] {
				x -= w[k]
				k++
			}
			s.lsn += 8 * (4 + rng.Uint64N(60))
			c := change{lsn: s.lsn, prevCommit: s.prevCommit, txID: s.txID, commitUs: s.commitUs}
			switch k {
			case 0:
				ins--
				s.insert(&c, txStart)
			case 1:
				upd--
				s.update(&c, txStart)
			case 2:
				del--
				s.delete(&c)
			case 3:
				uns--
				s.deleteUnseen(&c)
			}
			out = append(out, c)
		}
		if len(out) == begin {
			break // nothing feasible is left (cannot happen with normalized Options)
		}
		s.lsn += 8 * (2 + rng.Uint64N(8)) // the COMMIT record
		s.prevCommit = s.lsn
		for i := begin; i < len(out); i++ {
			lag := int64(3_000_000) + rng.Int64N(40_000_000) // 3–43 ms behind the commit
			s.procNs = max(s.procNs+10_000+rng.Int64N(200_000), out[i].commitUs*1000+lag)
			out[i].procNs = s.procNs
		}
	}
	return out
}

func (s *source) insert(c *change, at int64) {
	r := newOrder(s.rng, s.nextID, at)
	s.nextID++
	s.rows[r.id] = r
	s.pos[r.id] = len(s.live)
	s.live = append(s.live, r.id)
	c.op, c.id, c.after, c.hasAfter = 'c', r.id, r, true
}

func (s *source) update(c *change, at int64) {
	id := s.live[s.rng.IntN(len(s.live))]
	old := s.rows[id]
	n := updated(s.rng, old, at)
	s.rows[id] = n
	c.op, c.id, c.after, c.hasAfter = 'u', id, n, true
	if s.o.ReplicaIdentityFull {
		c.before, c.hasBefore = old, true
	}
}

func (s *source) delete(c *change) {
	i := s.rng.IntN(len(s.live))
	id := s.live[i]
	last := s.live[len(s.live)-1]
	s.live[i], s.pos[last] = last, i
	s.live = s.live[:len(s.live)-1]
	delete(s.pos, id)
	old := s.rows[id]
	delete(s.rows, id)
	c.op, c.id, c.before, c.hasBefore = 'd', id, old, true
	c.keyOnly = !s.o.ReplicaIdentityFull
}

func (s *source) deleteUnseen(c *change) {
	var id int64
	for {
		id = 1 + s.rng.Int64N(s.unseenHi)
		if !s.unseen[id] {
			break
		}
	}
	s.unseen[id] = true
	old := preCaptureOrder(s.rng, id, s.o.StartTime.UnixMicro())
	c.op, c.id, c.before, c.hasBefore = 'd', id, old, true
	c.keyOnly = !s.o.ReplicaIdentityFull
}
