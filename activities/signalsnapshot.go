package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// SignalIncrementalSnapshot asks the Debezium connector for an incremental
// snapshot of the table (Debezium "Sending signals to a Debezium connector",
// Kafka signaling channel: a record keyed by the connector's topic.prefix
// with {"type":"execute-snapshot","data":{"data-collections":[...],
// "type":"incremental"}} on its signal.kafka.topic). The snapshot's reads
// arrive on the table's topic as op r events positioned in the stream,
// and are applied like any other change. Errors: no signal topic or
// source table configured (non-retryable), Kafka errors (retried).
func (a *Activities) SignalIncrementalSnapshot(ctx context.Context, spec TableSpec, id string) (SignalResult, error) {
	spec = spec.Defaults()
	if spec.SignalTopic == "" || spec.SourceTable == "" {
		return SignalResult{}, badSpec(fmt.Errorf("table %s: an incremental snapshot needs signal_topic and source_table", spec.Table))
	}
	prefix, _, _ := strings.Cut(spec.Topic, ".")
	body, err := json.Marshal(map[string]any{"id": id, "type": "execute-snapshot",
		"data": map[string]any{"data-collections": []string{spec.SourceTable}, "type": "incremental"}})
	if err != nil {
		return SignalResult{}, err
	}
	if err := a.Kafka.Produce(ctx, &kgo.Record{Topic: spec.SignalTopic, Key: []byte(prefix), Value: body}); err != nil {
		return SignalResult{}, err
	}
	return SignalResult{Topic: spec.SignalTopic, ID: id, Value: string(body)}, nil
}
