package config

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "0": 0, "1234": 1234, "3GiB": 3 << 30, "512 MiB": 512 << 20, "2gb": 2e9, "64KiB": 64 << 10, "7b": 7, "1TiB": 1 << 40} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"-1":         `"-1" is not a size (bytes, or a whole number with KiB, MiB, GiB, TiB, KB, MB, GB, TB)`,
		"1.5GiB":     `"1.5GiB" is not a size (bytes, or a whole number with KiB, MiB, GiB, TiB, KB, MB, GB, TB)`,
		"lots":       `"lots" is not a size (bytes, or a whole number with KiB, MiB, GiB, TiB, KB, MB, GB, TB)`,
		"99999TiB0":  `"99999TiB0" is not a size (bytes, or a whole number with KiB, MiB, GiB, TiB, KB, MB, GB, TB)`,
		"9999999TiB": "size 9999999TiB is too large",
	} {
		if _, err := ParseBytes(in); err == nil || err.Error() != want {
			t.Errorf("ParseBytes(%q): %v, want %s", in, err, want)
		}
	}
}

// The default budget follows the cgroup v2 limit, else MemTotal; the
// flags override it; the table's is capped at the worker's.
func TestIndexBudget(t *testing.T) {
	dir := t.TempDir()
	defer func(c, m string) { cgroupMemoryMax, procMeminfo = c, m }(cgroupMemoryMax, procMeminfo)
	cgroupMemoryMax, procMeminfo = filepath.Join(dir, "memory.max"), filepath.Join(dir, "meminfo")
	os.WriteFile(procMeminfo, []byte("MemTotal:       24573672 kB\nMemFree:  1 kB\n"), 0o644)
	os.WriteFile(cgroupMemoryMax, []byte("max\n"), 0o644) // no limit: MemTotal counts
	if v, src := MemoryLimit(); v != 24573672<<10 || src != procMeminfo {
		t.Fatalf("MemoryLimit without a cgroup limit: %d from %s", v, src)
	}
	if w, tb := (Settings{}).IndexBudget(); w != 24573672<<10/8 || tb != w/4 {
		t.Fatalf("default budget %d / %d, want %d / %d", w, tb, 24573672<<10/8, 24573672<<10/32)
	}
	os.WriteFile(cgroupMemoryMax, []byte("4294967296\n"), 0o644)
	if v, src := MemoryLimit(); v != 4<<30 || src != cgroupMemoryMax {
		t.Fatalf("MemoryLimit with a cgroup limit: %d from %s", v, src)
	}
	if w, tb := (Settings{}).IndexBudget(); w != 512<<20 || tb != 128<<20 {
		t.Fatalf("budget under a 4 GiB cgroup: %d / %d, want 512 MiB / 128 MiB", w, tb)
	}
	var s Settings
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	b := s.Bind(fs)
	if err := fs.Parse([]string{"-index-memory", "2GiB", "-index-table-memory", "3GiB"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if w, tb := s.IndexBudget(); w != 2<<30 || tb != 2<<30 {
		t.Fatalf("flags 2GiB / 3GiB: %d / %d, want the table's capped at 2 GiB", w, tb)
	}
	fs = flag.NewFlagSet("worker", flag.ContinueOnError)
	b = (&Settings{}).Bind(fs)
	fs.Parse([]string{"-index-memory", "lots"})
	if err := b.Finish(); err == nil || err.Error() != `config: --index-memory: "lots" is not a size (bytes, or a whole number with KiB, MiB, GiB, TiB, KB, MB, GB, TB)` {
		t.Fatalf("bad --index-memory: %v", err)
	}
}

// --release-idle-state: the default, a flag, the environment, 0 (never),
// and malformed or negative values refused with the setting's name.
func TestReleaseIdleState(t *testing.T) {
	parse := func(env string, args ...string) (time.Duration, error) {
		t.Helper()
		if env != "" {
			t.Setenv(EnvReleaseIdle, env)
		}
		var s Settings
		fs := flag.NewFlagSet("worker", flag.ContinueOnError)
		b := s.Bind(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		err := b.Finish()
		return s.ReleaseIdleState, err
	}
	for _, c := range []struct {
		env  string
		args []string
		want time.Duration
	}{
		{"", nil, time.Hour},
		{"", []string{"-release-idle-state", "30m"}, 30 * time.Minute},
		{"", []string{"-release-idle-state", "0"}, 0},
		{"2h", nil, 2 * time.Hour},
		{"2h", []string{"-release-idle-state", "45s"}, 45 * time.Second},
	} {
		if got, err := parse(c.env, c.args...); err != nil || got != c.want {
			t.Errorf("env %q args %q: %v, %v; want %v", c.env, c.args, got, err, c.want)
		}
	}
	for in, want := range map[string]string{
		"soon": `config: --release-idle-state (env LAKEMIRROR_RELEASE_IDLE_STATE): "soon" is not a duration of 0 or more, such as 30m or 2h`,
		"-5m":  `config: --release-idle-state (env LAKEMIRROR_RELEASE_IDLE_STATE): "-5m" is not a duration of 0 or more, such as 30m or 2h`,
		"30":   `config: --release-idle-state (env LAKEMIRROR_RELEASE_IDLE_STATE): "30" is not a duration of 0 or more, such as 30m or 2h`,
	} {
		if _, err := parse("", "-release-idle-state", in); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", in, err, want)
		}
	}
}
