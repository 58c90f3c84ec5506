package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// defaultGCPercent is the worker's GOGC unless GOGC or -gc-percent says
// otherwise. A batch allocates far more than the worker keeps live (the
// key index and a batch's rows), so Go's default of 100 spends a fifth of
// the apply's CPU collecting; 400 trades a few hundred MiB of heap for
// most of it, and the memory limit (defaultMemoryLimit) bounds the heap.
const defaultGCPercent = 400

// tuneGC sets the garbage collector's target percentage and soft memory
// limit: percent < 0 keeps GOGC's (or Go's default of 100); limit is in
// bytes, 0 = derived (defaultMemoryLimit), < 0 = keep GOMEMLIMIT's (or
// none). It returns the limit set (0: none set here).
func tuneGC(percent int, limit int64) int64 {
	if percent >= 0 {
		debug.SetGCPercent(percent)
	}
	if limit == 0 {
		limit = defaultMemoryLimit()
	}
	if limit <= 0 {
		return 0
	}
	debug.SetMemoryLimit(limit)
	return limit
}

// defaultMemoryLimit is 80 % of the cgroup's memory limit when the worker
// runs under one (a container), else a quarter of the machine's memory,
// and never below 1 GiB; 0 when neither can be read.
func defaultMemoryLimit() int64 {
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 {
			return max(v/10*8, 1<<30)
		}
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return max(kib<<10/4, 1<<30)
		}
	}
	return 0
}

// parseBytes reads a size: a number of bytes or one with a KiB, MiB or
// GiB suffix ("1536MiB", "2GiB").
func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = v, m
			break
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q (bytes, or with KiB, MiB, GiB)", s)
	}
	return v * mult, nil
}
