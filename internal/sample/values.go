package sample

import "math/rand/v2"

// orderRow is one row of the source table.
type orderRow struct {
	id        int64
	customer  string
	status    string
	cents     int64   // amount × 100
	note      *string // nil = NULL
	updatedAt int64   // µs since the epoch
}

// Customer names (some non-ASCII, to exercise UTF-8).
var customers = []string{
	"Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov",
	"Ken Thompson", "Margaret Hamilton", "Donald Knuth", "Frances Allen", "John McCarthy",
	"Radia Perlman", "Leslie Lamport", "Jim Gray", "Michael Stonebraker", "Zoë Ørsted",
	"José Núñez", "Søren Bækgaard", "Hedy Lamarr", "Niklaus Wirth", "Tony Hoare",
}

// Notes (quotes, a backslash and non-ASCII, to exercise JSON escaping).
var notes = []string{
	"leave at the door", "gift wrap", "call before delivery", `fragile: "glass"`,
	`deliver to back\office`, "after 6 pm", "café order ☕", "second attempt", "address changed",
}

// The order life cycle: the statuses an update may move to.
var nextStatus = map[string][]string{
	"placed":    {"paid", "paid", "paid", "cancelled"},
	"paid":      {"shipped", "shipped", "shipped", "cancelled"},
	"shipped":   {"delivered"},
	"delivered": {"delivered"},
	"cancelled": {"cancelled"},
}

func pickNote(rng *rand.Rand) *string {
	if rng.IntN(2) == 0 {
		return nil
	}
	n := notes[rng.IntN(len(notes))]
	return &n
}

func pickCents(rng *rand.Rand) int64 { return 100 + rng.Int64N(249_901) } // 1.00 … 2500.00

func newOrder(rng *rand.Rand, id, at int64) orderRow {
	return orderRow{
		id:        id,
		customer:  customers[rng.IntN(len(customers))],
		status:    "placed",
		cents:     pickCents(rng),
		note:      pickNote(rng),
		updatedAt: at,
	}
}

// updated returns old after one application update at time at: the status
// moves along the life cycle, sometimes the amount (only before payment)
// or the note changes too; updated_at is always set.
func updated(rng *rand.Rand, old orderRow, at int64) orderRow {
	n := old
	next := nextStatus[old.status]
	n.status = next[rng.IntN(len(next))]
	if old.status == "placed" && rng.IntN(5) == 0 {
		n.cents = pickCents(rng)
	}
	if n.status == old.status || rng.IntN(4) == 0 {
		n.note = pickNote(rng)
	}
	n.updatedAt = at
	return n
}

// preCaptureOrder is the row a never-seen key had in the source (only
// visible in a full-replica-identity delete's before image).
func preCaptureOrder(rng *rand.Rand, id, captureStart int64) orderRow {
	r := newOrder(rng, id, captureStart-rng.Int64N(30*24*3600*1_000_000)-1_000_000)
	r.status = "delivered"
	return r
}
