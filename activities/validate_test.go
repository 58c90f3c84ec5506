package activities

import (
	"context"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/validate"
	"github.com/lakemirror/lakemirror/schemas"
)

// valFixture is a two-partition topic on kfake and a worker applying
// batches of its records by hand, so a test can make the tables miss
// records, skip offsets or go back.
type valFixture struct {
	t       *testing.T
	ctx     context.Context
	cluster *kfake.Cluster
	a       *Activities
	spec    TableSpec
	name    lake.TableName
	log     map[int32][]sample.Message // what each partition holds, by offset
	seq     int64
	pos     lake.Offsets
	// phantom: changes the next batch applies to the mirror (and
	// history) without bronze recording them, a write-path fault
	phantom []sample.Message
}

func newValFixture(t *testing.T) *valFixture {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	kc, err := kafka.NewClient(cluster.ListenAddrs(), kafka.ManualPartitioner())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxQuarantine: 1000}.Defaults()
	f := &valFixture{t: t, ctx: context.Background(), cluster: cluster, spec: spec,
		name: lake.TableName{Namespace: "shop", Name: "orders"}, log: map[int32][]sample.Message{}, pos: lake.Offsets{0: 0, 1: 0}}
	if err := kc.CreateTopic(f.ctx, spec.Topic, 2); err != nil {
		t.Fatal(err)
	}
	f.a = New(mustCatalog(t), kc)
	f.a.StateDir = t.TempDir()
	return f
}

// produce appends msgs to partition p of the topic.
func (f *valFixture) produce(p int32, msgs ...sample.Message) {
	f.t.Helper()
	recs := make([]*kgo.Record, len(msgs))
	for i, m := range msgs {
		recs[i] = &kgo.Record{Topic: f.spec.Topic, Partition: p, Key: m.Key, Value: m.Value}
	}
	if err := f.a.Kafka.Produce(f.ctx, recs...); err != nil {
		f.t.Fatal(err)
	}
	f.log[p] = append(f.log[p], msgs...)
}

// apply applies one batch covering [from, to) of each partition given
// (ranges: partition → [from, to)), with the records at those offsets
// except the ones in drop, and moves the position to the ranges' ends.
func (f *valFixture) apply(ranges map[int32][2]int64, drop map[int32][]int64) {
	f.t.Helper()
	st, name, err := f.a.state(f.spec)
	if err != nil {
		f.t.Fatal(err)
	}
	f.seq++
	b := lake.Batch{ID: fmt.Sprintf("b%d", f.seq), Seq: f.seq, Topic: f.spec.Topic, EndOffsets: lake.Offsets{}}
	var recs []schemas.Record
	for _, p := range []int32{0, 1} {
		r, ok := ranges[p]
		if !ok {
			continue
		}
		b.Ranges = append(b.Ranges, lake.Range{Partition: p, From: r[0], To: r[1]})
		f.pos[p] = r[1]
	next:
		for o := r[0]; o < r[1]; o++ {
			for _, d := range drop[p] {
				if d == o {
					continue next
				}
			}
			m := f.log[p][o]
			recs = append(recs, schemas.Record{Topic: f.spec.Topic, Partition: p, Offset: o, Key: m.Key, Value: m.Value})
		}
	}
	for p, o := range f.pos {
		b.EndOffsets[p] = o
	}
	var pre *decoded
	if len(f.phantom) > 0 {
		dec, err := decodeAll(st.decoders, recs)
		if err != nil {
			f.t.Fatal(err)
		}
		var extra []schemas.Record
		for i, m := range f.phantom {
			extra = append(extra, schemas.Record{Topic: f.spec.Topic, Partition: 0, Offset: 1_000_000 + int64(i), Key: m.Key, Value: m.Value})
		}
		ph, err := decodeAll(st.decoders, extra)
		if err != nil {
			f.t.Fatal(err)
		}
		dec.events = append(dec.events, ph.events...)
		pre, f.phantom = &dec, nil
	}
	stage := ""
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, _, err := f.a.applyRecords(f.ctx, st, name, f.spec, b, recs, pre, "", &stage); err != nil {
		f.t.Fatalf("batch %d (%s): %v", f.seq, stage, err)
	}
}

// validate runs the checks and returns the result with each check by name.
func (f *valFixture) validate() (ValidationResult, map[string]validate.Result) {
	f.t.Helper()
	res, err := f.a.Validate(f.ctx, ValidationRequest{Spec: f.spec, RunID: fmt.Sprintf("run-%s", f.t.Name())})
	if err != nil {
		f.t.Fatal(err)
	}
	by := map[string]validate.Result{}
	for _, c := range res.Checks {
		by[c.Check] = c
	}
	return res, by
}

// only asserts that exactly the named check failed, with these details.
func only(t *testing.T, res ValidationResult, by map[string]validate.Result, check, details string) {
	t.Helper()
	if len(res.Skipped) > 0 {
		t.Errorf("checks skipped: %v (%v); want every check run", res.Skipped, res.SkipReasons)
	}
	for _, c := range res.Checks {
		if c.Check != check && c.Verdict != validate.Pass {
			t.Errorf("check %s: %s, want pass (%s)", c.Check, c.Verdict, c.Details())
		}
	}
	c := by[check]
	if c.Verdict != validate.Fail || res.Failed != 1 {
		t.Fatalf("check %s: %s, %d failed; want it alone failing", check, c.Verdict, res.Failed)
	}
	if got := c.Details(); got != details {
		t.Fatalf("check %s details:\n%s\nwant:\n%s", check, got, details)
	}
}

// keyShown is how findings name the key of order id: "order_id=<id>".
func keyShown(id int64) string { return fmt.Sprintf("order_id=%d", id) }

func keyOf(id int64) string {
	k, err := cdc.EncodeKey(nil, cdc.Int(id))
	if err != nil {
		panic(err)
	}
	return hex.EncodeToString(k)
}

func s(lsn uint64) string { return cdc.SeqOf(lsn, lsn).Hex() }

func order(id int, status string) string {
	return fmt.Sprintf(`{"order_id":%d,"status":%q}`, id, status)
}

// the clean stream: keys 1 and 2 on partition 0, key 3 on partition 1
func (f *valFixture) cleanStream() {
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(1, "new"), 100), pg("c", "null", order(2, "new"), 110),
		pg("u", order(1, "new"), order(1, "paid"), 120), pg("d", order(2, "new"), "null", 130),
		pg("c", "null", order(2, "again"), 140))
	f.produce(1, pg("r", "null", order(3, "old"), 50), pg("u", order(3, "old"), order(3, "new"), 125),
		pg("d", order(3, "new"), "null", 135))
}

func TestValidateClean(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
	f.apply(map[int32][2]int64{0: {3, 5}, 1: {2, 3}}, nil)
	res, by := f.validate()
	if res.Failed != 0 || len(res.Checks) != 6 || res.Skipped != nil {
		t.Fatalf("clean run: %+v", res)
	}
	// the second batch re-applied to a copy of the mirror after the first
	ra := by[validate.CheckReapply]
	if ra.Verdict != validate.Pass || !strings.HasPrefix(ra.Scope, "batches 2 to 2 (1, 3 bronze records) re-applied to shop.orders_reapply_") ||
		ra.Expected != "mirror: 3 rows, checksum 410da1958934659a9f6e2fc21b950477" || ra.Observed != "re-applied: 3 rows, checksum 410da1958934659a9f6e2fc21b950477" {
		t.Errorf("reapply: %+v", ra)
	}
	if tbl, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Scratch(res.RunID, 1).Mirror()); err != nil || tbl != nil {
		t.Errorf("the scratch table is left: %v %v", tbl != nil, err)
	}
	want := map[string][2]string{
		validate.CheckPartitioning: {"8 events of 3 keys", "0 keys in more than one partition"},
		validate.CheckTransitions:  {"8 events of 3 keys, 0 truncates", "0 keys with an illegal transition"},
		validate.CheckContinuity:   {"2 partitions", "0 violations; 0 holes (0 below the log start, unverified; 0 records missing)"},
		validate.CheckWatermark:    {"2 mirror snapshots", "applied position lsn 0/8C, mirror max _seq lsn 0/8C"},
		validate.CheckReplay:       {"8 events of 3 keys, 3 mirror rows, 0 purged keys, 0 pending keys left out", "0 keys a replay would change"},
	}
	for check, w := range want {
		if c := by[check]; c.Verdict != validate.Pass || c.Scope != w[0] || c.Observed != w[1] {
			t.Errorf("%s: %s / %q / %q, want pass / %q / %q", check, c.Verdict, c.Scope, c.Observed, w[0], w[1])
		}
	}
	if res.SourceWatermark != s(140) || res.EventTimeWatermark.UnixMilli() != 1767258000000+140 {
		t.Fatalf("watermarks %s %s", res.SourceWatermark, res.EventTimeWatermark)
	}
	// one row per check in the validation table
	tbl, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Validation())
	if err != nil || tbl == nil {
		t.Fatalf("validation table: %v %v", tbl, err)
	}
	rows, _, err := lake.ReadRows(f.ctx, tbl, []string{validation.ValCheck})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s %s %s", r[validation.ValCheck], r[validation.ValVerdict], r[validation.ValRunID]))
	}
	wantRows := []string{"continuity pass run-TestValidateClean", "partitioning pass run-TestValidateClean", "reapply pass run-TestValidateClean",
		"replay pass run-TestValidateClean", "transitions pass run-TestValidateClean", "watermark pass run-TestValidateClean"}
	if !reflect.DeepEqual(got, wantRows) {
		t.Fatalf("validation rows %q, want %q", got, wantRows)
	}
}

// The event-time watermark waits for the partition still behind:
// partition 0 is applied to its end (newest change at 140), partition 1
// only up to its update at 125 (its delete at 135 is still in Kafka), so
// every partition is complete up to 125, not 140. No check fails.
func TestValidateEventTimeWatermarkWaitsForLaggingPartition(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 1}}, nil)
	f.apply(map[int32][2]int64{0: {3, 5}, 1: {1, 2}}, nil)
	res, _ := f.validate()
	if res.Failed != 0 || len(res.Skipped) != 0 {
		t.Fatalf("run: %+v", res)
	}
	if got := res.EventTimeWatermark.UnixMilli(); got != 1767258000000+125 {
		t.Fatalf("event-time watermark %s (%d ms after the base), want 125 ms after it", res.EventTimeWatermark, got-1767258000000)
	}
	// caught up: the newest applied change
	f.apply(map[int32][2]int64{1: {2, 3}}, nil)
	if res, _ = f.validate(); res.Failed != 0 || res.EventTimeWatermark.UnixMilli() != 1767258000000+140 {
		t.Fatalf("caught up: %d failed, event-time watermark %s", res.Failed, res.EventTimeWatermark)
	}
}

// Key 1's update lands on partition 1 instead of 0.
func TestValidateKeyInTwoPartitions(t *testing.T) {
	f := newValFixture(t)
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(1, "new"), 100), pg("c", "null", order(2, "new"), 110))
	f.produce(1, pg("u", order(1, "new"), order(1, "paid"), 120), pg("c", "null", order(3, "new"), 130))
	f.apply(map[int32][2]int64{0: {0, 1}, 1: {0, 1}}, nil)
	f.apply(map[int32][2]int64{0: {1, 2}, 1: {1, 2}}, nil)
	res, by := f.validate()
	only(t, res, by, validate.CheckPartitioning, "key "+keyShown(1)+": events in partitions 0 (1 event), 1 (1 event)")
}

// A create for a key that exists, without a delete between.
func TestValidateDuplicateCreate(t *testing.T) {
	f := newValFixture(t)
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(5, "new"), 100), pg("c", "null", order(5, "again"), 110), pg("c", "null", order(6, "new"), 120))
	f.apply(map[int32][2]int64{0: {0, 2}}, nil)
	f.apply(map[int32][2]int64{0: {2, 3}}, nil)
	res, by := f.validate()
	only(t, res, by, validate.CheckTransitions, fmt.Sprintf("key %s: create after a create without a delete between (c at %s, partition 0 offset 0; then c at %s, partition 0 offset 1)", keyShown(5), s(100), s(110)))
}

// Changes the mirror committed are lost from it (the mirror rolled back
// to an earlier Iceberg snapshot, its recorded position kept): key 1's
// update at 150 and key 2's delete at 160 are in bronze below the
// mirror's position, the mirror has their older rows again, and only the
// replay check fails, naming both keys. Records at or above the position
// (a batch whose mirror commit is still to come) are not checked.
func TestValidateLostChanges(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
	f.apply(map[int32][2]int64{0: {3, 5}, 1: {2, 3}}, nil)
	mirror, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	before := mirror.CurrentSnapshot().SnapshotID
	pg := sample.PostgresChange
	f.produce(0, pg("u", order(1, "paid"), order(1, "shipped"), 150), pg("d", order(2, "again"), "null", 160))
	f.apply(map[int32][2]int64{0: {5, 7}}, nil)
	if mirror, err = lake.LoadTable(f.ctx, f.a.Catalog, f.name.Mirror()); err != nil {
		t.Fatal(err)
	}
	tx := mirror.NewTransaction()
	if err := tx.RollbackToSnapshot(before); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	res, by := f.validate()
	only(t, res, by, validate.CheckReplay, fmt.Sprintf("key %s: mirror row at %s, below its last change (op u) at %s, partition 0 offset 5: a lost change\n"+
		"key %s: mirror row at %s, below its last change (op d) at %s, partition 0 offset 6: a lost change", keyShown(1), s(120), s(150), keyShown(2), s(140), s(160)))
}

// A batch's mirror commit holds a change bronze never recorded (a
// write-path fault: say, an event of another batch applied with this
// one): key 9 created at 125 in batch 2. Bronze, its coverage, the
// transitions and the watermark are all as they should be, and the
// replay check looks only at the keys bronze holds; only re-applying
// batch 2 from bronze to a copy of the mirror before it shows the row
// that should not be there.
func TestValidatePhantomChange(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
	f.phantom = []sample.Message{sample.PostgresChange("c", "null", order(9, "ghost"), 125)}
	f.apply(map[int32][2]int64{0: {3, 5}, 1: {2, 3}}, nil)
	res, by := f.validate()
	only(t, res, by, validate.CheckReapply, fmt.Sprintf("key %s: the mirror holds a row (_seq %s) the re-apply does not produce", keyShown(9), s(125)))
	if c := by[validate.CheckReapply]; c.Expected == c.Observed || !strings.HasPrefix(c.Observed, "re-applied: 3 rows, checksum 410da1958934659a9f6e2fc21b950477") {
		t.Fatalf("reapply expected %q, observed %q", c.Expected, c.Observed)
	}
}

// Bronze lacks records Kafka holds inside a batch's range: a hole that is
// not Kafka's own.
func TestValidateHoleInBronze(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 3}}, map[int32][]int64{0: {2}})
	f.apply(map[int32][2]int64{0: {3, 5}}, map[int32][]int64{0: {4}})
	res, by := f.validate()
	// each hole, then the key of each change Kafka holds there (key 1's
	// update at offset 2, key 2's create at offset 4)
	want := "partition 0: offsets [2, 3) are missing from bronze but Kafka holds 1 records there (first 2)\n" +
		"key " + keyShown(1) + ": its change at partition 0 offset 2 is missing from bronze (Kafka holds it)\n" +
		"partition 0: offsets [4, 5) are missing from bronze but Kafka holds 1 records there (first 4)\n" +
		"key " + keyShown(2) + ": its change at partition 0 offset 4 is missing from bronze (Kafka holds it)"
	only(t, res, by, validate.CheckContinuity, want)
	// the same, each hole in a fetch of its own
	defer func(w int64) { holeWindow = w }(holeWindow)
	holeWindow = 1
	res, by = f.validate()
	only(t, res, by, validate.CheckContinuity, want)
}

// Every event of partition 1 is lost before bronze and the mirror (a
// consumer that skipped the partition's records while moving its
// position): the continuity check alone fails, naming the hole and, one
// by one, key 3's create, update and delete that Kafka still holds.
func TestValidatePartitionDropped(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 3}}, map[int32][]int64{1: {0, 1, 2}})
	f.apply(map[int32][2]int64{0: {3, 5}}, nil)
	res, by := f.validate()
	only(t, res, by, validate.CheckContinuity,
		"partition 1: offsets [0, 3) are missing from bronze but Kafka holds 3 records there (first 0)\n"+
			"key "+keyShown(3)+": its change at partition 1 offset 0 is missing from bronze (Kafka holds it)\n"+
			"key "+keyShown(3)+": its change at partition 1 offset 1 is missing from bronze (Kafka holds it)\n"+
			"key "+keyShown(3)+": its change at partition 1 offset 2 is missing from bronze (Kafka holds it)")
}

// A batch starts past where the previous one ended: offsets never read.
func TestValidateBatchesDoNotJoin(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 2}, 1: {0, 3}}, nil)
	f.apply(map[int32][2]int64{0: {3, 5}}, nil)
	res, by := f.validate()
	only(t, res, by, validate.CheckContinuity, "partition 0: offsets [2, 3) were never read: the batches before and after them do not join up")
}

// Retention deleted records the table had not read yet.
func TestValidateDeletedBeforeRead(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 1}, 1: {0, 3}}, nil)
	f.apply(map[int32][2]int64{0: {1, 2}}, nil)
	if err := f.cluster.DeleteRecords(f.spec.Topic, 0, 4); err != nil {
		t.Fatal(err)
	}
	res, by := f.validate()
	only(t, res, by, validate.CheckContinuity, "partition 0: the table's position 2 is below the log start 4: records [2, 4) were deleted before they were read")
}

// The consumer is reset to an older offset: after two batches, a third
// re-reads [1, 3) and records position 3 after 5.
func TestValidateConsumerReset(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
	f.apply(map[int32][2]int64{0: {3, 5}, 1: {2, 3}}, nil)
	f.apply(map[int32][2]int64{0: {1, 3}}, nil)
	res, by := f.validate()
	tbl, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	// the re-read changed no row: batch 3 committed to the properties only
	only(t, res, by, validate.CheckWatermark, fmt.Sprintf("partition 0: the table properties (batch 3) moved the position back from 5 (snapshot %d (batch 2)) to 3: a consumer reset", tbl.CurrentSnapshot().SnapshotID))
}

// Another writer with stale bookkeeping set the mirror's applied position
// back, and a batch of older positions committed after it: the recorded position went back, and the mirror
// holds a row above it.
func TestValidateWatermarkBackwards(t *testing.T) {
	f := newValFixture(t)
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(1, "new"), 500), pg("c", "null", order(9, "new"), 300))
	f.apply(map[int32][2]int64{0: {0, 1}}, nil)
	tbl, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	first := tbl.CurrentSnapshot().SnapshotID
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(map[string]string{lake.PropAppliedPosition: s(100)}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.apply(map[int32][2]int64{0: {1, 2}}, nil)
	if tbl, err = lake.LoadTable(f.ctx, f.a.Catalog, f.name.Mirror()); err != nil {
		t.Fatal(err)
	}
	res, by := f.validate()
	only(t, res, by, validate.CheckWatermark, strings.Join([]string{
		fmt.Sprintf("snapshot %d (batch 2) records applied position lsn 0/12C, below lsn 0/1F4 of snapshot %d (batch 1)", tbl.CurrentSnapshot().SnapshotID, first),
		fmt.Sprintf("a mirror row has _seq %s (lsn 0/1F4), above the recorded applied position lsn 0/12C", s(500)),
	}, "\n"))
	if res.SourceWatermark != s(300) {
		t.Fatalf("source watermark %s", res.SourceWatermark)
	}
}

// produceTxn writes msgs to partition p in one transaction, committed or
// aborted: Kafka adds a control marker after them, and read-committed
// consumers never see an aborted transaction's records.
func (f *valFixture) produceTxn(p int32, commit bool, msgs ...sample.Message) {
	f.t.Helper()
	tx, err := kgo.NewClient(kgo.SeedBrokers(f.cluster.ListenAddrs()...), kgo.TransactionalID(fmt.Sprintf("tx-%d", len(f.log[p]))),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		f.t.Fatal(err)
	}
	for _, m := range msgs {
		if err := tx.ProduceSync(f.ctx, &kgo.Record{Topic: f.spec.Topic, Partition: p, Value: m.Value}).FirstErr(); err != nil {
			f.t.Fatal(err)
		}
	}
	end := kgo.TryAbort
	if commit {
		end = kgo.TryCommit
	}
	if err := tx.EndTransaction(f.ctx, end); err != nil {
		f.t.Fatal(err)
	}
	// the log now holds the records and a marker: keep offsets aligned
	f.log[p] = append(f.log[p], msgs...)
	f.log[p] = append(f.log[p], sample.Message{})
}

// Holes that are Kafka's own (an aborted transaction's records, the
// commit and abort markers) pass: the batch's range covers them, bronze
// holds the records a read-committed fetch returns, and Kafka returns
// nothing in the holes when asked again.
func TestValidateTransactionHolesPass(t *testing.T) {
	f := newValFixture(t)
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(1, "new"), 100))                    // 0
	f.produceTxn(0, false, pg("c", "null", order(7, "never"), 105))        // 1, abort marker 2
	f.produceTxn(0, true, pg("u", order(1, "new"), order(1, "paid"), 110)) // 3, commit marker 4
	f.produce(0, pg("c", "null", order(2, "new"), 120))                    // 5
	recs, err := f.a.Kafka.Fetch(f.ctx, f.spec.Topic, []kafka.Range{{Partition: 0, From: 0, To: 6}})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range recs {
		got = append(got, r.Offset)
	}
	if !reflect.DeepEqual(got, []int64{0, 3, 5}) {
		t.Fatalf("read-committed offsets %v", got)
	}
	f.apply(map[int32][2]int64{0: {0, 6}}, map[int32][]int64{0: {1, 2, 4}})
	res, by := f.validate()
	if res.Failed != 0 {
		t.Fatalf("failed: %+v", res.Checks)
	}
	if c := by[validate.CheckContinuity]; c.Observed != "0 violations; 2 holes (0 below the log start, unverified; 0 records missing)" {
		t.Fatalf("continuity: %+v", c)
	}
	// each hole in a fetch of its own: a fetch of [4, 5) holds only the commit marker
	defer func(w int64) { holeWindow = w }(holeWindow)
	holeWindow = 2
	if res, _ := f.validate(); res.Failed != 0 {
		t.Fatalf("failed with windows of 2: %+v", res.Checks)
	}
}

// A truncate removes every row: a create after it is legal, and bronze's
// truncate events reach the transitions check.
func TestValidateTruncateResetsKeys(t *testing.T) {
	f := newValFixture(t)
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(1, "new"), 100), pg("t", "null", "null", 110), pg("c", "null", order(1, "again"), 120))
	f.apply(map[int32][2]int64{0: {0, 3}}, nil)
	res, by := f.validate()
	if res.Failed != 0 || by[validate.CheckTransitions].Scope != "2 events of 1 key, 1 truncate" {
		t.Fatalf("after a truncate: %+v", res.Checks)
	}
}

// No check fails on a clean pipeline over a faulty Debezium stream
// (redeliveries after connector restarts, late and swapped records,
// deletes of rows never seen, tombstones) on two partitions keyed by
// order id, applied in small batches.
func TestValidateFaultyStreamPasses(t *testing.T) {
	f := newValFixture(t)
	stream := sample.Generate(sample.Options{Seed: 7, Inserts: 60, Updates: 120, Deletes: 20, Duplicates: 15, Late: 10,
		OutOfOrder: 10, UnseenDeletes: 5, Tombstones: true, Envelope: true, ReplicaIdentityFull: true})
	changes, keys := 0, map[int64]bool{}
	for _, m := range stream.Delivered {
		f.produce(int32(m.OrderID%2), m)
		if !m.Tombstone() {
			changes++
			keys[m.OrderID] = true
		}
	}
	for done := false; !done; {
		done = true
		r := map[int32][2]int64{}
		for _, p := range []int32{0, 1} {
			if n := int64(len(f.log[p])); f.pos[p] < n {
				r[p] = [2]int64{f.pos[p], min(f.pos[p]+17, n)}
				done = false
			}
		}
		if !done {
			f.apply(r, nil)
		}
	}
	res, by := f.validate()
	if res.Failed != 0 {
		for _, c := range res.Checks {
			t.Errorf("%s %s: %s\n%s", c.Check, c.Verdict, c.Observed, c.Details())
		}
		t.FailNow()
	}
	if want := fmt.Sprintf("%d events of %d keys", changes, len(keys)); by[validate.CheckPartitioning].Scope != want {
		t.Fatalf("partitioning scope %q, want %q", by[validate.CheckPartitioning].Scope, want)
	}
	// the last five batches re-applied to a copy of the mirror before them,
	// the 6 keys whose late changes need their past changes rebuilt
	if c := by[validate.CheckReapply]; !strings.HasPrefix(c.Scope, "batches 4 to 8 (5, 143 bronze records) re-applied") ||
		c.Expected != "mirror: 65 rows, checksum 64ce7129ce2cb61746f7351bbd1ee1c7" || c.Observed != "re-applied: 65 rows, checksum 64ce7129ce2cb61746f7351bbd1ee1c7" || !strings.HasSuffix(c.Scope, "; 0 purged keys left out") {
		t.Fatalf("reapply: %+v", c)
	}
}

// TestAppliedRecords: the replay check takes only bronze records below
// the mirror's recorded end offsets, none before its first batch.
func TestAppliedRecords(t *testing.T) {
	recs := []validate.Record{{Key: "a", Partition: 0, Offset: 4}, {Key: "b", Partition: 0, Offset: 5}, {Key: "c", Partition: 1, Offset: 0}, {Key: "d", Partition: 2, Offset: 0}}
	got := appliedRecords(recs, lake.Checkpoint{BatchSeq: 3, EndOffsets: lake.Offsets{0: 5, 1: 1}})
	if len(got) != 2 || got[0].Key != "a" || got[1].Key != "c" {
		t.Fatalf("applied records %+v, want a and c", got)
	}
	if got := appliedRecords(recs, lake.Checkpoint{}); len(got) != 0 {
		t.Fatalf("before the first batch: %+v, want none", got)
	}
}

// allPass fails the test unless every check of the run passed.
func allPass(t *testing.T, res ValidationResult) {
	t.Helper()
	for _, c := range res.Checks {
		if c.Verdict != validate.Pass {
			t.Errorf("check %s: %s (%s)\n%s", c.Check, c.Verdict, c.Scope, c.Details())
		}
	}
}

// A truncate inside the re-applied range replays as the batch applied
// it: the scratch table soft-deletes the rows below it as the mirror did.
func TestValidateReapplyTruncate(t *testing.T) {
	f := newValFixture(t)
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(1, "new"), 100), pg("c", "null", order(2, "new"), 110))
	f.apply(map[int32][2]int64{0: {0, 2}}, nil)
	f.produce(0, pg("t", "null", "null", 120))
	f.apply(map[int32][2]int64{0: {2, 3}}, nil)
	f.produce(0, pg("c", "null", order(3, "new"), 130))
	f.apply(map[int32][2]int64{0: {3, 4}}, nil)
	res, by := f.validate()
	allPass(t, res)
	if c := by[validate.CheckReapply]; !strings.HasPrefix(c.Scope, "batches 2 to 3 (2, 2 bronze records)") || !strings.HasPrefix(c.Observed, "re-applied: 3 rows") {
		t.Fatalf("reapply: %+v", c)
	}
}

// A late update of a key deleted earlier under the default replica
// identity (the delete's before image holds the key only): the
// pipeline's local state holds the key's past changes and weaves the late
// one in at once; the scratch writer, built from the seeded table, marks
// the key pending, and the check rebuilds it from its bronze records as
// RebuildKeys would: both tables then hold key 1 soft-deleted at 130 with
// the late update's values.
func TestValidateReapplyLateKeyRebuilt(t *testing.T) {
	f := newValFixture(t)
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(1, "new"), 100), pg("c", "null", order(2, "new"), 101))
	f.apply(map[int32][2]int64{0: {0, 2}}, nil)
	f.produce(0, pg("d", `{"order_id":1}`, "null", 130))
	f.apply(map[int32][2]int64{0: {2, 3}}, nil)
	f.produce(0, pg("u", `{"order_id":1}`, order(1, "paid"), 120)) // late: below the delete
	f.apply(map[int32][2]int64{0: {3, 4}}, nil)
	res, by := f.validate()
	allPass(t, res)
	c := by[validate.CheckReapply]
	if !strings.HasPrefix(c.Scope, "batches 2 to 3 (2, 2 bronze records)") || c.Expected != "mirror: 2 rows, checksum 620dc0c5006c0886b75ac0fe7e61d79a" || c.Observed != "re-applied: 2 rows, checksum 620dc0c5006c0886b75ac0fe7e61d79a" {
		t.Fatalf("reapply: %+v", c)
	}
	rows, _, err := lake.ReadImages(f.ctx, f.a.Catalog, f.name.Mirror(), 0, f.spec.KeyColumns)
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[keyOf(1)]; r.Seq != s(130) || !r.Deleted || r.Digest != digestOf(t, 1, "paid") {
		t.Fatalf("mirror row of key 1: %+v, want soft-deleted at %s with status paid (%s)", r, s(130), digestOf(t, 1, "paid"))
	}
}

// The demo's own stream (default replica identity, late and out-of-order
// deliveries, redeliveries, tombstones) over two partitions, in batches
// of 5, 10 and 20 records a partition: every check passes.
func TestValidateReapplyDemoStream(t *testing.T) {
	for _, n := range []int64{5, 10, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			f := newValFixture(t)
			stream := sample.Generate(sample.Options{Seed: 1, Inserts: 40, Updates: 60, Deletes: 10, Duplicates: 8,
				Late: 6, OutOfOrder: 6, UnseenDeletes: 3, Tombstones: true, Envelope: true})
			for _, m := range stream.Delivered {
				f.produce(int32(m.OrderID%2), m)
			}
			for done := false; !done; {
				done = true
				r := map[int32][2]int64{}
				for _, p := range []int32{0, 1} {
					if l := int64(len(f.log[p])); f.pos[p] < l {
						r[p] = [2]int64{f.pos[p], min(f.pos[p]+n, l)}
						done = false
					}
				}
				if !done {
					f.apply(r, nil)
				}
			}
			res, by := f.validate()
			allPass(t, res)
			if by[validate.CheckReapply].Check == "" {
				t.Fatalf("reapply did not run: %v", res.SkipReasons)
			}
		})
	}
}

// A key purged once and created again is compared like any other: a
// change bronze never recorded on it fails reapply.
func TestValidateReapplyPurgedKeyRecreated(t *testing.T) {
	f := newValFixture(t)
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(9, "old"), 100), pg("d", `{"order_id":9}`, "null", 200))
	f.apply(map[int32][2]int64{0: {0, 2}}, nil)
	if _, err := f.a.Maintain(f.ctx, MaintenanceRequest{Spec: f.spec, Job: JobPurge, Retention: 24 * time.Hour, RetentionFloor: time.Hour}); err != nil {
		t.Fatal(err)
	}
	f.produce(0, pg("c", "null", order(9, "new"), 300), pg("c", "null", order(1, "new"), 310))
	f.apply(map[int32][2]int64{0: {2, 4}}, nil)
	f.produce(0, pg("c", "null", order(2, "new"), 400))
	f.phantom = []sample.Message{pg("u", order(9, "new"), order(9, "ghost"), 450)}
	f.apply(map[int32][2]int64{0: {4, 5}}, nil)
	res, by := f.validate()
	only(t, res, by, validate.CheckReapply, fmt.Sprintf("key %s: _seq %s in the mirror, %s re-applied; values differ (digest %s in the mirror, %s re-applied)", keyShown(9),
		s(450), s(300), digestOf(t, 9, "ghost"), digestOf(t, 9, "new")))
}

// digestOf is merge.RowHash of an orders row as the mirror stores it.
func digestOf(t *testing.T, id int64, status string) string {
	t.Helper()
	return merge.RowHash(&cdc.Row{Cols: cdc.NewColumns([]string{"order_id", "status"}), Vals: []cdc.Value{cdc.Int(id), cdc.String(status)}}, nil)
}

// A mirror holding two rows of one key (one appended outside the
// pipeline) is a reapply finding, not an error of the run.
func TestValidateReapplyDuplicateKey(t *testing.T) {
	f := newValFixture(t)
	pg := sample.PostgresChange
	f.produce(0, pg("c", "null", order(1, "new"), 100), pg("c", "null", order(2, "new"), 110))
	f.apply(map[int32][2]int64{0: {0, 2}}, nil)
	tbl, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	_, it, err := tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("order_id"), int64(1)))).ToArrowRecords(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	for r, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	rdr, err := array.NewRecordReader(recs[0].Schema(), recs)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.Append(f.ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.a.tables = map[string]*tableState{} // the worker restarts
	f.produce(0, pg("c", "null", order(3, "new"), 120))
	f.apply(map[int32][2]int64{0: {2, 3}}, nil)
	f.produce(0, pg("c", "null", order(4, "new"), 130))
	f.apply(map[int32][2]int64{0: {3, 4}}, nil)
	res, by := f.validate()
	only(t, res, by, validate.CheckReapply, fmt.Sprintf("key %s: more than one row of the key: mirror and re-applied", keyShown(1)))
}

// Scratch tables that dead or abandoned attempts left are dropped once
// they are older than the limit; a table that only looks like one (no
// lakemirror.scratch-of naming this table) is left alone.
func TestDropStaleScratch(t *testing.T) {
	f := newValFixture(t)
	f.cleanStream()
	f.apply(map[int32][2]int64{0: {0, 3}, 1: {0, 2}}, nil)
	mirror, err := lake.LoadTable(f.ctx, f.a.Catalog, f.name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	left := f.name.Scratch("abandoned-run", 3)
	if err := lake.SeedScratch(f.ctx, f.a.Catalog, f.name, left, mirror.CurrentSnapshot().SnapshotID); err != nil {
		t.Fatal(err)
	}
	lookalike := []string{"shop", "orders_reapply_users"}
	if _, err := f.a.Catalog.CreateTable(f.ctx, lookalike, mirror.Schema()); err != nil {
		t.Fatal(err)
	}
	if n, err := lake.DropStaleScratch(f.ctx, f.a.Catalog, f.name, time.Hour, time.Now()); n != 0 || err != nil {
		t.Fatalf("young scratch table: dropped %d, %v", n, err)
	}
	if n, err := lake.DropStaleScratch(f.ctx, f.a.Catalog, f.name, time.Hour, time.Now().Add(2*time.Hour)); n != 1 || err != nil {
		t.Fatalf("stale scratch table: dropped %d, %v", n, err)
	}
	for ident, want := range map[string]bool{lake.IdentString(left.Mirror()): false, "shop.orders_reapply_users": true, "shop.orders": true} {
		tbl, err := lake.LoadTable(f.ctx, f.a.Catalog, strings.Split(ident, "."))
		if err != nil || (tbl != nil) != want {
			t.Errorf("%s exists %v (%v), want %v", ident, tbl != nil, err, want)
		}
	}
}
