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
// instead lets the heap grow by up to gcHeadroom over the live heap, as
// long as the heap stays within gcBudget; once the live heap is large
// (ten million keys and more) the headroom shrinks to what keeps the heap
// within the budget, but never below a quarter of the live heap (GOGC
// between gcMinPercent and gcMaxPercent, retuned every second as the live
// heap changes), under a soft memory limit. The key index and most batch
// buffers hold no pointers, so collecting a large live heap more often
// costs little marking. GOGC or GOMEMLIMIT in the environment win.

const (
	gcHeadroom    = 1 << 30  // bytes of garbage allowed over the live heap before a collection, at most
	gcBudget      = 5 << 28  // the heap (live and garbage) the headroom keeps within while it can: 1.25 GiB
	gcMaxPercent  = 400      // a small live heap: at most 4x its size in garbage
	gcMinPercent  = 25       // a live heap beyond the budget: a quarter of its size in garbage
	gcMinHeadroom = 64 << 20 // never less than this much garbage between collections
)

// gcPercentFor is the GOGC for a live heap of live bytes: a headroom of
// gcHeadroom, or less to keep live plus headroom within gcBudget, at
// least gcMinHeadroom, as a percentage within [gcMinPercent,
// gcMaxPercent].
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	headroom := uint64(gcHeadroom)
	if live+headroom > gcBudget {
		headroom = uint64(gcMinHeadroom)
		if live < gcBudget {
			headroom = max(gcBudget-live, headroom)
		}
	}
	return int(min(max(headroom*100/live, gcMinPercent), gcMaxPercent))
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
