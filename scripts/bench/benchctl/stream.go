package main

// The streamed workload (benchctl lakemirror --stream): the generator of
// `benchctl gen` runs beside the producer and hands it its values in
// chunks, so no snapshot.jsonl or changes.jsonl is written; only
// expected.parquet, orders.table.json and meta.json go to the data
// directory, for the checker.

import (
	"context"
	"errors"
	"io"
)

const streamChunk = 1_000 // values per hand-over to the producer

// genStream runs generate in a goroutine: snapshot values first, then,
// after next() has been released by changes(), the delivered changes.
type genStream struct {
	snap, chg chan [][]byte
	goChanges chan struct{}
	fin       chan struct{} // closed when generate returned; err is set before
	err       error
}

func startGenStream(ctx context.Context, o genOpts) *genStream {
	s := &genStream{snap: make(chan [][]byte, 8), chg: make(chan [][]byte, 8), goChanges: make(chan struct{}), fin: make(chan struct{})}
	var chunk [][]byte
	send := func(ch chan [][]byte) error {
		if len(chunk) == 0 {
			return nil
		}
		select {
		case ch <- chunk:
			chunk = make([][]byte, 0, streamChunk)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	add := func(ch chan [][]byte) func([]byte) error {
		return func(b []byte) error {
			chunk = append(chunk, append([]byte(nil), b...)) // the producer keeps the value; generate reuses b
			if len(chunk) == streamChunk {
				return send(ch)
			}
			return nil
		}
	}
	go func() {
		defer close(s.fin)
		err := generate(o, genSink{snapshot: add(s.snap), changes: add(s.chg), between: func() error {
			if err := send(s.snap); err != nil {
				return err
			}
			close(s.snap)
			select {
			case <-s.goChanges:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}})
		if err == nil {
			if err = send(s.chg); err == nil {
				close(s.chg)
			}
		}
		s.err = err
	}()
	return s
}

// values returns the iterator over one phase's values (ch: s.snap or
// s.chg): io.EOF after the last one.
func (s *genStream) values(ch chan [][]byte) func() ([]byte, error) {
	var cur [][]byte
	return func() ([]byte, error) {
		for len(cur) == 0 {
			select {
			case c, ok := <-ch:
				if !ok {
					return nil, io.EOF
				}
				cur = c
			case <-s.fin:
				if s.err != nil {
					return nil, s.err
				}
				// generate returned after closing ch; drain what is left
				c, ok := <-ch
				if !ok {
					return nil, io.EOF
				}
				cur = c
			}
		}
		b := cur[0]
		cur = cur[1:]
		return b, nil
	}
}

// snapshot is phase 1's values.
func (s *genStream) snapshot() func() ([]byte, error) { return s.values(s.snap) }

// changes releases the generator into phase 2 and returns its values.
func (s *genStream) changes() func() ([]byte, error) {
	close(s.goChanges)
	return s.values(s.chg)
}

// wait waits for the generator to finish (expected.parquet and meta.json
// written) and returns its error.
func (s *genStream) wait(ctx context.Context) error {
	select {
	case <-s.fin:
		return s.err
	case <-ctx.Done():
		return errors.Join(ctx.Err(), errors.New("the streamed generator did not finish"))
	}
}
