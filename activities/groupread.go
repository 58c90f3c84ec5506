package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/cut"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/schemas"
)

// Payload types of the group's consumer.
type (
	GroupReadRequest = payload.GroupReadRequest
	GroupReadResult  = payload.GroupReadResult
)

// keptValueMax is the most bytes of a kept record's value a result
// carries (GroupKept.Value).
const keptValueMax = 512

// ReadGroupTransactions reads the next range of a source group's
// transaction metadata topic (Debezium provide.transaction.metadata=true,
// topic <topic.prefix>.transaction: a BEGIN and an END record per source
// transaction, in commit order; Debezium docs, "Transaction metadata";
// docs/design.md, "Consistent cuts across a source group"): from
// req.From (a partition absent: its log start) to the topic's end offsets,
// at most req.MaxRecords records (payload.GroupReadMax), read exactly with
// kafka.ReadTransactionTopic and decoded with schemas.DecodeTransaction.
//
// Each END becomes a payload.GroupEnd: its commit position from its id
// by cut.CommitPosition, for the connector the ids' form shows
// (cut.IDConnector). A record that does not decode (a tombstone
// included), and an END whose id gives no commit position (MySQL,
// MariaDB, Oracle, a form no connector writes) or shows another
// connector than the ENDs before it, is kept (payload.GroupKept) and
// holds the read: the records after it are not taken and Next stays at
// it, so the cut never passes a transaction whose END was skipped. BEGINs
// are counted.
//
// Errors: a transaction topic of more than one partition is refused
// (non-retryable ErrTypeBadSpec: ENDs are in commit order only within a
// partition), one whose end is below req.From too (non-retryable
// ErrTypeLogReset: the topic was created again); Kafka's errors (kafka.ErrUnknownTopic for a topic that does
// not exist yet, a retention gap below req.From) are returned classified
// (retried, a gap non-retryable).
func (a *Activities) ReadGroupTransactions(ctx context.Context, req GroupReadRequest) (GroupReadResult, error) {
	res := GroupReadResult{Next: payload.Offsets{}, EndOffsets: payload.Offsets{}}
	if a.Kafka == nil {
		return res, badSpec(errors.New("group " + req.Group + ": this worker has no Kafka client to read the transaction topic"))
	}
	ends, err := a.Kafka.EndOffsets(ctx, req.Topic)
	if err != nil {
		return res, classify(err)
	}
	if len(ends) > 1 {
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"group %s: transaction topic %s has %d partitions: its END records are in commit order only within one, so the group cannot cut by them; give the connector a transaction topic of one partition",
			req.Group, req.Topic, len(ends)), ErrTypeBadSpec, nil)
	}
	var starts map[int32]int64
	for p := range ends {
		if _, ok := req.From[p]; !ok && starts == nil {
			if starts, err = a.Kafka.StartOffsets(ctx, req.Topic); err != nil {
				return res, classify(err)
			}
		}
	}
	limit := int64(req.MaxRecords)
	if limit <= 0 {
		limit = payload.GroupReadMax
	}
	var ranges []kafka.Range
	for p, end := range ends {
		from, ok := req.From[p]
		if !ok {
			from = starts[p]
		}
		if from > end {
			return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"group %s: transaction topic %s partition %d ends at offset %d, below the group's next offset %d: the topic was deleted and created again; the group cannot tell which transactions it has read",
				req.Group, req.Topic, p, end, from), ErrTypeLogReset, nil)
		}
		to := min(end, from+limit)
		res.EndOffsets[p], res.Next[p] = end, to
		res.More = res.More || to < end
		if to > from {
			ranges = append(ranges, kafka.Range{Partition: p, From: from, To: to})
		}
	}
	if len(ranges) == 0 {
		return res, nil
	}
	read, err := kafka.ReadTransactionTopic(ctx, a.Kafka, req.Topic, ranges, schemas.DecodeTransaction)
	if err != nil {
		return res, classify(err)
	}
	held := false
	hold := func(part int32, off int64, reason string, value []byte) {
		if len(value) > keptValueMax {
			value = value[:keptValueMax]
		}
		res.Kept = append(res.Kept, payload.GroupKept{Partition: part, Offset: off, Reason: reason, Value: string(value)})
		if !held {
			held, res.Next[part], res.More = true, off, false
		}
	}
	kept := read.Kept
	for _, r := range read.Records {
		for len(kept) > 0 && kept[0].Offset < r.Offset { // one partition: offset order
			hold(kept[0].Partition, kept[0].Offset, kept[0].Reason, kept[0].Value)
			kept = kept[1:]
		}
		if held {
			continue
		}
		tx := r.Value
		if tx.Status != "END" {
			res.Begins++
			continue
		}
		conn := cut.IDConnector(tx.ID)
		if res.Connector != "" && conn != "" && conn != res.Connector {
			hold(r.Partition, r.Offset, fmt.Sprintf("END %q: the id of a %s connector after ids of a %s one", tx.ID, conn, res.Connector), nil)
			continue
		}
		if conn == "" {
			hold(r.Partition, r.Offset, fmt.Sprintf("END %q: the id gives no commit position (PostgreSQL txId:LSN and SQL Server commit LSNs do; MySQL, MariaDB and Oracle ids do not: such a group cuts by position)", tx.ID), nil)
			continue
		}
		commit, err := cut.CommitPosition(conn, tx.ID)
		if err != nil {
			hold(r.Partition, r.Offset, err.Error(), nil)
			continue
		}
		res.Connector = conn
		e := payload.GroupEnd{Partition: r.Partition, Offset: r.Offset, ID: tx.ID, Commit: commit.Hex(), TsMs: tx.TsMs}
		for _, c := range tx.Collections {
			if e.Counts == nil {
				e.Counts = map[string]int64{}
			}
			e.Counts[c.Collection] += c.EventCount
		}
		res.Ends = append(res.Ends, e)
	}
	for _, k := range kept {
		hold(k.Partition, k.Offset, k.Reason, k.Value)
	}
	return res, nil
}
