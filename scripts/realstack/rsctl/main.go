// Command rsctl is the real-stack suite's helper (scripts/realstack):
//
//	rsctl temporal -port P -db FILE   run only the embedded Temporal dev server of the dev worker (./worker/dev)
//	rsctl pending -address H:P -workflow ID [-wait-started TYPE -timeout D]
//	                                  print the workflow's pending activities, one per line:
//	                                  "<type> <state> attempt=<n> last_failure=<msg>";
//	                                  with -wait-started, first poll until one of TYPE is running
//	rsctl replay -brokers B -topic T -from A -to Z
//	                                  re-produce the records at offsets [A, Z) of partition 0 of T
//	                                  at its end (same key, value, headers, plus a header
//	                                  realstack.replayed-from): a late replay of an old range
//	rsctl signal -brokers B -topic T -key K -value JSON
//	                                  produce one record (key K, value JSON) to partition 0 of T:
//	                                  a Debezium signal on a connector's Kafka signal channel
//	                                  (key = the connector's topic.prefix), e.g. the blocking
//	                                  execute-snapshot the starter does not send
//	rsctl groupcut -address H:P -group G
//	                                  print the group workflow's cut query (workflows.GroupCut) as JSON
//
// `replay` is the suite's out-of-order fault: a single-partition Debezium
// topic only ever redelivers a suffix, so the final state does not show
// whether the pipeline's sequence guard works; records re-appended long
// after newer ones for the same keys do.
//
// The suite runs Temporal on its own because it runs the production worker
// (./worker, which embeds nothing) against real Kafka, and kills and
// restarts it mid-batch while Temporal stays up.
// `pending` lets the suite kill the worker while ApplyBatch is running.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/workflows"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rsctl temporal|pending|replay|signal|groupcut [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "temporal":
		err = serveTemporal(os.Args[2:])
	case "pending":
		err = pending(os.Args[2:])
	case "replay":
		err = replay(os.Args[2:])
	case "signal":
		err = sendSignal(os.Args[2:])
	case "groupcut":
		err = groupCut(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rsctl:", err)
		os.Exit(1)
	}
}

func serveTemporal(args []string) error {
	fs := flag.NewFlagSet("temporal", flag.ExitOnError)
	port := fs.Int("port", 7233, "frontend gRPC port on 127.0.0.1")
	uiPort := fs.Int("ui-port", -1, "Web UI port; -1 = no UI")
	db := fs.String("db", "", "SQLite file for persistence; empty = in memory")
	_ = fs.Parse(args)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	t, err := devstack.StartTemporal(ctx, devstack.TemporalOptions{
		IP: "127.0.0.1", GRPCPort: *port, UIPort: *uiPort, DBFile: *db,
		SearchAttributes: workflows.SearchAttributeTypes, Logger: logger,
	})
	if err != nil {
		return err
	}
	fmt.Printf("temporal ready on %s (namespace %s)\n", t.HostPort(), t.Namespace())
	<-ctx.Done()
	return t.Stop()
}

func pending(args []string) error {
	fs := flag.NewFlagSet("pending", flag.ExitOnError)
	addr := fs.String("address", "127.0.0.1:7233", "Temporal frontend host:port")
	wf := fs.String("workflow", "", "workflow id")
	waitStarted := fs.String("wait-started", "", "poll every 20ms until an activity of this type is running, print it and exit")
	timeout := fs.Duration("timeout", 2*time.Minute, "with -wait-started: give up (exit 1) after this long")
	_ = fs.Parse(args)
	c, err := client.Dial(client.Options{HostPort: *addr, Logger: quietLogger{}})
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(*timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d, err := c.DescribeWorkflowExecution(ctx, *wf, "")
		cancel()
		if err != nil {
			return err
		}
		var lines []string
		found := false
		for _, a := range d.GetPendingActivities() {
			msg := ""
			if f := a.GetLastFailure(); f != nil {
				msg = strings.ReplaceAll(f.GetMessage(), "\n", " ")
			}
			lines = append(lines, fmt.Sprintf("%s %s attempt=%d last_failure=%s", a.GetActivityType().GetName(), a.GetState(), a.GetAttempt(), msg))
			if a.GetActivityType().GetName() == *waitStarted && a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				found = true
			}
		}
		if *waitStarted == "" || found {
			for _, l := range lines {
				fmt.Println(l)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s activity of %s was running within %s", *waitStarted, *wf, *timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupCut prints the group workflow's cut query result as JSON.
func groupCut(args []string) error {
	fs := flag.NewFlagSet("groupcut", flag.ExitOnError)
	addr := fs.String("address", "127.0.0.1:7233", "Temporal frontend host:port")
	group := fs.String("group", "", "source group name")
	_ = fs.Parse(args)
	c, err := client.Dial(client.Options{HostPort: *addr, Logger: quietLogger{}})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, workflows.GroupWorkflowID(*group), "", workflows.QueryCut)
	if err != nil {
		return err
	}
	var g workflows.GroupCut
	if err := v.Get(&g); err != nil {
		return err
	}
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

// quietLogger drops the SDK client's log lines.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

func replay(args []string) error {
	fs := flag.NewFlagSet("replay", flag.ExitOnError)
	brokers := fs.String("brokers", "127.0.0.1:9092", "Kafka bootstrap servers")
	topic := fs.String("topic", "", "topic (partition 0)")
	from := fs.Int64("from", 0, "first offset to replay")
	to := fs.Int64("to", 0, "end offset (exclusive)")
	_ = fs.Parse(args)
	if *topic == "" || *to <= *from {
		return fmt.Errorf("replay: need -topic and -from < -to")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cons, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*brokers, ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{*topic: {0: kgo.NewOffset().At(*from)}}))
	if err != nil {
		return err
	}
	var recs []*kgo.Record
	for len(recs) == 0 || recs[len(recs)-1].Offset < *to-1 {
		fetches := cons.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			cons.Close()
			return fmt.Errorf("replay: fetch: %w", err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset >= *from && r.Offset < *to {
				recs = append(recs, r)
			}
		})
	}
	cons.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*brokers, ",")...), kgo.DefaultProduceTopic(*topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer prod.Close()
	out := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		h := append(append([]kgo.RecordHeader(nil), r.Headers...),
			kgo.RecordHeader{Key: "realstack.replayed-from", Value: []byte(strconv.FormatInt(r.Offset, 10))})
		out[i] = &kgo.Record{Topic: *topic, Partition: 0, Key: r.Key, Value: r.Value, Headers: h}
	}
	if err := prod.ProduceSync(ctx, out...).FirstErr(); err != nil {
		return fmt.Errorf("replay: produce: %w", err)
	}
	fmt.Printf("replayed %d records of %s [%d, %d)\n", len(out), *topic, *from, *to)
	return nil
}

func sendSignal(args []string) error {
	fs := flag.NewFlagSet("signal", flag.ExitOnError)
	brokers := fs.String("brokers", "127.0.0.1:9092", "Kafka bootstrap servers")
	topic := fs.String("topic", "", "the connector's signal topic (signal.kafka.topic)")
	key := fs.String("key", "", "record key: the connector's topic.prefix")
	value := fs.String("value", "", "record value: the signal as JSON")
	_ = fs.Parse(args)
	if *topic == "" || *key == "" || *value == "" {
		return fmt.Errorf("signal: need -topic, -key and -value")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer prod.Close()
	r := &kgo.Record{Topic: *topic, Partition: 0, Key: []byte(*key), Value: []byte(*value)}
	if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("signal: produce: %w", err)
	}
	fmt.Printf("signal sent to %s offset %d: key %s value %s\n", *topic, r.Offset, *key, *value)
	return nil
}
