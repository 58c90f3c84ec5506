package validate

import "testing"

// TestReapply: every way two rows of a key can differ is one finding, as
// is a key held twice, skipped keys are left out, and equal sides pass
// with equal checksums.
func TestReapply(t *testing.T) {
	scope := ReapplyScope{Base: 1, Target: 2, FromBatch: 4, ToBatch: 8, Batches: 5, Records: 143, Skipped: 1, Table: "shop.orders", ScratchTable: "shop.orders_reapply_x"}
	mirror := map[string]Image{
		"01": {Seq: "a1", Digest: "d1"},
		"02": {Seq: "a2", Digest: "d2"},
		"03": {Seq: "a3", Digest: "d3"},
		"04": {Seq: "a4", Deleted: true, Digest: "d4"},
		"05": {Seq: "a5", Digest: "d5"},
		"07": {Seq: "a7", Digest: "d7"},
	}
	scratch := map[string]Image{
		"01": {Seq: "a1", Digest: "d1"},
		"02": {Seq: "a0", Digest: "d2"},
		"03": {Seq: "a3", Digest: "dx"},
		"04": {Seq: "a4", Digest: "d4"},
		"06": {Seq: "a6", Deleted: true, Digest: "d6"},
		"08": {Seq: "a8", Digest: "d8"},
	}
	r := Reapply(scope, mirror, scratch, map[string]string{"09": "mirror"}, map[string]bool{"08": true})
	want := "key 02: _seq a2 in the mirror, a0 re-applied\n" +
		"key 03: values differ (digest d3 in the mirror, dx re-applied)\n" +
		"key 04: soft-deleted true in the mirror, false re-applied\n" +
		"key 05: the mirror holds a row (_seq a5) the re-apply does not produce\n" +
		"key 06: the re-apply produces a row (_seq a6, soft-deleted) the mirror does not hold\n" +
		"key 07: the mirror holds a row (_seq a7) the re-apply does not produce\n" +
		"key 09: more than one row of the key: mirror"
	if r.Verdict != Fail || r.Total != 7 || r.Details() != want {
		t.Fatalf("%s %d:\n%s\nwant\n%s", r.Verdict, r.Total, r.Details(), want)
	}
	if r.Scope != "batches 4 to 8 (5, 143 bronze records) re-applied to shop.orders_reapply_x, a copy of shop.orders at Iceberg snapshot 1; compared with snapshot 2; 1 purged keys left out" {
		t.Fatalf("scope %q", r.Scope)
	}
	same := Reapply(scope, mirror, mirror, nil, nil)
	if same.Verdict != Pass || same.Total != 0 || same.Expected != "mirror: 6 rows, checksum 0d92db28461832956ad6a74922422a84" || same.Observed != "re-applied: 6 rows, checksum 0d92db28461832956ad6a74922422a84" {
		t.Fatalf("equal sides: %+v", same)
	}
}
