package schemas

import "testing"

// Floats: zeros in any spelling are 0; a nonzero number too small for the
// type is an error instead of 0 (a breaker's finding, 2026-12-04), and so
// is one too large.
func TestParseFloatTextLimits(t *testing.T) {
	for _, c := range []struct {
		text string
		bits int
		want float64
		err  string
	}{
		{"-0.0", 64, 0, ""}, {"0e-999", 64, 0, ""}, {"0.000E5", 64, 0, ""}, {"5e-324", 64, 5e-324, ""},
		{"1e-400", 64, 0, "underflows float64 (it would become 0)"},
		{"1e-50", 32, 0, "underflows float32 (it would become 0)"},
		{"1.5e-45", 32, float64(float32(1.5e-45)), ""},
		{"1e999", 64, 0, "out of float64 range"},
	} {
		got, err := parseFloatText([]byte(c.text), c.bits)
		if (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) || got != c.want {
			t.Errorf("%s as float%d: %v, %v; want %v, %q", c.text, c.bits, got, err, c.want, c.err)
		}
	}
}
