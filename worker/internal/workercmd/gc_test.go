package workercmd

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

func TestGCPercentFor(t *testing.T) {
	// up to 1 GiB of garbage while the heap stays within 1.25 GiB; then what
	// keeps it there, at least a quarter of the live heap
	for live, want := range map[uint64]int{0: 400, 100 << 20: 400, 256 << 20: 400, 512 << 20: 150, 640 << 20: 100, 1 << 30: 25, 1280 << 20: 25, 4 << 30: 25} {
		if got := gcPercentFor(live); got != want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", live>>20, got, want)
		}
	}
}
