package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// cpuProfiler records the worker's CPU profile during one phase, in
// consecutive pieces of profileChunk from the worker's
// /debug/pprof/profile (the worker runs with -pprof): a phase's length is
// not known in advance and the endpoint returns a profile only at the end
// of its duration. The pieces are DIR/<phase>-NN.pprof; `go tool pprof
// -proto DIR/*.pprof` merges them (scripts/bench/pgo.sh does, for the
// workers' default.pgo).
type cpuProfiler struct {
	stop chan struct{}
	wg   sync.WaitGroup
	err  error
}

const profileChunk = 5 * time.Second

// startCPUProfile begins recording phase's pieces into dir from the worker
// serving metrics at maddr; finish ends the recording after the piece in
// progress. dir == "" records nothing (a nil profiler).
func startCPUProfile(ctx context.Context, dir, maddr, phase string) *cpuProfiler {
	if dir == "" {
		return nil
	}
	p := &cpuProfiler{stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			out := filepath.Join(dir, fmt.Sprintf("%s-%02d.pprof", phase, i))
			if err := fetchProfile(ctx, maddr, out); err != nil {
				p.err = err
				return
			}
		}
	}()
	return p
}

// finish stops the recording, waits for the piece in progress and
// reports the first error.
func (p *cpuProfiler) finish() error {
	if p == nil {
		return nil
	}
	close(p.stop)
	p.wg.Wait()
	return p.err
}

// fetchProfile writes one profileChunk-long CPU profile of the worker at
// maddr to out. Errors: the request (a worker without -pprof answers 404),
// the file.
func fetchProfile(ctx context.Context, maddr, out string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", maddr, int(profileChunk/time.Second))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cpu profile: %s answered %s (is the worker running with -pprof?)", url, resp.Status)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
