package tablestate

import (
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// PropKeyChangeHeirs: the listed creates without those done, sorted by
// position, read back as they were; at most maxStoredHeirs, the oldest
// positions kept; malformed values are errors.
func TestKeyChangeHeirsProperty(t *testing.T) {
	heirs := map[cdc.Key][]Heir{
		"\x01": {{Key: "\x02", At: cdc.PostgresSeq(200, 200)}, {Key: "\x05", At: cdc.PostgresSeq(100, 100)}},
		"\x03": {{Key: "\x04", At: cdc.PostgresSeq(300, 300)}},
	}
	done := []heirDone{{old: "\x03", h: Heir{Key: "\x04", At: cdc.PostgresSeq(300, 300)}}}
	got := HeirsJSON(heirs, done)
	want := `[["01","05","` + cdc.PostgresSeq(100, 100).Hex() + `"],["01","02","` + cdc.PostgresSeq(200, 200).Hex() + `"]]`
	if got != want {
		t.Fatalf("heirsJSON\n got %s\nwant %s", got, want)
	}
	back, err := parseHeirs(got)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back) != fmt.Sprint([]heirDone{{old: "\x01", h: heirs["\x01"][1]}, {old: "\x01", h: heirs["\x01"][0]}}) {
		t.Errorf("parseHeirs: %v", back)
	}
	if got := HeirsJSON(heirs, append(done, heirDone{old: "\x01", h: heirs["\x01"][0]}, heirDone{old: "\x01", h: heirs["\x01"][1]})); got != "[]" {
		t.Errorf("all done: %s", got)
	}
	many := map[cdc.Key][]Heir{}
	for i := range maxStoredHeirs + 5 {
		many[cdc.Key(fmt.Sprintf("o%05d", i))] = []Heir{{Key: cdc.Key(fmt.Sprintf("n%05d", i)), At: cdc.PostgresSeq(uint64(1000+i), uint64(1000+i))}}
	}
	stored, err := parseHeirs(HeirsJSON(many, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != maxStoredHeirs || stored[0].old != "o00000" || stored[len(stored)-1].old != cdc.Key(fmt.Sprintf("o%05d", maxStoredHeirs-1)) {
		t.Errorf("bounded: %d entries, first %q, last %q", len(stored), stored[0].old, stored[len(stored)-1].old)
	}
	for _, bad := range []string{`{`, `[["zz","01","00"]]`, `[["01","01","xyz"]]`} {
		if _, err := parseHeirs(bad); err == nil {
			t.Errorf("parseHeirs(%s): no error", bad)
		}
	}
}
