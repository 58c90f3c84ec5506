package workercmd

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// The worker's garbage collector. A batch allocates far more than the
// worker keeps live (the key index, a batch's rows), so with Go's default
// GOGC of 100 and a small live heap the collector runs every few dozen
// MiB of allocation and takes a fifth of the apply's CPU. The worker
// instead lets the heap grow by up to gcHeadroom over the live heap
// (GOGC between 100 and gcMaxPercent, retuned as the live heap changes),
// under a soft memory limit. GOGC or GOMEMLIMIT in the environment win.

const (
	gcHeadroom   = 1 << 30 // bytes of garbage allowed over the live heap before a collection
	gcMaxPercent = 400
	gcMinPercent = 100
)

// gcPercentFor is the GOGC that lets a heap of live bytes grow by about
// gcHeadroom, within [gcMinPercent, gcMaxPercent].
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	return int(min(max(uint64(gcHeadroom)*100/live, gcMinPercent), gcMaxPercent))
}

// tuneGC sets the soft memory limit (limit in bytes; 0 = derived by
// defaultMemoryLimit; < 0 = leave it) and, unless fixedPercent is set,
// retunes GOGC to the live heap every second until ctx ends
// (fixedPercent >= 0: use that GOGC; -2: leave GOGC alone). It returns
// the memory limit set (0: none set here).
func tuneGC(ctx context.Context, fixedPercent int, limit int64) int64 {
	if limit == 0 {
		limit = defaultMemoryLimit()
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	} else {
		limit = 0
	}
	switch {
	case fixedPercent >= 0:
		debug.SetGCPercent(fixedPercent)
	case fixedPercent == -1:
		go retuneGC(ctx)
	}
	return limit
}

// retuneGC sets GOGC from the live heap every second.
func retuneGC(ctx context.Context) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	last := -1
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			if p := gcPercentFor(sample[0].Value.Uint64()); p != last {
				debug.SetGCPercent(p)
				last = p
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
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
