package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/kafka"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Breaker tests of the group's consistent cut (issue 37). Each names
// what it attacks; a failing one is a finding.

// breakEnv is a group env that records the group-cut signals it sends
// ("<workflow id> <op> ...") and the PublishCut requests.
func breakEnv(t *testing.T, kc *kafka.Client, sent *[]string, published *[]payload.PublishCutRequest) *testsuite.TestWorkflowEnvironment {
	env := groupEnv(t, kc)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		*sent = append(*sent, args.String(1)+" "+args.Get(4).(string))
	})
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(func(_ context.Context, req payload.PublishCutRequest) (payload.PublishCutResult, error) {
		*published = append(*published, req)
		var tagged []payload.CutTagged
		for i, tb := range req.Tables {
			tagged = append(tagged, payload.CutTagged{Table: tb, Mirror: int64(100*req.Number + int64(i))})
		}
		return payload.PublishCutResult{Tagged: tagged}, nil
	})
	return env
}

// nextInput is the continued run's input of env's run, through the
// default data converter (JSON: empty maps left out come back nil).
func nextInput(t *testing.T, env *testsuite.TestWorkflowEnvironment) GroupInput {
	t.Helper()
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next GroupInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	return next
}

// Two tables of one group that mirror the same data collection (two
// lakemirror tables of one topic, e.g. one per namespace) are one table
// to the Tracker: the events one of them applied complete a transaction
// for both, and per position the highest fetched position counts for
// both. A breaker's run (2026-12-07) saw cut 1 published while one of
// them had applied none of the transaction's events (and per position,
// fetched nothing). Now (cutSharedVersion) no cut begins while two tables
// share a collection: no freeze is sent, nothing is published, and the
// holds say why and how to go on, with and without a transaction topic.
func TestBreakSharedCollectionHoldsCuts(t *testing.T) {
	const topic = "srv.transaction"
	for _, perPosition := range []bool{false, true} {
		t.Run(fmt.Sprint("per position ", perPosition), func(t *testing.T) {
			var kc *kafka.Client
			in := GroupInput{Group: "shop", RoundsPerRun: 3}
			a := GroupMember{Table: "shop.accounts", Collection: "public.accounts"}
			b := GroupMember{Table: "archive.accounts", Collection: "public.accounts"}
			if !perPosition {
				kc = txTopic(t, topic, endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":2}`))
				in.TransactionTopic, a.TransactionTopic, b.TransactionTopic = topic, topic, topic
			}
			var sent []string
			var published []payload.PublishCutRequest
			env := breakEnv(t, kc, &sent, &published)
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(SignalGroupRegister, a)
				env.SignalWorkflow(SignalGroupRegister, b)
				// shop.accounts applies both events of 571; archive.accounts nothing
				env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: a, BatchSeq: 1, Own: true,
					TxSeen:      map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 2}}, Last: cdc.PostgresSeq(900, 901).Hex()}},
					FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 901).Hex()}, Partitions: []int32{0}})
			}, 10*time.Second)
			checked := 0
			env.RegisterDelayedCallback(func() {
				c := queryCut(t, env)
				require.Empty(t, sent, "no cut begins")
				require.Empty(t, published)
				require.Nil(t, c.Pending)
				note := `tables archive.accounts, shop.accounts all mirror data collection "public.accounts", and a group counts a collection's events once, ` +
					`so it cannot tell that each of them holds a transaction: no cut is taken while they share it; ` +
					`stop all but one of them and start them again without --group (or in a group of their own)`
				var shared []GroupHold // per position the holds also name the tables at the lowest position
				for _, h := range c.Holds {
					if h.Note != "" {
						shared = append(shared, h)
					}
				}
				require.Equal(t, []GroupHold{{Table: "archive.accounts", Collection: "public.accounts", Note: note},
					{Table: "shop.accounts", Collection: "public.accounts", Note: note}}, shared)
				checked++
			}, 130*time.Second)
			env.ExecuteWorkflow(GroupWorkflow, in)
			require.Equal(t, 1, checked)
		})
	}
}

// A pending cut carried across continue-as-new in each phase (some
// tables frozen; bound with a table's batch Reported; published), every
// state through the JSON data converter (Confirmed and Foreign set): it
// goes on to one publish at the W it was bound at, and the next run does
// not publish it again.
func TestBreakCutAcrossContinueAsNewEveryPhase(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":2},{"data_collection":"public.transfers","event_count":1},{"data_collection":"public.audit","event_count":1}`),
		endValue(572, 2000, 2001, `{"data_collection":"public.accounts","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	transfers := GroupMember{Table: "shop.transfers", Collection: "public.transfers", TransactionTopic: topic, Named: true}
	wa, wt := "lakemirror-table-shop.accounts", "lakemirror-table-shop.transfers"
	w1000 := pgHex(1000)
	var sent []string
	var published []payload.PublishCutRequest
	// run 1: CutEvery 2 s (a pending cut's rounds count), the cut begins
	// at 2 s, accounts freezes at 3 s, the run continues as new at 4 s
	env := breakEnv(t, kc, &sent, &published)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, transfers)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, Own: true,
			TxSeen:      map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 1}}, Last: cdc.PostgresSeq(900, 901).Hex()}},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 901).Hex()}, Partitions: []int32{0}})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 1, Watermark: cdc.PostgresSeq(900, 901).Hex()})
	}, 3*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, CutEvery: 2 * time.Second, RoundsPerRun: 2})
	require.Equal(t, []string{wa + " freeze 1", wt + " freeze 1"}, sent)
	next := nextInput(t, env)
	require.NotNil(t, next.State.Pending)
	require.Equal(t, map[string]string{"shop.accounts": cdc.PostgresSeq(900, 901).Hex()}, next.State.Pending.Frozen)
	require.Equal(t, []string{"public.audit"}, next.State.Foreign)

	// run 2: transfers freezes (bound at 1000), accounts applies its
	// second event (Reported); continues as new bound, unpublished
	sent = nil
	env = breakEnv(t, kc, &sent, &published)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Frozen: 1})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 2,
			TxSeen:      map[string]payload.TxSeen{"571": {Orders: [][2]int64{{2, 2}}, Last: cdc.PostgresSeq(900, 902).Hex()}},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 902).Hex()}, Partitions: []int32{0}})
	}, time.Second)
	env.ExecuteWorkflow(GroupWorkflow, next)
	require.Equal(t, []string{wa + " bound 1 " + w1000, wt + " bound 1 " + w1000}, sent)
	require.Empty(t, published)
	next = nextInput(t, env)
	require.NotNil(t, next.State.Pending)
	require.Equal(t, w1000, next.State.Pending.W)
	require.Contains(t, next.State.Pending.Reported, "shop.accounts")

	// run 3: transfers applies its event: published at 1000 once, released
	sent = nil
	env = breakEnv(t, kc, &sent, &published)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, BatchSeq: 1, Own: true,
			TxSeen:      map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 1}}, Last: cdc.PostgresSeq(900, 903).Hex()}},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 903).Hex()}, Partitions: []int32{0}})
	}, time.Second)
	env.ExecuteWorkflow(GroupWorkflow, next)
	require.Len(t, published, 1)
	require.Equal(t, w1000, published[0].W)
	require.Equal(t, int64(1), published[0].Number)
	require.Equal(t, []string{wa + " release 1", wt + " release 1"}, sent[:2])
	next = nextInput(t, env)
	require.NotNil(t, next.State.Published)

	// run 4: nothing to publish again at 1000; the next attempt is cut 2
	sent = nil
	env = breakEnv(t, kc, &sent, &published)
	env.ExecuteWorkflow(GroupWorkflow, next)
	require.Len(t, published, 1)
	for _, s := range sent {
		require.NotContains(t, s, " bound 1 ")
	}
}

// Late, repeated and stale cut reports: after attempt 1 was given up
// (transfers did not freeze), attempt 1's frozen and refused reports
// arrive during attempt 2, accounts' frozen report twice, a frozen
// report after the bound and a refusal after the publish: none gives a
// cut up or changes its W; cut 1 is published once, at the END above the
// watermarks.
func TestBreakStaleCutReports(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":1},{"data_collection":"public.transfers","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic, Named: true}
	transfers := GroupMember{Table: "shop.transfers", Collection: "public.transfers", TransactionTopic: topic, Named: true}
	var sent []string
	var published []payload.PublishCutRequest
	env := breakEnv(t, kc, &sent, &published)
	wm := cdc.PostgresSeq(900, 901).Hex()
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, transfers)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1,
			TxSeen:      map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 1}}, Last: wm}},
			FetchedPast: map[int32]string{0: wm}, Partitions: []int32{0}})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 1, Watermark: wm})
	}, 11*time.Second)
	checked := 0
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, int64(1), c.Aborts, c.LastAbort)
		require.NotNil(t, c.Pending)
		require.Equal(t, int64(2), c.Pending.Attempt)
		// attempt 1's late reports, accounts' twice
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Refused: 1})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Frozen: 1, Watermark: cdc.PostgresSeq(5000, 5000).Hex()})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 2, Watermark: wm})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 2, Watermark: wm})
		checked++
	}, 135*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, int64(1), c.Aborts, c.LastAbort)
		require.NotNil(t, c.Pending)
		require.Equal(t, "", c.Pending.W)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Frozen: 2})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Frozen: 2, Watermark: cdc.PostgresSeq(5000, 5000).Hex()})
		checked++
	}, 137*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.NotNil(t, c.Pending)
		require.Equal(t, pgHex(1000), c.Pending.W)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, BatchSeq: 1,
			TxSeen:      map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 1}}, Last: wm}},
			FetchedPast: map[int32]string{0: wm}, Partitions: []int32{0}})
		checked++
	}, 139*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Len(t, published, 1)
		require.Equal(t, pgHex(1000), published[0].W)
		require.Equal(t, int64(1), published[0].Number)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: transfers, Refused: 2})
		checked++
	}, 145*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, int64(1), c.Aborts, c.LastAbort)
		require.Equal(t, int64(1), c.Published.Number)
		checked++
	}, 150*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, RoundsPerRun: 3})
	require.Equal(t, 5, checked)
}

// A table started again without its group (starter stop, then start
// without --group: GroupMember is never taken out of the group, there is
// no signal for it) is still signalled by its old group's every cut
// attempt, and its workflow takes "freeze N" whatever its own group: it
// applies no batch until its own freeze timeout (2 minutes), every cut
// interval (a breaker's run, 2026-12-07). Now (cutUngroupedVersion) a
// table without a group ignores group-cut signals and goes on applying.
func TestBreakUngroupedTableIgnoresOldGroup(t *testing.T) {
	env, acts := newEnv(t)
	env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{Offsets: lake.Offsets{0: 0}}, nil).Once()
	env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(time.Second).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
		from := req.Offsets[0]
		return activities.Plan{Ranges: []lake.Range{{Partition: 0, From: from, To: from + 10}}, Records: 10,
			Offsets: lake.Offsets{0: from + 10}, HighWatermarks: lake.Offsets{0: from + 1000}}, nil
	})
	var applied []time.Duration
	start := env.Now()
	env.OnActivity(acts.ApplyBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, req activities.ApplyRequest) (activities.ApplyResult, error) {
		applied = append(applied, env.Now().Sub(start))
		r := req.Batch.Ranges[0]
		return activities.ApplyResult{BatchID: req.Batch.ID, BatchSeq: req.Batch.Seq, Records: int(r.To - r.From), EndOffsets: lake.Offsets{0: r.To}}, nil
	})
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupReport, mock.Anything).Return(nil)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", mock.Anything, mock.Anything).Return(nil)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupCut, "freeze 1") }, 10*time.Second)
	checked := 0
	env.RegisterDelayedCallback(func() {
		n := 0
		for _, d := range applied {
			if d > 15*time.Second && d < 100*time.Second {
				n++
			}
		}
		s := status(t, env)
		require.Nil(t, s.Cut, "a table without a group took its old group's freeze")
		require.NotZero(t, n, "a table without a group applied no batch for 85 s after its old group's freeze")
		checked++
	}, 100*time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 110*time.Second)
	env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: spec}) // spec: no group
	require.Equal(t, 1, checked)
}

// A quiet table started again with --group (it applied its share of a
// transaction before it joined, so its events never reached the group)
// held every cut of the group: the END counted an event it never
// reported, and with no new batch it reported nothing else either. A
// breaker's run (2026-12-07) saw the busy table held 39 of 58 minutes
// and no cut published. Now a frozen report carries what the table's
// mirror recorded (recovered when it started again): its positions
// fetched per partition, and, on a topic of one partition, its newest
// transaction's events up to the newest's data_collection_order
// (TableState.frozenTxSeen). The group takes them: the transaction is
// complete in it, and the cut is published at the newest END. A frozen
// report without them (a table of an older version, or a topic of more
// partitions) still holds the cut, and the hold names the table.
func TestBreakQuietTableJoinsAtItsFetchedPosition(t *testing.T) {
	const topic = "srv.transaction"
	for _, withFetched := range []bool{true, false} {
		t.Run(fmt.Sprint("fetched ", withFetched), func(t *testing.T) {
			kc := txTopic(t, topic,
				endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":1},{"data_collection":"public.ledger","event_count":1}`),
				endValue(572, 2000, 2001, `{"data_collection":"public.accounts","event_count":1}`))
			accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
			ledger := GroupMember{Table: "shop.ledger", Collection: "public.ledger", TransactionTopic: topic}
			var sent []string
			var published []payload.PublishCutRequest
			env := breakEnv(t, kc, &sent, &published)
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(SignalGroupRegister, accounts)
				env.SignalWorkflow(SignalGroupRegister, ledger)
				env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, Own: true,
					TxSeen: map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 1}}, Last: cdc.PostgresSeq(900, 901).Hex()},
						"572": {Orders: [][2]int64{{1, 1}}, Last: cdc.PostgresSeq(1900, 1901).Hex()}},
					FetchedPast: map[int32]string{0: cdc.PostgresSeq(1900, 1901).Hex()}, Partitions: []int32{0}})
			}, time.Second)
			env.RegisterDelayedCallback(func() {
				require.Equal(t, []string{"lakemirror-table-shop.accounts freeze 1", "lakemirror-table-shop.ledger freeze 1"}, sent)
				env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 1, Watermark: cdc.PostgresSeq(1900, 1901).Hex()})
				quiet := GroupReport{GroupMember: ledger, Frozen: 1, Watermark: cdc.PostgresSeq(950, 951).Hex()}
				if withFetched { // the ledger's row change of 571, applied before it joined (as TableState.frozenTxSeen sends it)
					quiet.FetchedPast, quiet.Partitions = map[int32]string{0: cdc.PostgresSeq(950, 951).Hex()}, []int32{0}
					quiet.TxSeen = map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 1}}, Last: cdc.PostgresSeq(950, 951).Hex()}}
				}
				env.SignalWorkflow(SignalGroupReport, quiet)
			}, 12*time.Second)
			checked := 0
			env.RegisterDelayedCallback(func() {
				c := queryCut(t, env)
				if withFetched {
					require.Len(t, published, 1)
					require.Equal(t, pgHex(2000), published[0].W)
					require.Equal(t, "572:2000", published[0].TxID)
					require.Equal(t, []string{"shop.accounts", "shop.ledger"}, published[0].Tables)
					require.Equal(t, int64(1), c.Published.Number)
					require.Empty(t, c.Holds)
				} else {
					require.Empty(t, published)
					require.Equal(t, []GroupHold{{Table: "shop.ledger", Collection: "public.ledger", TxID: "571:1000", Commit: pgHex(1000), Missing: 1}}, c.Holds)
				}
				checked++
			}, 25*time.Second)
			env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, CutEvery: 10 * time.Second, RoundsPerRun: 3})
			require.Equal(t, 1, checked)
		})
	}
}

// A table started again in a group (its state recovered from its
// mirror: applied position, positions fetched per partition, newest
// transaction) reports them when it freezes before its first batch: the
// watermark, the fetched positions with the topic's partitions, and, for
// a topic of one partition, the newest transaction's events up to its
// data_collection_order. A topic of two partitions gets no such claim.
func TestTableWorkflowFrozenReportCarriesRecoveredPositions(t *testing.T) {
	w := cdc.PostgresSeq(950, 951).Hex()
	for _, parts := range []int{1, 2} {
		t.Run(fmt.Sprint("partitions ", parts), func(t *testing.T) {
			grouped := spec
			grouped.Group, grouped.TransactionTopic = "shop", "srv.transaction"
			env, acts := newEnv(t)
			offsets, fetched := lake.Offsets{0: 5}, map[int32]string{0: w}
			if parts == 2 {
				offsets[1], fetched[1] = 3, cdc.PostgresSeq(940, 941).Hex()
			}
			env.OnActivity(acts.Recover, mock.Anything, mock.Anything).Return(activities.RecoverResult{BatchSeq: 4, Offsets: offsets, Source: "mirror",
				Watermark: w, FetchedPast: fetched, NewestTx: map[int32]payload.TxAt{0: {ID: "571", Order: 2, Seq: w}}}, nil).Once()
			env.OnActivity(acts.PlanBatch, mock.Anything, mock.Anything).After(time.Second).Return(func(_ context.Context, req activities.PlanRequest) (activities.Plan, error) {
				return activities.Plan{Offsets: req.Offsets, HighWatermarks: offsets}, nil
			})
			var reports []GroupReport
			env.OnSignalExternalWorkflow(mock.Anything, "lakemirror-group-shop", "", SignalGroupReport, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
				reports = append(reports, args.Get(4).(GroupReport))
			})
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupCut, "freeze 1") }, 1500*time.Millisecond)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalStop, nil) }, 5*time.Second)
			env.ExecuteWorkflow(TableWorkflow, TableInput{Spec: grouped})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			want := GroupReport{GroupMember: GroupMemberOf(grouped), Frozen: 1, Watermark: w, FetchedPast: fetched, Partitions: []int32{0}}
			if parts == 1 {
				want.TxSeen = map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 2}}, Last: w}}
			} else {
				want.Partitions = []int32{0, 1}
			}
			require.Equal(t, []GroupReport{want}, reports)
		})
	}
}

// A table stopped for good held every cut of its group: each attempt was
// given up ("does not run"), and nothing took it out (a breaker's run,
// 2026-12-07: 9 attempts given up in 10 intervals). Now the starter's
// leave signals the group (SignalGroupLeave): the table's tag consistent
// is removed (ActivityLeaveGroup), its data collection is no longer
// waited for, a report it sent before it stopped is ignored, and the next
// cut is published in the other table alone. Registered again, it joins.
func TestBreakStoppedMemberLeavesGroup(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":1},{"data_collection":"public.ledger","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	ledger := GroupMember{Table: "shop.ledger", Collection: "public.ledger", TransactionTopic: topic}
	env := groupEnv(t, kc)
	var sent []string
	env.OnSignalExternalWorkflow(mock.Anything, "lakemirror-table-shop.ledger", "", SignalGroupCut, mock.Anything).Return(fmt.Errorf("workflow execution already completed"))
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sent = append(sent, args.String(1)+" "+args.Get(4).(string))
	})
	var published []payload.PublishCutRequest
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(func(_ context.Context, req payload.PublishCutRequest) (payload.PublishCutResult, error) {
		published = append(published, req)
		return payload.PublishCutResult{Tagged: []payload.CutTagged{{Table: "shop.accounts", Mirror: 7}}}, nil
	})
	var leaves []payload.LeaveGroupRequest
	env.OnActivity(payload.ActivityLeaveGroup, mock.Anything, mock.Anything).Return(func(_ context.Context, req payload.LeaveGroupRequest) (payload.LeaveGroupResult, error) {
		leaves = append(leaves, req)
		return payload.LeaveGroupResult{Untagged: []string{"shop.ledger"}}, nil
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, ledger)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, Own: true,
			TxSeen:      map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 1}}, Last: cdc.PostgresSeq(900, 901).Hex()}},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 901).Hex()}, Partitions: []int32{0}})
	}, time.Second)
	checked := 0
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, int64(1), c.Aborts)
		require.Contains(t, c.LastAbort, "table shop.ledger does not run (workflow execution already completed): it holds the cut; start it, or take it out of the group (starter leave shop.ledger)")
		require.Empty(t, published)
		env.SignalWorkflow(SignalGroupLeave, "shop.ledger")
		// a report the ledger sent before it stopped, taken after the leave
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: ledger, BatchSeq: 3, FetchedPast: map[int32]string{0: cdc.PostgresSeq(10, 11).Hex()}, Partitions: []int32{0}})
		checked++
	}, 15*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, []payload.LeaveGroupRequest{{Group: "shop", Table: "shop.ledger"}}, leaves)
		require.Equal(t, []string{"shop.accounts"}, c.Tables)
		require.Equal(t, pgHex(1000), c.W, "571 no longer waits for the ledger")
		left := c.Left["shop.ledger"]
		require.Equal(t, GroupLeft{At: left.At, Collection: "public.ledger", Untagged: []string{"shop.ledger"}}, left)
		require.Contains(t, sent, "lakemirror-table-shop.accounts freeze 2")
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 2, Watermark: cdc.PostgresSeq(900, 901).Hex()})
		checked++
	}, 25*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Len(t, published, 1)
		require.Equal(t, payload.PublishCutRequest{Group: "shop", Number: 1, W: pgHex(1000), TxID: "571:1000", SourceTsMs: 1001, Tables: []string{"shop.accounts"}}, published[0])
		env.SignalWorkflow(SignalGroupRegister, ledger) // started again with the group
		checked++
	}, 28*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, []string{"shop.accounts", "shop.ledger"}, c.Tables)
		require.Empty(t, c.Left)
		checked++
	}, 29*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, CutEvery: 10 * time.Second, RoundsPerRun: 3})
	require.Equal(t, 4, checked)
}
