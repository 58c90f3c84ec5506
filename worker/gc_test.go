package main

import "testing"

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1536MiB": 1536 << 20, "2GiB": 2 << 30, "4096": 4096, "64KiB": 64 << 10} {
		got, err := parseBytes(in)
		if err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1MiB", "1.5GiB", "2GB", "lots"} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("parseBytes(%q) accepted", bad)
		}
	}
}
