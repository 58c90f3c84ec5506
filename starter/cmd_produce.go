package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/names"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/worker/runner"
)

func (a *app) produceCmd() *cobra.Command {
	var events []string
	var key string
	var partitions int32
	var seed int64
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce Debezium change events to a Kafka topic (files, or the generated sample stream)",
		Long: `produce writes Debezium values to TOPIC on the Kafka at --kafka-brokers, in order,
keyed like Debezium keys them (records are partitioned by key): from --events files
(same formats as demo --events), or, without --events, the generated orders stream
that demo uses. It creates the topic with --partitions when it does not exist. For
trying the pipeline against a running worker (e.g. the dev worker, go run ./worker/dev).

The generated stream is one source table's history: --seed picks which. Another seed
is another source history (the same order_ids with other changes at the same log
positions), so it cannot follow a first one into the same topic: a table reading both
would see changes no source makes (validate's "illegal transitions"). produce marks
generated records with the header ` + sampleSeedHeader + ` and refuses (exit 2) a seed other than
the one the topic holds: give such a seed its own topic. The same seed again is a
redelivery of the same history (duplicates, which the pipeline drops).`,
		Example: "  starter produce shop.public.orders\n  starter produce demo.products --events testdata/debezium/flink/debezium-data-schema-include.txt --key id",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := out.json()
			if err != nil {
				return err
			}
			if err := names.CheckTopic(args[0]); err != nil {
				return usage("%v", err)
			}
			var recs []demoRecord
			kc, err := runner.NewKafka(a.settings)
			if err != nil {
				return err
			}
			defer kc.Close()
			var headers []kgo.RecordHeader
			if len(events) == 0 {
				if err := checkSampleSeed(cmd.Context(), kc, args[0], seed); err != nil {
					return err
				}
				headers = []kgo.RecordHeader{{Key: sampleSeedHeader, Value: []byte(strconv.FormatInt(seed, 10))}}
				s := sample.Generate(sample.Options{Seed: seed, Inserts: 40, Updates: 60, Deletes: 10, Duplicates: 8,
					Late: 6, OutOfOrder: 6, UnseenDeletes: 3, Tombstones: true, Envelope: true})
				for _, m := range s.Delivered {
					recs = append(recs, demoRecord{Key: m.Key, Value: m.Value})
				}
			} else {
				var err error
				if recs, err = loadEventFiles(events, splitKey(key)); err != nil {
					return err
				}
			}
			if err := kc.CreateTopic(cmd.Context(), args[0], partitions); err != nil {
				return err
			}
			krecs := make([]*kgo.Record, len(recs))
			for i, r := range recs {
				krecs[i] = &kgo.Record{Topic: args[0], Key: r.Key, Value: r.Value, Headers: headers}
			}
			if err := kc.Produce(cmd.Context(), krecs...); err != nil {
				return err
			}
			ends, err := kc.EndOffsets(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), producedJSON{Topic: args[0], Records: len(recs), EndOffsets: ends})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "produced %s to %s (end offsets %v)\n", human.Count(len(recs), "record", "records"), args[0], ends)
			return nil
		},
	}
	out.bind(cmd)
	cmd.Flags().StringSliceVar(&events, "events", nil, "files of Debezium values (default: the generated sample stream)")
	cmd.Flags().StringVar(&key, "key", "", "key columns, when the records carry no Kafka key")
	cmd.Flags().Int32Var(&partitions, "partitions", 1, "partitions of a topic that does not exist yet")
	cmd.Flags().Int64Var(&seed, "seed", 1, "seed of the generated stream: another seed is another source history, for another topic")
	return cmd
}

// producedJSON is what produce prints with --output json
// (docs/operating.md): the topic, the records produced, and the topic's
// end offsets after them (partition → offset; JSON object keys are the
// partitions in decimal).
type producedJSON struct {
	Topic      string          `json:"topic"`
	Records    int             `json:"records"`
	EndOffsets map[int32]int64 `json:"end_offsets"`
}

// sampleSeedHeader is the Kafka header produce puts on the records of the
// generated stream: the seed, in decimal.
const sampleSeedHeader = "lakemirror-sample-seed"

// checkSampleSeed refuses (usage error, exit 2) to produce the generated
// stream of seed into topic when the topic's last record of any partition
// is a generated record of another seed (sampleSeedHeader). A topic that
// does not exist or is empty, or whose records carry no seed, passes.
// Errors: that refusal, naming both seeds and the way on; Kafka's.
func checkSampleSeed(ctx context.Context, kc *kafka.Client, topic string, seed int64) error {
	ends, err := kc.EndOffsets(ctx, topic)
	if errors.Is(err, kafka.ErrUnknownTopic) {
		return nil
	}
	if err != nil {
		return err
	}
	starts, err := kc.StartOffsets(ctx, topic)
	if err != nil {
		return err
	}
	var ranges []kafka.Range
	for p, end := range ends {
		if end > starts[p] {
			ranges = append(ranges, kafka.Range{Partition: p, From: end - 1, To: end})
		}
	}
	if len(ranges) == 0 {
		return nil
	}
	recs, err := kc.Fetch(ctx, topic, ranges)
	if err != nil {
		return err
	}
	for _, r := range recs {
		for _, h := range r.Headers {
			if h.Key != sampleSeedHeader || string(h.Value) == strconv.FormatInt(seed, 10) {
				continue
			}
			return usage("topic %s holds the generated stream of --seed %s; --seed %d is another source history "+
				"(the same order_ids with other changes at the same positions), and a table reading both would see changes "+
				"no source makes (validate: illegal transitions). Nothing was produced: give --seed %d its own topic "+
				"(starter produce %s.seed%d --seed %d), or produce --seed %s again for a redelivery of the same history",
				topic, h.Value, seed, seed, topic, seed, seed, h.Value)
		}
	}
	return nil
}
