package sample

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Expected returns the mirror table a correct pipeline must end with after
// consuming the stream (Clean or Delivered: they hold the same changes):
// one Row per order_id ever seen, ascending. A create or update sets the
// row to its after image. A delete soft-deletes it (Deleted = true) and
// keeps the last known values: the delete's before image when it has
// values beyond the key (full replica identity), else the row's values
// before the delete; a delete of a never-seen key without values keeps
// only OrderID. Seq and SourceTsMicros are those of the row's last change.
//
// It is the test oracle: a plain in-order replay of Clean that reads only
// the JSON of each value (not the generator's internal state). It panics
// if a value is not a well-formed event of this package, which would be a
// generator bug.
func (s Stream) Expected() []Row {
	rows := make(map[int64]Row)
	for i, m := range s.Clean {
		if m.Value == nil {
			continue
		}
		ev, err := parseEvent(m.Value)
		if err != nil {
			panic(fmt.Sprintf("sample: Clean[%d]: %v", i, err))
		}
		switch ev.op {
		case "c", "u", "r":
			r := ev.after
			r.Seq, r.SourceTsMicros = ev.seq, ev.sourceTs
			rows[r.OrderID] = r
		case "d":
			r := ev.before
			if !ev.beforeHasValues {
				if old, ok := rows[r.OrderID]; ok {
					r = old
				}
			}
			r.Deleted, r.Seq, r.SourceTsMicros = true, ev.seq, ev.sourceTs
			rows[r.OrderID] = r
		default:
			panic(fmt.Sprintf("sample: Clean[%d]: unexpected op %q", i, ev.op))
		}
	}
	out := make([]Row, 0, len(rows))
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		out = append(out, rows[id])
	}
	return out
}

// event is the part of a change event the oracle needs.
type event struct {
	op              string
	before, after   Row
	beforeHasValues bool
	seq             cdc.Seq
	sourceTs        int64
}

type imageJSON struct {
	OrderID   int64   `json:"order_id"`
	Customer  *string `json:"customer"`
	Status    *string `json:"status"`
	Amount    *string `json:"amount"`
	Note      *string `json:"note"`
	UpdatedAt *string `json:"updated_at"`
}

type payloadJSON struct {
	Before *imageJSON `json:"before"`
	After  *imageJSON `json:"after"`
	Source struct {
		TsUs     int64  `json:"ts_us"`
		Sequence string `json:"sequence"`
		LSN      uint64 `json:"lsn"`
	} `json:"source"`
	Op string `json:"op"`
}

func parseEvent(value []byte) (event, error) {
	var env struct {
		Schema  json.RawMessage `json:"schema"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(value, &env); err != nil {
		return event{}, err
	}
	if env.Schema != nil {
		value = env.Payload
	}
	var p payloadJSON
	if err := json.Unmarshal(value, &p); err != nil {
		return event{}, err
	}
	var seqPair [2]*string
	if err := json.Unmarshal([]byte(p.Source.Sequence), &seqPair); err != nil {
		return event{}, fmt.Errorf("source.sequence %q: %w", p.Source.Sequence, err)
	}
	var commit uint64
	if seqPair[0] != nil {
		c, err := strconv.ParseUint(*seqPair[0], 10, 64)
		if err != nil {
			return event{}, fmt.Errorf("source.sequence %q: %w", p.Source.Sequence, err)
		}
		commit = c
	}
	if seqPair[1] == nil || *seqPair[1] != strconv.FormatUint(p.Source.LSN, 10) {
		return event{}, fmt.Errorf("source.sequence %q does not end with lsn %d", p.Source.Sequence, p.Source.LSN)
	}
	ev := event{op: p.Op, seq: streamSeq(commit, p.Source.LSN), sourceTs: p.Source.TsUs}
	var err error
	if p.After != nil {
		if ev.after, _, err = p.After.row(); err != nil {
			return event{}, fmt.Errorf("after: %w", err)
		}
	}
	if p.Before != nil {
		if ev.before, ev.beforeHasValues, err = p.Before.row(); err != nil {
			return event{}, fmt.Errorf("before: %w", err)
		}
	}
	return ev, nil
}

// row converts an image; hasValues reports a non-null field beyond the key.
func (im *imageJSON) row() (r Row, hasValues bool, err error) {
	r.OrderID = im.OrderID
	if im.Customer != nil {
		r.Customer, hasValues = *im.Customer, true
	}
	if im.Status != nil {
		r.Status, hasValues = *im.Status, true
	}
	if im.Note != nil {
		r.Note, hasValues = im.Note, true
	}
	if im.Amount != nil {
		hasValues = true
		raw, err := base64.StdEncoding.DecodeString(*im.Amount)
		if err != nil {
			return r, false, fmt.Errorf("amount %q: %w", *im.Amount, err)
		}
		r.Amount = decimalText(raw, 2)
	}
	if im.UpdatedAt != nil {
		hasValues = true
		t, err := time.Parse(time.RFC3339Nano, *im.UpdatedAt)
		if err != nil {
			return r, false, fmt.Errorf("updated_at: %w", err)
		}
		r.UpdatedAtMicros = t.UnixMicro()
	}
	return r, hasValues, nil
}

// decimalText renders big-endian two's-complement unscaled bytes with
// scale digits after the point, e.g. (0x09F6, 2) → "25.50".
func decimalText(raw []byte, scale int) string {
	u := new(big.Int).SetBytes(raw)
	if len(raw) > 0 && raw[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
	}
	if !u.IsInt64() {
		panic("sample: decimal does not fit int64")
	}
	return cdc.Decimal(u.Int64(), int16(scale)).DecimalText()
}
