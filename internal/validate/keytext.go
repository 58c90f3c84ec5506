package validate

import "github.com/lakemirror/lakemirror/internal/cdc"

// NameKeys sets KeyText ("order_id=1001", cdc.HexKeyText) on every
// finding of rs that names a key, for the table's key columns cols (in
// key order). A key that does not decode keeps KeyText "" and is shown
// by its hex. It changes rs in place.
func NameKeys(rs []Result, cols []string) {
	for i := range rs {
		for j := range rs[i].Findings {
			f := &rs[i].Findings[j]
			if f.Key != "" && f.KeyText == "" {
				f.KeyText, _ = cdc.HexKeyText(f.Key, cols)
			}
		}
	}
}

// NameDiffKeys sets KeyText on every diff of ds, as NameKeys does.
func NameDiffKeys(ds []Diff, cols []string) {
	for i := range ds {
		if ds[i].Key != "" && ds[i].KeyText == "" {
			ds[i].KeyText, _ = cdc.HexKeyText(ds[i].Key, cols)
		}
	}
}
