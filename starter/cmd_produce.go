package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/worker/runner"
)

func (a *app) produceCmd() *cobra.Command {
	var events []string
	var key string
	var partitions int32
	var seed int64
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce Debezium change events to a Kafka topic (files, or the generated sample stream)",
		Long: `produce writes Debezium values to TOPIC on the Kafka at --kafka-brokers, in order,
keyed like Debezium keys them (records are partitioned by key): from --events files
(same formats as demo --events), or, without --events, the generated orders stream
that demo uses. It creates the topic with --partitions when it does not exist. For
trying the pipeline against a running worker (e.g. the dev worker, go run ./worker/dev).`,
		Example: "  starter produce shop.public.orders\n  starter produce demo.products --events testdata/debezium/flink/debezium-data-schema-include.txt --key id",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var recs []demoRecord
			if len(events) == 0 {
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
			kc, err := runner.NewKafka(a.settings)
			if err != nil {
				return err
			}
			defer kc.Close()
			if err := kc.CreateTopic(cmd.Context(), args[0], partitions); err != nil {
				return err
			}
			krecs := make([]*kgo.Record, len(recs))
			for i, r := range recs {
				krecs[i] = &kgo.Record{Topic: args[0], Key: r.Key, Value: r.Value}
			}
			if err := kc.Produce(cmd.Context(), krecs...); err != nil {
				return err
			}
			ends, err := kc.EndOffsets(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "produced %d records to %s (end offsets %v)\n", len(recs), args[0], ends)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&events, "events", nil, "files of Debezium values (default: the generated sample stream)")
	cmd.Flags().StringVar(&key, "key", "", "key columns, when the records carry no Kafka key")
	cmd.Flags().Int32Var(&partitions, "partitions", 1, "partitions of a topic that does not exist yet")
	cmd.Flags().Int64Var(&seed, "seed", 1, "seed of the generated stream")
	return cmd
}
