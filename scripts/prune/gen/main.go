// Command gen writes one change stream twice with lakemirror's write path
// (internal/lake.TableWriter, as the ApplyBatch activity calls it): into a
// partitioned table (mirror bucket(16, id), history day(_valid_from)) and
// an unpartitioned one, each in its own local SQLite catalog and
// warehouse under -out. The stream: -keys inserts on day 0, then -days
// days of updates (and a delete every 20th change) of random keys, each
// change committed on its day (Debezium PostgreSQL JSON, source ts_ms),
// in batches of -batch records. It prints, as JSON, each table's current
// metadata file (what pyiceberg's StaticTable and DuckDB's iceberg_scan
// read) and the counts. With -rounds N it writes each layout N times,
// alternating, and lists each write's wall and CPU seconds (runs): the
// apply cost of the partitioned layout against the unpartitioned one on
// the same input in the same process. Used by scripts/prune/run.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/schemas"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func value(op string, lsn int64, at time.Time, before, after string) []byte {
	if before == "" {
		before = "null"
	}
	if after == "" {
		after = "null"
	}
	ts := at.UnixMilli()
	return []byte(fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"postgresql","name":"s","ts_ms":%d,"snapshot":"false","db":"s","sequence":"[\"%d\",\"%d\"]","schema":"public","table":"orders","txId":%d,"lsn":%d,"xmin":null},"op":%q,"ts_ms":%d}`,
		before, after, ts, lsn-1, lsn, lsn, lsn, op, ts))
}

func row(id int64, region string, amount int64) string {
	return fmt.Sprintf(`{"id":%d,"region":%q,"amount":%d}`, id, region, amount)
}

func main() {
	out := flag.String("out", "", "output directory (one catalog per layout under it)")
	keys := flag.Int("keys", 20000, "keys inserted on day 0")
	days := flag.Int("days", 30, "days of changes after day 0")
	perDay := flag.Int("changes-per-day", 2000, "changes per day")
	batch := flag.Int("batch", 5000, "records per batch")
	rounds := flag.Int("rounds", 1, "write each layout this many times, alternating which goes first (the apply cost comparison)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the partitioned layout's writes to this file (go tool pprof)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gen: -out is required")
		os.Exit(2)
	}
	// the stream, in commit order
	r := rand.New(rand.NewPCG(7, 39))
	regions := []string{"eu", "us", "apac", "latam"}
	type state struct {
		region string
		amount int64
		live   bool
	}
	st := make([]state, *keys+1)
	var stream [][]byte
	lsn := int64(100)
	for id := int64(1); id <= int64(*keys); id++ {
		st[id] = state{regions[r.IntN(4)], r.Int64N(100000), true}
		at := epoch.Add(time.Duration(id) * time.Second)
		stream = append(stream, value("c", lsn, at, "", row(id, st[id].region, st[id].amount)))
		lsn += 2
	}
	deletes := 0
	for d := 1; d <= *days; d++ {
		for i := 0; i < *perDay; i++ {
			id := 1 + r.Int64N(int64(*keys))
			at := epoch.AddDate(0, 0, d).Add(time.Duration(i) * 40 * time.Second)
			s := &st[id]
			before := row(id, s.region, s.amount)
			switch {
			case !s.live:
				*s = state{regions[r.IntN(4)], r.Int64N(100000), true}
				stream = append(stream, value("c", lsn, at, "", row(id, s.region, s.amount)))
			case i%20 == 19:
				s.live = false
				deletes++
				stream = append(stream, value("d", lsn, at, before, ""))
			default:
				s.amount = r.Int64N(100000)
				if r.IntN(4) == 0 {
					s.region = regions[r.IntN(4)]
				}
				stream = append(stream, value("u", lsn, at, before, row(id, s.region, s.amount)))
			}
			lsn += 2
		}
	}
	res := map[string]any{"keys": *keys, "days": *days, "changes": len(stream), "deletes": deletes, "day0": epoch.Format(time.RFC3339)}
	layouts := []struct {
		name string
		lay  layout.Tables
	}{
		{"partitioned", layout.Tables{Mirror: layout.Spec{PartitionBy: []string{"bucket(16, id)"}}, History: layout.Spec{PartitionBy: []string{"day(_valid_from)"}}}},
		{"unpartitioned", layout.Tables{}},
	}
	var runs []map[string]any
	for r := 0; r < *rounds; r++ {
		for i := range layouts {
			x := layouts[(i+r)%2] // alternate which layout goes first
			stop := func() {}
			if *cpuprofile != "" && x.name == "partitioned" {
				var err error
				if stop, err = startProfile(*cpuprofile); err != nil {
					fmt.Fprintln(os.Stderr, "gen:", err)
					os.Exit(1)
				}
			}
			cpu0 := cpuSeconds()
			m, secs, err := write(filepath.Join(*out, x.name), x.lay, stream, *batch)
			stop()
			if err != nil {
				fmt.Fprintln(os.Stderr, "gen:", x.name+":", err)
				os.Exit(1)
			}
			cpu := cpuSeconds() - cpu0
			runs = append(runs, map[string]any{"round": r + 1, "layout": x.name, "write_s": secs, "cpu_s": cpu})
			m["write_s"], m["cpu_s"] = secs, cpu
			res[x.name] = m
		}
	}
	res["runs"] = runs
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(res)
}

// startProfile starts a CPU profile into path (truncated: the last
// partitioned write's) and returns the function that stops it.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// cpuSeconds is this process's user + system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// write applies the stream to a new catalog under dir with lay, in
// batches, and returns each table's metadata file.
func write(dir string, lay layout.Tables, stream [][]byte, batch int) (map[string]any, float64, error) {
	ctx := context.Background()
	if err := os.RemoveAll(dir); err != nil {
		return nil, 0, err
	}
	cat, err := lake.OpenCatalog(ctx, lake.CatalogConfig{LocalDir: dir})
	if err != nil {
		return nil, 0, err
	}
	name := lake.TableName{Namespace: "shop", Name: "orders"}
	keys := []string{"id"}
	tw := lake.NewTableWriter(cat, name, keys, lake.WriterOptions{History: true, Layout: lay, StateDir: filepath.Join(dir, "state")})
	defer tw.Mirror.State().Close()
	dec := schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: keys})
	start := time.Now()
	var off int64
	for seq := int64(1); len(stream) > 0; seq++ {
		n := min(batch, len(stream))
		var in lake.WriteInput
		from := off
		for _, v := range stream[:n] {
			in.Bronze = append(in.Bronze, lake.BronzeRecord{Record: payload.Record{Offset: off, Value: v}})
			d, err := dec.Decode(schemas.Record{Topic: "t", Offset: off, Value: v})
			if err != nil {
				return nil, 0, err
			}
			if d.Kind == schemas.KindChange {
				in.Events = append(in.Events, d.Event)
				in.Bronze[len(in.Bronze)-1].Op, in.Bronze[len(in.Bronze)-1].Seq = d.RawOp, d.Event.Seq
			}
			off++
		}
		stream = stream[n:]
		in.Batch = lake.Batch{ID: fmt.Sprint("b", seq), Seq: seq, Topic: "t", Ranges: []lake.Range{{From: from, To: off}}, EndOffsets: lake.Offsets{0: off}}
		in.MaxQuarantine = 10
		if _, err := tw.Write(ctx, in); err != nil {
			return nil, 0, err
		}
	}
	secs := time.Since(start).Seconds()
	out := map[string]any{}
	for kind, ident := range map[string][]string{"mirror": name.Mirror(), "history": name.History()} {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, 0, err
		}
		out[kind] = tbl.MetadataLocation()
	}
	return out, secs, nil
}
