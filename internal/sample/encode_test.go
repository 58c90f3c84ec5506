package sample

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"
)

func TestAppendDecimal(t *testing.T) {
	for _, tc := range []struct {
		unscaled int64
		b64      string
		text     string
	}{
		{0, "AA==", "0.00"},
		{5, "BQ==", "0.05"},
		{100, "ZA==", "1.00"},
		{127, "fw==", "1.27"},
		{128, "AIA=", "1.28"},
		{200, "AMg=", "2.00"},
		{2550, "CfY=", "25.50"},
		{32768, "AIAA", "327.68"},
		{250000, "A9CQ", "2500.00"},
		{9999999999, "AlQL4/8=", "99999999.99"}, // numeric(10,2) maximum
		{-1, "/w==", "-0.01"},
		{-128, "gA==", "-1.28"},
		{-129, "/38=", "-1.29"},
		{-2550, "9go=", "-25.50"},
	} {
		got := string(appendDecimal(nil, tc.unscaled))
		if got != tc.b64 {
			t.Errorf("appendDecimal(%d) = %q, want %q", tc.unscaled, got, tc.b64)
		}
		raw, err := base64.StdEncoding.DecodeString(got)
		if err != nil {
			t.Fatal(err)
		}
		if txt := decimalText(raw, 2); txt != tc.text {
			t.Errorf("decimalText(%q) = %q, want %q", got, txt, tc.text)
		}
	}
}

func TestAppendZonedTimestamp(t *testing.T) {
	base := time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC).UnixMicro()
	for _, tc := range []struct {
		micros int64
		want   string
	}{
		{base, "2026-01-15T09:00:00Z"},
		{base + 19_500, "2026-01-15T09:00:00.0195Z"},
		{base + 123_456, "2026-01-15T09:00:00.123456Z"},
		{base + 100_000, "2026-01-15T09:00:00.1Z"},
		{base - 715, "2026-01-15T08:59:59.999285Z"},
	} {
		if got := string(appendZonedTimestamp(nil, tc.micros)); got != tc.want {
			t.Errorf("appendZonedTimestamp(%d) = %q, want %q", tc.micros, got, tc.want)
		}
	}
}

func TestAppendStringLikeJackson(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`fragile: "glass"`, `"fragile: \"glass\""`},
		{`back\office`, `"back\\office"`},
		{"café ☕ <&>", `"café ☕ <&>"`}, // no \u escapes for non-ASCII or HTML characters
		{"a\nb\tc\x01", `"a\nb\tc\u0001"`},
	} {
		got := string(appendString(nil, tc.in))
		if got != tc.want {
			t.Errorf("appendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back != tc.in {
			t.Errorf("round trip of %q: %q, %v", tc.in, back, err)
		}
	}
}
