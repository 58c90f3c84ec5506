package validate

import "testing"

// A failed transitions check names its keys as col=value once NameKeys
// knows the key columns (issue 35: "key 1080000000000003e9" before).
func TestNameKeysInDetails(t *testing.T) {
	recs := []Record{
		{Key: "1080000000000003e9", Op: "c", Seq: "20", Offset: 4}, {Key: "1080000000000003e9", Op: "c", Seq: "21", Offset: 5},
		{Key: "zz", Op: "d", Seq: "30", Offset: 6}, {Key: "zz", Op: "u", Seq: "31", Offset: 7},
	}
	rs := []Result{Transitions(recs, nil)}
	before := "key 1080000000000003e9: create after a create without a delete between (c at 20, partition 0 offset 4; then c at 21, partition 0 offset 5)\n" +
		"key zz: update after a delete without a create between (d at 30, partition 0 offset 6; then u at 31, partition 0 offset 7)"
	if got := rs[0].Details(); got != before {
		t.Fatalf("before NameKeys:\n%s\nwant\n%s", got, before)
	}
	NameKeys(rs, []string{"order_id"})
	want := "key order_id=1001: create after a create without a delete between (c at 20, partition 0 offset 4; then c at 21, partition 0 offset 5)\n" +
		"key zz: update after a delete without a create between (d at 30, partition 0 offset 6; then u at 31, partition 0 offset 7)"
	if got := rs[0].Details(); got != want {
		t.Fatalf("after NameKeys:\n%s\nwant\n%s", got, want)
	}
	if rs[0].Findings[0].Key != "1080000000000003e9" || rs[0].Findings[0].KeyText != "order_id=1001" || rs[0].Findings[1].KeyText != "" {
		t.Fatalf("findings %+v", rs[0].Findings)
	}
	ds := []Diff{{Key: "1080000000000003e9", Kind: KindGhost, ReadAt: "09", MirrorSeq: "04"}}
	NameDiffKeys(ds, []string{"order_id"})
	got := Reconcile(ReconcileScope{}, ds)
	if ds[0].KeyText != "order_id=1001" || got[0].Details() != "key order_id=1001: live in the mirror (_seq 04), absent from the source (read at 09)" {
		t.Fatalf("diff %+v, details %q", ds[0], got[0].Details())
	}
}
