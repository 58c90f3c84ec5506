package keyindex

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Budget bounds the memory one worker's key indexes hold (docs/design.md,
// "Local state"): each table's index stays in RAM while it holds at most
// Table bytes and the worker's indexes together at most Worker bytes;
// past that it spills to local disk (an embedded LSM, pebble) at its next
// safe point (Release), keeping in RAM only the entries of the batch at
// hand. Spilled indexes share one block cache of CacheBytes. Safe for
// concurrent use.
type Budget struct {
	worker, table int64
	cacheBytes    int64
	cache         *pebble.Cache

	inRAM  atomic.Int64 // bytes the indexes hold in RAM, as of their last safe point (memtables included)
	onDisk atomic.Int64 // bytes the spilled indexes hold on disk
	tables atomic.Int64 // indexes under the budget
}

// NewBudget returns a budget of worker bytes for all of a worker's key
// indexes together and table bytes for one table's (table is capped at
// worker; a table budget of 0 spills every index at its first safe
// point, for tests). An eighth of worker (at least 8 MiB, at most 1 GiB)
// is the spilled indexes' block cache. Call Close when no index uses it.
func NewBudget(worker, table int64) *Budget {
	worker = max(worker, 0)
	table = min(max(table, 0), worker)
	c := min(max(worker/8, 8<<20), 1<<30)
	return &Budget{worker: worker, table: table, cacheBytes: c, cache: pebble.NewCache(c)}
}

// Worker is the bytes all of the worker's indexes may hold in RAM.
func (b *Budget) Worker() int64 { return b.worker }

// Table is the bytes one table's index may hold in RAM before it spills.
func (b *Budget) Table() int64 { return b.table }

// CacheBytes is the size of the spilled indexes' shared block cache.
func (b *Budget) CacheBytes() int64 { return b.cacheBytes }

// InRAM is the bytes the worker's indexes hold in RAM (as of each one's
// last batch), the block cache not included.
func (b *Budget) InRAM() int64 { return b.inRAM.Load() }

// OnDisk is the bytes the worker's spilled indexes hold on local disk.
func (b *Budget) OnDisk() int64 { return b.onDisk.Load() }

// Close releases the block cache (indexes still open keep their
// reference).
func (b *Budget) Close() {
	if b != nil && b.cache != nil {
		b.cache.Unref()
		b.cache = nil
	}
}

// cacheAllowance is how many bytes a spilled index keeps in RAM between
// batches (its entries loaded or changed lately) before Release empties
// them.
func (b *Budget) cacheAllowance() int64 { return b.table / 4 }

// memTableSize is a spilled index's pebble memtable: a sixteenth of the
// table budget, within 4 to 64 MiB.
func (b *Budget) memTableSize() uint64 { return uint64(min(max(b.table/16, 4<<20), 64<<20)) }

// minSpill is the smallest index that spills because the worker as a
// whole is over budget (a table's own budget spills any size).
const minSpill = 1 << 20

// Usage is one table's key index memory, as of its last batch.
type Usage struct {
	RAMBytes  int64 // held in RAM: the hash table and entries, and a spilled index's memtables
	DiskBytes int64 // held on local disk by a spilled index (0 while in RAM)
	Keys      int64 // keys held
	Spilled   bool  // the index lives on disk, with the batch's entries in RAM
}

// Meter publishes an index's Usage for readers on other goroutines
// (status, metrics); the zero Meter reads as an empty index. Safe for
// concurrent use.
type Meter struct {
	ram, disk, keys atomic.Int64
	spilled         atomic.Bool
}

// Usage reads the meter.
func (m *Meter) Usage() Usage {
	return Usage{RAMBytes: m.ram.Load(), DiskBytes: m.disk.Load(), Keys: m.keys.Load(), Spilled: m.spilled.Load()}
}

func (m *Meter) set(u Usage) {
	m.ram.Store(u.RAMBytes)
	m.disk.Store(u.DiskBytes)
	m.keys.Store(u.Keys)
	m.spilled.Store(u.Spilled)
}
