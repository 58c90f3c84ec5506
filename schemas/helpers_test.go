package schemas

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// fixtureDir is testdata/debezium at the repository root (copies of the
// team's shared captures, see its PROVENANCE.md), relative to this package.
func fixtureDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "testdata", "debezium")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the captures under testdata/debezium are missing: %v", err)
	}
	return dir
}

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureRecord is one line of a line-oriented fixture: the value, and the
// key when the line has the RisingWave "KEY^VALUE" form.
type fixtureRecord struct {
	key, value []byte
}

// fixtureLines splits a line-per-record fixture; a line with '^' is split
// on the first '^' into key and value.
func fixtureLines(t testing.TB, rel string) []fixtureRecord {
	t.Helper()
	var out []fixtureRecord
	for _, line := range bytes.Split(readFixture(t, rel), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r := fixtureRecord{value: line}
		if i := bytes.IndexByte(line, '^'); i >= 0 {
			r.key, r.value = line[:i], line[i+1:]
		}
		out = append(out, r)
	}
	return out
}

// decodeAll decodes every record of a fixture with one decoder and fails
// on any error.
func decodeAll(t testing.TB, rel string, opts DecoderOptions) []*cdc.Event {
	t.Helper()
	d := NewDecoder(opts)
	var evs []*cdc.Event
	for i, r := range fixtureLines(t, rel) {
		got, err := d.Decode(Record{Topic: rel, Offset: int64(i), Key: r.key, Value: r.value})
		if err != nil {
			t.Fatalf("%s line %d: %v", rel, i+1, err)
		}
		if got.Kind != KindChange || got.Event == nil {
			t.Fatalf("%s line %d: kind %v, event %v", rel, i+1, got.Kind, got.Event)
		}
		if got.Event.Origin != (cdc.Origin{Topic: rel, Offset: int64(i)}) {
			t.Fatalf("%s line %d: origin %+v", rel, i+1, got.Event.Origin)
		}
		if got.RawOp != got.Event.Op.String() {
			t.Fatalf("%s line %d: RawOp %q, op %v", rel, i+1, got.RawOp, got.Event.Op)
		}
		evs = append(evs, got.Event)
	}
	return evs
}

func mustKey(t testing.TB, vals ...cdc.Value) cdc.Key {
	t.Helper()
	b, err := cdc.EncodeKey(nil, vals...)
	if err != nil {
		t.Fatal(err)
	}
	return cdc.Key(b)
}

func get(t testing.TB, r *cdc.Row, col string) cdc.Value {
	t.Helper()
	if r == nil {
		t.Fatalf("no image to read %q from", col)
	}
	v, ok := r.Get(col)
	if !ok {
		t.Fatalf("image has no column %q (has %v)", col, r.Cols.Names)
	}
	return v
}

func wantValue(t testing.TB, what string, got, want cdc.Value) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

// asDecodeError asserts err is a *DecodeError and returns it.
func asDecodeError(t testing.TB, err error) *DecodeError {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
	}
	return de
}
