package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// IndexBudget is the worker's key index budget in bytes: IndexMemory and
// IndexTableMemory, each defaulted when 0 (an eighth of MemoryLimit for
// the worker, at least 256 MiB; a quarter of the worker's for a table),
// the table's capped at the worker's.
func (s Settings) IndexBudget() (worker, table int64) {
	worker, table = s.IndexMemory, s.IndexTableMemory
	if worker <= 0 {
		mem, _ := MemoryLimit()
		worker = max(mem/8, 256<<20)
	}
	if table <= 0 {
		table = worker / 4
	}
	return worker, min(table, worker)
}

// cgroupMemoryMax and procMeminfo are where MemoryLimit reads (variables
// for tests).
var (
	cgroupMemoryMax = "/sys/fs/cgroup/memory.max"
	procMeminfo     = "/proc/meminfo"
)

// MemoryLimit is the memory this process may use, in bytes, and where
// that was read: the cgroup v2 limit (memory.max) when one is set, else
// the machine's MemTotal from /proc/meminfo; 4 GiB and "assumed" when
// neither is readable.
func MemoryLimit() (int64, string) {
	if b, err := os.ReadFile(cgroupMemoryMax); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 {
			return v, cgroupMemoryMax
		}
	}
	if b, err := os.ReadFile(procMeminfo); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && f[0] == "MemTotal:" {
				if v, err := strconv.ParseInt(f[1], 10, 64); err == nil && v > 0 {
					return v << 10, procMeminfo // in kB
				}
			}
		}
	}
	return 4 << 30, "assumed"
}

// ParseBytes reads a size: a whole number of bytes, optionally with a
// unit KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers of
// 1000), any case, a space allowed before it. "" is 0. Errors: another
// form, or a negative or overflowing size.
func ParseBytes(text string) (int64, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"b", 1}}
	mult := int64(1)
	lower := strings.ToLower(t)
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			mult, t = u.mult, strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (bytes, or a whole number with KiB, MiB, GiB, TiB, KB, MB, GB, TB)", text)
	}
	if v > 0 && mult > 1 && v > (1<<63-1)/mult {
		return 0, errors.New("size " + text + " is too large")
	}
	return v * mult, nil
}
