package workflows

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// keys are m's keys, sorted.
func keys[V any](m map[string]V) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Breaker tests of starter leave (issue 37; a breaker's run,
// 2026-12-07, on 863e2a7). Each failed on that code but the one marked
// "held up".

// The operator takes a stopped table out of its group (starter leave) and
// then starts it again with the group (starter start --group: a
// registration). Both signals reach the group in one workflow task (the
// group's worker was restarting, or the group was busy in an activity, or
// leave's wait timed out and the operator went on): the registration came
// last, so the table must be in the group. The group's Selector took the
// register channel before the leave channel, so the leave won: the
// running table was out, its reports ignored. Now a waiting leave is
// taken first, in the loop and in drain.
func TestBreak2LeaveThenRegisterInOneTask(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic)
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	ledger := GroupMember{Table: "shop.ledger", Collection: "public.ledger", TransactionTopic: topic}
	audit := GroupMember{Table: "shop.audit", Collection: "public.audit", TransactionTopic: topic}
	env := groupEnv(t, kc)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil)
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(payload.PublishCutResult{}, nil)
	var leaves []payload.LeaveGroupRequest
	env.OnActivity(payload.ActivityLeaveGroup, mock.Anything, mock.Anything).After(10 * time.Second).Return(func(_ context.Context, req payload.LeaveGroupRequest) (payload.LeaveGroupResult, error) {
		leaves = append(leaves, req)
		return payload.LeaveGroupResult{Untagged: []string{req.Table}}, nil
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, ledger)
		env.SignalWorkflow(SignalGroupRegister, audit)
	}, time.Second)
	// a stopped third table is taken out: its tag's removal takes 10 s
	// (a slow catalog), and the group takes no signal meanwhile
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupLeave, "shop.audit") }, 2*time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupLeave, "shop.ledger") // starter leave (sent first)
		env.SignalWorkflow(SignalGroupRegister, ledger)     // starter start --group (sent after)
	}, 3*time.Second)
	checked := false
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, []string{"shop.accounts", "shop.ledger"}, c.Tables, "registered after it left: in the group")
		require.Equal(t, []string{"shop.audit"}, keys(c.Left), "registered after it left: not left")
		// the leave is taken first (its tag consistent removed: the next
		// cut, which includes the ledger again, sets it), then the
		// registration
		require.Equal(t, []payload.LeaveGroupRequest{{Group: "shop", Table: "shop.audit"}, {Group: "shop", Table: "shop.ledger"}}, leaves)
		checked = true
	}, 30*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, CutEvery: 10 * time.Second, RoundsPerRun: 3})
	require.True(t, checked)
}

// A table that left its group and registered again (starter leave, then
// starter start --group) had applied and reported its event of an open
// transaction (600, held by the other table) before it stopped. The leave
// dropped the Tracker's record of it, the registration did not bring it
// back, and the table never reports that event again: its frozen
// report's fetched positions stop at a quiet second partition and carry
// no transaction claim (two partitions). W stayed below 600 until the
// quiet partition got a later change. Now WithoutTables keeps what the
// table reported, and joining again brings it back.
func TestBreak2RejoinForgetsReportedEvents(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(600, 1000, 1001, `{"data_collection":"public.accounts","event_count":1},{"data_collection":"public.ledger","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	ledger := GroupMember{Table: "shop.ledger", Collection: "public.ledger", TransactionTopic: topic}
	env := groupEnv(t, kc)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil)
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(payload.PublishCutResult{}, nil)
	env.OnActivity(payload.ActivityLeaveGroup, mock.Anything, mock.Anything).Return(payload.LeaveGroupResult{Untagged: []string{"shop.ledger"}}, nil)
	fetched := map[int32]string{0: cdc.PostgresSeq(990, 991).Hex(), 1: cdc.PostgresSeq(100, 101).Hex()}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, ledger)
		// the ledger applies its event of 600 (partition 0); partition 1 is quiet
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: ledger, BatchSeq: 1, Own: true,
			TxSeen:      map[string]payload.TxSeen{"600": {Orders: [][2]int64{{1, 1}}, Last: cdc.PostgresSeq(990, 991).Hex()}},
			FetchedPast: fetched, Partitions: []int32{0, 1}})
	}, time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupLeave, "shop.ledger") }, 3*time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, ledger) // started again with the group
		// its frozen report, from its recovered mirror (2 partitions: no claim)
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: ledger, Frozen: 1, Watermark: cdc.PostgresSeq(990, 991).Hex(),
			FetchedPast: fetched, Partitions: []int32{0, 1}})
		// the accounts applies its event of 600
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, BatchSeq: 1, Own: true,
			TxSeen:      map[string]payload.TxSeen{"600": {Orders: [][2]int64{{1, 1}}, Last: cdc.PostgresSeq(995, 996).Hex()}},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(995, 996).Hex()}, Partitions: []int32{0}})
	}, 5*time.Second)
	checked := false
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, []string{"shop.accounts", "shop.ledger"}, c.Tables)
		require.Equal(t, pgHex(1000), c.W, "600 is applied in both tables (the ledger reported it before it left)")
		checked = true
	}, 25*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, CutEvery: 10 * time.Second, RoundsPerRun: 5})
	require.True(t, checked)
}

// Left survives continue-as-new (JSON): a stale report of the table taken
// out, taken by the next run, is ignored. (Held up.)
func TestBreak2LeftAcrossContinueAsNew(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic,
		endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":1},{"data_collection":"public.ledger","event_count":1}`))
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	ledger := GroupMember{Table: "shop.ledger", Collection: "public.ledger", TransactionTopic: topic}
	env := groupEnv(t, kc)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil)
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(payload.PublishCutResult{}, nil)
	env.OnActivity(payload.ActivityLeaveGroup, mock.Anything, mock.Anything).Return(payload.LeaveGroupResult{Untagged: []string{"shop.ledger"}}, nil)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, ledger)
		env.SignalWorkflow(SignalGroupLeave, "shop.ledger")
	}, time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, CutEvery: 2 * time.Second, RoundsPerRun: 2})
	next := nextInput(t, env)
	require.Contains(t, next.State.Left, "shop.ledger")
	env = groupEnv(t, kc)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil)
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(payload.PublishCutResult{}, nil)
	checked := false
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: ledger, BatchSeq: 3, FetchedPast: map[int32]string{0: pgHex(10)}, Partitions: []int32{0}})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, []string{"shop.accounts"}, c.Tables)
		checked = true
	}, 2*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, next)
	require.True(t, checked)
}

// After a table leaves, the source keeps writing its source table: the
// ENDs name its collection, which no member has now, so the group lists it
// as Foreign, and a quiet member whose collection no change event has
// confirmed yet (its first event not come, no --source-table) was held as
// "maybe misnamed": no cut began at all, and the hold's advice named the
// collection taken out. Now the collections of the tables taken out are
// not foreign (GroupLeft.Collection).
func TestBreak2LeftCollectionTurnsForeignAndHoldsQuietMember(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic)
	accounts := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	ledger := GroupMember{Table: "shop.ledger", Collection: "public.ledger", TransactionTopic: topic}
	env := groupEnv(t, kc)
	var sent []string
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalGroupCut, mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		sent = append(sent, args.String(1)+" "+args.Get(4).(string))
	})
	env.OnActivity(payload.ActivityLeaveGroup, mock.Anything, mock.Anything).Return(payload.LeaveGroupResult{Untagged: []string{"shop.ledger"}}, nil)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, accounts)
		env.SignalWorkflow(SignalGroupRegister, ledger)
	}, time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupLeave, "shop.ledger") }, 3*time.Second)
	env.RegisterDelayedCallback(func() {
		// the source's ledger table goes on changing: a transaction of it alone
		require.NoError(t, kc.Produce(context.Background(), &kgo.Record{Topic: topic,
			Value: []byte(endValue(600, 1000, 1001, `{"data_collection":"public.ledger","event_count":1}`))}))
	}, 4*time.Second)
	var published []payload.PublishCutRequest
	env.OnActivity(payload.ActivityPublishCut, mock.Anything, mock.Anything).Return(func(_ context.Context, req payload.PublishCutRequest) (payload.PublishCutResult, error) {
		published = append(published, req)
		return payload.PublishCutResult{Tagged: []payload.CutTagged{{Table: "shop.accounts", Mirror: 7}}}, nil
	})
	checked := 0
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, []string{"shop.accounts"}, c.Tables)
		require.Equal(t, pgHex(1000), c.W)
		require.Equal(t, []string{"lakemirror-table-shop.accounts freeze 1"}, sent)
		// accounts (quiet) freezes below W
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: accounts, Frozen: 1, Watermark: pgHex(500)})
		checked++
	}, 25*time.Second)
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		t.Logf("sent %v pending %+v holds %+v waiting %v aborts %d %s", sent, c.Pending, c.Holds, c.Waiting, c.Aborts, c.LastAbort)
		require.Len(t, published, 1, "cut 1 in accounts alone at 1000")
		require.Empty(t, c.Foreign, "public.ledger is the collection taken out, not a foreign one")
		checked++
	}, 60*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, CutEvery: 10 * time.Second, RoundsPerRun: 10})
	require.Equal(t, 2, checked)
}

// Two tables mirror one collection (no cut while they share it; the hold
// says to stop all but one). The operator stops the one that is ahead and
// takes it out (starter leave). Its reports stayed in the Tracker under
// the shared collection, so the table left, which applied none of 571's
// events, counted as complete: cut 1 was published at 571's END in
// archive.accounts alone, its mirror without 571. Now the leave drops the
// shared collection's reports (Tracker.Forget): the table left reports
// again, and no cut is published before it has 571.
func TestBreak2LeaveOfSharedCollectionKeepsItsReports(t *testing.T) {
	const topic = "srv.transaction"
	kc := txTopic(t, topic, endValue(571, 1000, 1001, `{"data_collection":"public.accounts","event_count":2}`))
	a := GroupMember{Table: "shop.accounts", Collection: "public.accounts", TransactionTopic: topic}
	b := GroupMember{Table: "archive.accounts", Collection: "public.accounts", TransactionTopic: topic}
	var sent []string
	var published []payload.PublishCutRequest
	env := breakEnv(t, kc, &sent, &published)
	env.OnActivity(payload.ActivityLeaveGroup, mock.Anything, mock.Anything).Return(payload.LeaveGroupResult{Untagged: []string{"shop.accounts"}}, nil)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalGroupRegister, a)
		env.SignalWorkflow(SignalGroupRegister, b)
		// shop.accounts applies both events of 571; archive.accounts nothing
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: a, BatchSeq: 1, Own: true,
			TxSeen:      map[string]payload.TxSeen{"571": {Orders: [][2]int64{{1, 2}}, Last: cdc.PostgresSeq(900, 901).Hex()}},
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(900, 901).Hex()}, Partitions: []int32{0}})
		env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, BatchSeq: 1, Own: true,
			FetchedPast: map[int32]string{0: cdc.PostgresSeq(100, 101).Hex()}, Partitions: []int32{0}})
	}, time.Second)
	// the hold's advice: stop all but one; the operator stops shop.accounts and takes it out
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalGroupLeave, "shop.accounts") }, 5*time.Second)
	env.RegisterDelayedCallback(func() {
		for _, s := range sent {
			if s == "lakemirror-table-archive.accounts freeze 1" {
				// archive.accounts is quiet at 100: it has none of 571
				env.SignalWorkflow(SignalGroupReport, GroupReport{GroupMember: b, Frozen: 1, Watermark: cdc.PostgresSeq(100, 101).Hex()})
			}
		}
	}, 25*time.Second)
	checked := false
	env.RegisterDelayedCallback(func() {
		c := queryCut(t, env)
		require.Equal(t, []string{"archive.accounts"}, c.Tables)
		require.Empty(t, published, "archive.accounts applied none of 571's two events")
		checked = true
	}, 40*time.Second)
	env.ExecuteWorkflow(GroupWorkflow, GroupInput{Group: "shop", TransactionTopic: topic, CutEvery: 10 * time.Second, RoundsPerRun: 10})
	require.True(t, checked)
}
