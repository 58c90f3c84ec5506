package source

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"testing"
	"time"
)

// Unit tests of the pure helpers (no server).

func TestTwosComplement(t *testing.T) {
	for _, tc := range []struct {
		x    string
		want []byte
	}{
		{"0", []byte{0x00}}, {"1", []byte{0x01}}, {"127", []byte{0x7f}}, {"128", []byte{0x00, 0x80}},
		{"255", []byte{0x00, 0xff}}, {"256", []byte{0x01, 0x00}}, {"-1", []byte{0xff}}, {"-128", []byte{0x80}},
		{"-129", []byte{0xff, 0x7f}}, {"-256", []byte{0xff, 0x00}}, {"-32768", []byte{0x80, 0x00}}, {"-32769", []byte{0xff, 0x7f, 0xff}},
		{"2550", []byte{0x09, 0xf6}},
	} {
		x, _ := new(big.Int).SetString(tc.x, 10)
		if got := twosComplement(x); string(got) != string(tc.want) {
			t.Errorf("%s: % x, want % x", tc.x, got, tc.want)
		}
	}
	// Round trip of large values against big.Int's own arithmetic.
	for _, s := range []string{"99999999999999999999999999999999999999", "-99999999999999999999999999999999999999", "-9223372036854775808", "9223372036854775808"} {
		x, _ := new(big.Int).SetString(s, 10)
		b := twosComplement(x)
		back := new(big.Int).SetBytes(b)
		if b[0]&0x80 != 0 {
			back.Sub(back, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		if back.Cmp(x) != 0 || (len(b) > 1 && (b[0] == 0 && b[1]&0x80 == 0 || b[0] == 0xff && b[1]&0x80 != 0)) {
			t.Errorf("%s: % x is not its minimal two's complement", s, b)
		}
	}
}

func TestNumericScales(t *testing.T) {
	for _, tc := range []struct {
		i         int64
		exp       int32
		unscaled  string
		scale     int
		at2       string
		at2Exists bool
	}{
		{150, -2, "15", 1, "150", true},   // 1.50 → 1.5
		{100, 0, "100", 0, "10000", true}, // 100 stays 100 (scale 0, not 1E+2)
		{0, -3, "0", 0, "0", true},        // 0.000 → 0
		{1, 2, "100", 0, "10000", true},   // 1E+2
		{-1230, -7, "-123", 6, "", false}, // -0.0001230 → -0.000123, too fine for scale 2
		{5, -1, "5", 1, "50", true},       // 0.5
	} {
		u, s := minimalScale(big.NewInt(tc.i), tc.exp)
		if u.String() != tc.unscaled || s != tc.scale {
			t.Errorf("minimalScale(%d, %d) = %s, %d; want %s, %d", tc.i, tc.exp, u, s, tc.unscaled, tc.scale)
		}
		r, err := rescale(big.NewInt(tc.i), tc.exp, 2)
		if (err == nil) != tc.at2Exists || (err == nil && r.String() != tc.at2) {
			t.Errorf("rescale(%d, %d, 2) = %v, %v; want %s", tc.i, tc.exp, r, err, tc.at2)
		}
	}
	for text, want := range map[string][2]string{"-12.340": {"-12340", "3"}, "7": {"7", "0"}, "0.05": {"5", "2"}, "-0": {"0", "0"}} {
		u, s, err := parseDecimalText(text)
		if err != nil || u.String() != want[0] || itoa(s) != want[1] {
			t.Errorf("parseDecimalText(%q) = %v, %d, %v", text, u, s, err)
		}
	}
	for _, bad := range []string{"", "-", ".5", "5.", "1e5", "1.2.3", "NaN", "+1"} {
		if _, _, err := parseDecimalText(bad); err == nil {
			t.Errorf("parseDecimalText(%q) accepted", bad)
		}
	}
	for _, tc := range []struct {
		typmod     int32
		prec, scal int
	}{{(10<<16 | 2) + 4, 10, 2}, {(38<<16 | 10) + 4, 38, 10}, {(5 << 16) + 4, 5, 0}, {(5<<16 | (0x7ff & -2)) + 4, 5, -2}, {(3<<16 | 5) + 4, 3, 5}} {
		if p, s := numericTypmod(tc.typmod); p != tc.prec || s != tc.scal {
			t.Errorf("numericTypmod(%d) = %d,%d want %d,%d", tc.typmod, p, s, tc.prec, tc.scal)
		}
	}
}

func TestLSNText(t *testing.T) {
	for text, n := range map[string]uint64{"0/0": 0, "16/B374D848": 0x16_B374D848, "FFFFFFFF/FFFFFFFF": ^uint64(0), "0/1": 1} {
		got, err := ParseLSN(text)
		if err != nil || got != n {
			t.Errorf("ParseLSN(%q) = %x, %v", text, got, err)
		}
		if FormatLSN(n) != text {
			t.Errorf("FormatLSN(%x) = %q, want %q", n, FormatLSN(n), text)
		}
	}
	for _, bad := range []string{"", "16", "16/", "/1", "G/1", "1/100000000", "-1/2"} {
		if _, err := ParseLSN(bad); err == nil {
			t.Errorf("ParseLSN(%q) accepted", bad)
		}
	}
}

func TestZonedTimestampText(t *testing.T) {
	for _, tc := range []struct {
		us   int64
		prec int
		want string
	}{
		{0, 6, `"1970-01-01T00:00:00.000000Z"`},
		{-1, 6, `"1969-12-31T23:59:59.999999Z"`},
		{-1, 3, `"1969-12-31T23:59:59.999999Z"`}, // more digits than declared: all kept
		{-1000, 3, `"1969-12-31T23:59:59.999Z"`},
		{1_000_000, 0, `"1970-01-01T00:00:01Z"`},
		{time.Date(-43, 3, 15, 12, 0, 0, 0, time.UTC).UnixMicro(), 0, `"-0043-03-15T12:00:00Z"`},
		{time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), 0, `"0000-01-01T00:00:00Z"`},
		{time.Date(12345, 6, 7, 8, 9, 10, 0, time.UTC).UnixMicro(), 0, `"+12345-06-07T08:09:10Z"`},
	} {
		if got := string(appendZonedTimestamp(nil, tc.us, tc.prec)); got != tc.want {
			t.Errorf("%d µs p%d: %s, want %s", tc.us, tc.prec, got, tc.want)
		}
	}
}

func TestJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", "quote \" backslash \\ slash /", "\x00\x01\x1f\x7f", "tab\tnl\ncr\r", "é 日本 🎉 \u2028\u2029", "<&>"} {
		b := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("%q → %s → %q, %v", s, b, back, err)
		}
	}
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

// TestMicrosRange: µs since 1970 for times at both ends of what an int64
// holds, and an error (ErrDefinition) past them, where PostgreSQL's
// timestamps still reach (294276 AD) and a wrapped count would be written
// as a date in 290278 BC.
func TestMicrosRange(t *testing.T) {
	const lowest = -math.MaxInt64 / 1_000_000 * 1_000_000 // whole seconds
	for _, tc := range []struct {
		t       time.Time
		want    int64
		refused bool
	}{
		{t: time.Date(1970, 1, 1, 0, 0, 0, 1000, time.UTC), want: 1},
		{t: time.Date(1969, 12, 31, 23, 59, 59, 999_999_000, time.UTC), want: -1},
		{t: time.Date(-4712, 1, 1, 0, 0, 0, 0, time.UTC), want: -210863520000000000}, // 4713 BC, near PostgreSQL's first day (proleptic Gregorian)
		{t: time.UnixMicro(math.MaxInt64).UTC(), want: math.MaxInt64},
		{t: time.UnixMicro(lowest).UTC(), want: lowest},
		{t: time.UnixMicro(math.MaxInt64).UTC().Add(time.Microsecond), refused: true},
		{t: time.Date(294276, 12, 31, 23, 59, 59, 999_999_000, time.UTC), refused: true}, // PostgreSQL's last
		{t: time.UnixMicro(lowest).UTC().Add(-time.Second), refused: true},
	} {
		got, err := micros(tc.t)
		if tc.refused {
			if !errors.Is(err, ErrDefinition) {
				t.Errorf("%s: %d, %v; want ErrDefinition", tc.t, got, err)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.t, got, err, tc.want)
		}
	}
}
