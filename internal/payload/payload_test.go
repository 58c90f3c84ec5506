package payload

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

func TestTableSpecDefaults(t *testing.T) {
	got := TableSpec{Table: "shop.orders"}.Defaults()
	want := TableSpec{Table: "shop.orders", StartFrom: "earliest", MaxEvents: 5000, MaxWait: 2 * time.Second, MaxQuarantine: 100}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Defaults() = %+v, want %+v", got, want)
	}
	set := TableSpec{StartFrom: "latest", MaxEvents: 7, MaxWait: time.Minute, MaxQuarantine: 3}
	if got := set.Defaults(); !reflect.DeepEqual(got, set) {
		t.Errorf("Defaults() of a spec with every default set = %+v, want it unchanged", got)
	}
}

func TestTableSpecTables(t *testing.T) {
	for _, c := range []struct {
		spec TableSpec
		want []string
	}{
		{TableSpec{}, []string{"bronze", "mirror", "history"}},
		{TableSpec{WithoutBronze: true}, []string{"mirror", "history"}},
		{TableSpec{WithoutHistory: true}, []string{"bronze", "mirror"}},
		{TableSpec{WithoutBronze: true, WithoutHistory: true}, []string{"mirror"}},
	} {
		if got := c.spec.Tables(); !slices.Equal(got, c.want) {
			t.Errorf("%+v.Tables() = %v, want %v", c.spec, got, c.want)
		}
	}
}

func TestSortedPartitions(t *testing.T) {
	if got, want := (Offsets{7: 1, 0: 9, 3: 4}).SortedPartitions(), []int32{0, 3, 7}; !slices.Equal(got, want) {
		t.Errorf("SortedPartitions() = %v, want %v", got, want)
	}
	if got := (Offsets{}).SortedPartitions(); len(got) != 0 {
		t.Errorf("SortedPartitions() of no offsets = %v, want none", got)
	}
}

func TestLoadCursorKeyRoundTrip(t *testing.T) {
	vals := []cdc.Value{{Kind: cdc.KindInt, I: 42}, {Kind: cdc.KindString, S: "a\x00b"}, {Kind: cdc.KindDecimal, Scale: 2, I: 1234}}
	parts := KeyParts(vals)
	want := []KeyPart{{Kind: cdc.KindInt, I: 42, S: []byte{}}, {Kind: cdc.KindString, S: []byte("a\x00b")}, {Kind: cdc.KindDecimal, Scale: 2, I: 1234, S: []byte{}}}
	if !reflect.DeepEqual(parts, want) {
		t.Fatalf("KeyParts = %+v, want %+v", parts, want)
	}
	if got := (&LoadCursor{After: parts}).Values(); !reflect.DeepEqual(got, vals) {
		t.Errorf("Values() = %+v, want %+v", got, vals)
	}
	if got := (*LoadCursor)(nil).Values(); got != nil {
		t.Errorf("Values() of a nil cursor = %v, want nil", got)
	}
	if got := (&LoadCursor{}).Values(); got != nil {
		t.Errorf("Values() of a cursor without a key = %v, want nil", got)
	}
}

func TestWovenKeys(t *testing.T) {
	for _, c := range []struct {
		mirror, history, want int
	}{{0, 0, 0}, {3, 0, 3}, {0, 5, 5}, {3, 5, 5}} {
		r := ApplyResult{Mirror: MirrorResult{Woven: c.mirror}, History: HistoryResult{Woven: c.history}}
		if got := r.WovenKeys(); got != c.want {
			t.Errorf("WovenKeys() with mirror %d, history %d woven = %d, want %d", c.mirror, c.history, got, c.want)
		}
	}
}
