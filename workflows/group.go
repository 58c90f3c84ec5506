package workflows

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cut"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Names of the source group's workflow (docs/design.md, "Consistent cuts
// across a source group").
const (
	GroupWorkflowName   = "GroupWorkflow"
	SignalGroupRegister = "group-register" // GroupMember: a table joins the group (the starter, with the group's start)
	SignalGroupReport   = "group-report"   // GroupReport: a table's batch committed (TableWorkflow, after each batch)
	SignalGroupLeave    = "group-leave"    // table name (string): take a stopped table out of the group (the starter's leave)
	QueryCut            = "cut"            // returns GroupCut
)

// GroupWorkflowID is the group workflow's id for a group name.
func GroupWorkflowID(group string) string { return "lakemirror-group-" + group }

// defaultCutEvery is how often the group reads its transaction topic and
// computes its cut unless GroupInput.CutEvery says otherwise.
const defaultCutEvery = time.Minute

// groupRoundsPerRun bounds one group run's history: after this many cut
// intervals (about 17 hours at a minute each), at historyEventsPerRun
// events (the tables' reports are one event each) or when the server
// suggests it, the run continues as new with its state (checked after
// each interval).
const groupRoundsPerRun = 1000

// groupReadsPerRound bounds the transaction topic reads of one round
// (each of at most payload.GroupReadMax records).
const groupReadsPerRound = 10

// GroupMember is a table of a group, as the starter registers it and
// every report repeats it.
type GroupMember struct {
	Table string `json:"table"` // the lakemirror table (namespace.table)
	// Collection is the table's data collection in the source, as the
	// transaction topic's END records name it in data_collections
	// ("schema.table": TableSpec.DataCollection).
	Collection       string `json:"collection"`
	TransactionTopic string `json:"transaction_topic,omitempty"` // the table's TableSpec.TransactionTopic
	// Named: the collection was given (TableSpec.SourceTable: --source-table,
	// source_table), not derived from the topic's name: the group takes
	// it as confirmed (GroupState.Confirmed).
	Named bool `json:"named,omitempty"`
}

// GroupMemberOf is the table of spec as its group knows it (the
// starter's registration, every report).
func GroupMemberOf(spec payload.TableSpec) GroupMember {
	return GroupMember{Table: spec.Table, Collection: spec.DataCollection(), TransactionTopic: spec.TransactionTopic, Named: spec.SourceTable != ""}
}

// GroupReport is a table's report after one of its batches committed
// (and its late keys, if any, were rebuilt): the batch's
// payload.GroupProgress and the partitions of the table's topic it
// knows.
type GroupReport struct {
	GroupMember
	BatchSeq int64 `json:"batch_seq"`
	// TxSeen, TxEvents and FetchedPast are the batch's
	// (payload.GroupProgress): events per source transaction id by
	// identity (TxSeen; counted once however often delivered), or as a
	// count in reports of batches recorded before TxSeen (TxEvents), the
	// highest position fetched per partition (hex).
	TxSeen      map[string]payload.TxSeen `json:"tx_seen,omitempty"`
	TxEvents    map[string]int64          `json:"tx_events,omitempty"`
	FetchedPast map[int32]string          `json:"fetched_past,omitempty"`
	// Partitions are the partitions of the table's topic (its end
	// offsets after the batch): the table has fetched past a position
	// once every one of them has.
	Partitions []int32 `json:"partitions"`
	// Frozen, in a report sent for a cut rather than a batch, is the
	// cut attempt (PendingCut.Attempt) the table froze for, applying no
	// batch until it is bound: Watermark is then the highest position it
	// has applied (hex; "" none). Refused is an attempt whose bound came
	// after the table stopped waiting for it (its freeze timed out).
	Frozen    int64  `json:"frozen,omitempty"`
	Watermark string `json:"watermark,omitempty"`
	Refused   int64  `json:"refused,omitempty"`
	// SourceTsMs, in a frozen report, is the newest source commit time
	// the table has applied (milliseconds since the epoch; 0 none): a
	// cut per position takes the newest of its tables' as its source
	// time, and every cut the newest as the freshest table's.
	SourceTsMs int64 `json:"source_ts_ms,omitempty"`
	// Own: the batch held a change event naming the table's own data
	// collection (payload.GroupProgress.Own).
	Own bool `json:"own,omitempty"`
}

// GroupInput starts (or continues) a group's workflow.
type GroupInput struct {
	Group            string `json:"group"`
	TransactionTopic string `json:"transaction_topic,omitempty"` // "" = cut per position
	// CutEvery is how often the group reads its transaction topic and
	// computes its cut (0: a minute).
	CutEvery time.Duration `json:"cut_every,omitempty"`
	// RoundsPerRun is the cut intervals of one run before it continues
	// as new (0: groupRoundsPerRun; tests set it low).
	RoundsPerRun int `json:"rounds_per_run,omitempty"`
	// State is the state a continued run carries; nil on a first start.
	State *GroupState `json:"state,omitempty"`
}

// GroupState is the group workflow's state, carried across
// continue-as-new: plain types (the cut.Tracker as cut.State).
type GroupState struct {
	Members map[string]GroupMember `json:"members"` // by table
	// Fetched is, per table, the highest position reported fetched per
	// partition (hex), and Partitions the table's partitions.
	Fetched    map[string]map[int32]string `json:"fetched,omitempty"`
	Partitions map[string][]int32          `json:"partitions,omitempty"`
	Tracker    cut.State                   `json:"tracker"`
	// Next is where the next read of the transaction topic starts
	// (payload.GroupReadResult.Next); empty before the first read.
	Next payload.Offsets `json:"next,omitempty"`
	// Number counts the cuts: it grows by one each time W moves up.
	Number int64  `json:"number"`
	W      string `json:"w,omitempty"` // the last cut's W (hex), to tell when it moves
	// Kept are the transaction topic's records the last read kept (the
	// first holds the cut); Error the last read's or the Tracker's error
	// ("" when the last round had none).
	Kept  []payload.GroupKept `json:"kept,omitempty"`
	Error string              `json:"error,omitempty"`
	// Reports counts the table reports taken, Ends the ENDs.
	Reports int64 `json:"reports"`
	Ends    int64 `json:"ends"`
	// Foreign are data collections the ENDs named that no table of the
	// group has (at most maxForeign, first seen first): a table whose
	// collection is misnamed (TableSpec.DataCollection) shows here, and
	// its events do not hold the cut.
	Foreign []string `json:"foreign,omitempty"`
	// Confirmed are the tables whose data collection a batch confirmed
	// (a report with Own): a change event of theirs named it. A table
	// that joins under another collection is confirmed again.
	Confirmed map[string]bool `json:"confirmed,omitempty"`
	// Pending is the cut being taken (nil: none); Published the newest
	// cut published in the tables (tags, `_cuts`); Attempts counts the
	// cuts begun, Aborts those given up (LastAbort says why); NextCutAt
	// is when the next cut may begin (cutPublishVersion runs).
	Pending   *PendingCut   `json:"pending,omitempty"`
	Published *PublishedCut `json:"published,omitempty"`
	Attempts  int64         `json:"attempts,omitempty"`
	Aborts    int64         `json:"aborts,omitempty"`
	LastAbort string        `json:"last_abort,omitempty"`
	NextCutAt time.Time     `json:"next_cut_at,omitzero"`
	// GivenUpW is the bound of the last cut per position given up once
	// bound (hex; "" none): the next begins only when every partition
	// has fetched up to it (positionMoved), so a partition that stayed
	// below it does not stop the tables again meanwhile.
	GivenUpW string `json:"given_up_w,omitempty"`
	// Left are the tables taken out of the group (SignalGroupLeave), by
	// table: their reports are ignored until one registers again
	// (SignalGroupRegister: starter start or apply with the group).
	Left map[string]GroupLeft `json:"left,omitempty"`
}

// GroupLeft is a table taken out of its group.
type GroupLeft struct {
	At         time.Time `json:"at"`
	Collection string    `json:"collection"` // its data collection: ENDs naming it are not foreign (noteForeign)
	// Cut is the group's last published cut when it left (0: none); the
	// table's `cut-<n>` tags up to it stay, its `consistent` tag was
	// removed (Untagged: the Iceberg tables), or Error says why not.
	Cut      int64    `json:"cut,omitempty"`
	Untagged []string `json:"untagged,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// maxForeign is the most foreign collections GroupState keeps.
const maxForeign = 20

// GroupCut is the group's cut as the cut query returns it.
type GroupCut struct {
	Group            string `json:"group"`
	TransactionTopic string `json:"transaction_topic,omitempty"`
	// Number is the cut's number (0: no cut yet); W its source commit
	// position (hex, the tables' _seq; "" for none); TxID the END's
	// transaction id at W and SourceTsMs its ts_ms (milliseconds since
	// the epoch: Debezium's processing time of the commit; 0 in position
	// mode).
	Number     int64  `json:"number"`
	W          string `json:"w,omitempty"`
	TxID       string `json:"tx_id,omitempty"`
	SourceTsMs int64  `json:"source_ts_ms,omitempty"`
	// PerPosition: no transaction topic, the cut is consistent per
	// position, not per transaction (cut.Tracker.PositionCut).
	PerPosition bool `json:"per_position,omitempty"`
	// Holds are the tables that hold the next END (or, per position,
	// the lowest fetched position), with the events each misses.
	Holds []GroupHold `json:"holds,omitempty"`
	// Tables are the group's tables, sorted.
	Tables []string `json:"tables"`
	// Kept, Error and ReadOffsets are the transaction topic's reading:
	// records kept (the first holds the cut), the last error, the next
	// offsets.
	Kept        []payload.GroupKept `json:"kept,omitempty"`
	Error       string              `json:"error,omitempty"`
	ReadOffsets payload.Offsets     `json:"read_offsets,omitempty"`
	// Foreign are the data collections ENDs named that no table of the
	// group has (GroupState.Foreign).
	Foreign []string `json:"foreign,omitempty"`
	// Reports and Ends count the table reports and the ENDs taken.
	Reports int64 `json:"reports"`
	Ends    int64 `json:"ends"`
	// Published is the newest cut published in the tables (tags
	// `cut-<n>` and `consistent`, rows of `_cuts`), Pending the one
	// being taken; Aborts and LastAbort the cuts given up and why.
	Published *PublishedCut `json:"published,omitempty"`
	Pending   *PendingCut   `json:"pending,omitempty"`
	Aborts    int64         `json:"aborts,omitempty"`
	LastAbort string        `json:"last_abort,omitempty"`
	// Waiting is what the pending cut waits for (tables not frozen; once
	// bound, per position the partitions not fetched past W, per
	// transaction the tables that miss events of the next END).
	Waiting []string `json:"waiting,omitempty"`
	// Left are the tables taken out of the group (GroupState.Left).
	Left map[string]GroupLeft `json:"left,omitempty"`
}

// GroupHold is one table that holds the cut.
type GroupHold struct {
	Table      string `json:"table"`
	Collection string `json:"collection"`
	TxID       string `json:"tx_id,omitempty"`  // the next END's transaction id ("" per position)
	Commit     string `json:"commit,omitempty"` // its commit position (hex)
	Missing    int64  `json:"missing,omitempty"`
	// Unconfirmed: the table's data collection is not confirmed while
	// ENDs name collections no table of the group has (group.unconfirmed):
	// no cut begins. Note says why and how to go on (also for a table
	// that shares its collection with another: group.shared).
	Unconfirmed bool   `json:"unconfirmed,omitempty"`
	Note        string `json:"note,omitempty"`
}

// group is one run of the group workflow.
type group struct {
	in GroupInput
	st *GroupState
	tr *cut.Tracker
	// publish is cutPublishVersion taken: the group takes its cuts in the
	// tables (freeze, bound, publish: groupcut.go). positions is
	// cutPositionVersion taken: without a transaction topic too, and the
	// memo is kept (memo: the last one upserted in this run).
	publish   bool
	positions bool
	// confirm is cutUnconfirmedVersion taken: with a transaction topic,
	// no cut begins or is published while ENDs name a collection no table
	// has and a table's own collection is not confirmed (unconfirmed).
	confirm bool
	// sharedRule: tables sharing a data collection hold the cut
	// (cutSharedVersion: group.shared).
	sharedRule bool
	memo       *GroupMemo
}

// GroupWorkflow computes the consistent cut of one source group
// (docs/design.md, "Consistent cuts across a source group"; issue 37):
// every CutEvery it reads its transaction topic's new records
// (ActivityReadGroupTransactions: ENDs with their commit positions and
// per-table counts, held at a record it cannot take) and feeds them to a
// cut.Tracker, with the tables' reports (SignalGroupReport, from each
// TableWorkflow after a batch commits: events per transaction, positions
// fetched per partition) and registrations (SignalGroupRegister, from the
// starter). The cut query (QueryCut) returns the cut: its number, W, its
// source commit time and the tables that hold the next END. Without a
// transaction topic it cuts per position (cut.Tracker.PositionCut). It
// publishes its cuts in the tables (freeze, bound, publish: groupcut.go;
// per position too from cutPositionVersion) and keeps its memo MemoCut
// (GroupMemo) for the Temporal Web UI.
//
// It never completes on its own; it continues as new with its state
// (GroupState) every RoundsPerRun intervals, at historyEventsPerRun
// events or when the server suggests it. Errors: a non-retryable ErrTypeBadSpec for an input without a
// group, a state that does not restore; the read's errors are recorded
// (GroupCut.Error) and the read is tried again the next interval.
func GroupWorkflow(ctx workflow.Context, in GroupInput) error {
	if in.Group == "" {
		return temporal.NewNonRetryableApplicationError("group workflow without a group name", payload.ErrTypeBadSpec, nil)
	}
	g := &group{in: in, st: in.State}
	if g.st == nil {
		g.st = &GroupState{Members: map[string]GroupMember{}, Tracker: cut.NewTracker("", nil).State()} //workflowcheck:ignore (deterministic)
	}
	tr, err := cut.Restore(g.st.Tracker) //workflowcheck:ignore (deterministic: see cut.Restore)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("group "+in.Group+": "+err.Error(), payload.ErrTypeBadSpec, err)
	}
	g.tr = tr
	if err := workflow.SetQueryHandler(ctx, QueryCut, func() (GroupCut, error) { return g.cut(), nil }); err != nil {
		return err
	}
	g.publish = workflow.GetVersion(ctx, cutPublishVersion, workflow.DefaultVersion, 1) == 1
	g.positions = workflow.GetVersion(ctx, cutPositionVersion, workflow.DefaultVersion, 1) == 1
	g.confirm = workflow.GetVersion(ctx, cutUnconfirmedVersion, workflow.DefaultVersion, 1) == 1
	g.sharedRule = workflow.GetVersion(ctx, cutSharedVersion, workflow.DefaultVersion, 1) == 1
	g.upsertMemo(ctx)
	register := workflow.GetSignalChannel(ctx, SignalGroupRegister)
	report := workflow.GetSignalChannel(ctx, SignalGroupReport)
	leave := workflow.GetSignalChannel(ctx, SignalGroupLeave)
	every := in.CutEvery
	if every <= 0 {
		every = defaultCutEvery
	}
	rounds := in.RoundsPerRun
	if rounds <= 0 {
		rounds = groupRoundsPerRun
	}
	for round := 0; ; {
		due := false
		wait := every
		if g.st.Pending != nil {
			wait = min(every, cutPoll) // a pending cut reads the transaction topic and checks its timeouts often
		}
		timer := workflow.NewTimer(ctx, wait)
		sel := workflow.NewSelector(ctx)
		// a leave before a registration when both wait (a table taken out,
		// then started again with the group): the registration wins
		sel.AddReceive(leave, func(ch workflow.ReceiveChannel, _ bool) {
			var table string
			ch.Receive(ctx, &table)
			g.leave(ctx, table)
			g.stepCut(ctx)
			g.upsertMemo(ctx)
		})
		sel.AddReceive(register, func(ch workflow.ReceiveChannel, _ bool) {
			var m GroupMember
			ch.Receive(ctx, &m)
			g.register(ctx, m)
		})
		sel.AddReceive(report, func(ch workflow.ReceiveChannel, _ bool) {
			var r GroupReport
			ch.Receive(ctx, &r)
			g.report(ctx, r)
			g.stepCut(ctx)
			g.upsertMemo(ctx)
		})
		sel.AddFuture(timer, func(workflow.Future) { due = true })
		for !due {
			sel.Select(ctx)
		}
		g.read(ctx)
		g.advance()
		g.stepCut(ctx)
		g.upsertMemo(ctx)
		if wait == every {
			round++ // a pending cut's short waits are not rounds
		}
		info := workflow.GetInfo(ctx)
		if round >= rounds || info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= historyEventsPerRun {
			g.drain(ctx, register, report, leave)
			g.advance()
			g.st.Tracker = g.tr.State() //workflowcheck:ignore (deterministic: State copies the maps)
			next := g.in
			next.State = g.st
			return workflow.NewContinueAsNewError(ctx, GroupWorkflowName, next)
		}
	}
}

// drain takes the signals still buffered (before continue-as-new).
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) drain(ctx workflow.Context, register, report, leave workflow.ReceiveChannel) {
	for {
		var table string
		if leave.ReceiveAsync(&table) { // before a registration, as in the run's loop
			g.leave(ctx, table)
			continue
		}
		var m GroupMember
		if register.ReceiveAsync(&m) {
			g.register(ctx, m)
			continue
		}
		var r GroupReport
		if report.ReceiveAsync(&r) {
			g.report(ctx, r)
			continue
		}
		return
	}
}

// register takes a registration (SignalGroupRegister: the starter's
// start or apply): a table taken out of the group (Left) comes back.
func (g *group) register(ctx workflow.Context, m GroupMember) {
	delete(g.st.Left, m.Table)
	g.join(ctx, m)
}

// leave takes table out of the group (SignalGroupLeave: the starter's
// leave, for a table whose workflow does not run): a pending cut that
// includes it is given up; the Tracker no longer waits for its data
// collection, keeping what it reported for when it joins again
// (cut.Tracker.WithoutTables), or, when another table of the group has
// the collection, drops the collection's reports (cut.Tracker.Forget:
// whose they were is unknown); its reports are ignored until it
// registers again, ENDs naming its collection are not foreign
// (noteForeign), and its `consistent` tag is removed
// (ActivityLeaveGroup: the group's later cuts do not include it). A
// table not in the group is ignored.
//
//workflowcheck:ignore (the cut.Tracker goes over maps, but its result does not depend on the order; deterministic)
func (g *group) leave(ctx workflow.Context, table string) {
	m, ok := g.st.Members[table]
	if !ok {
		return
	}
	if p := g.st.Pending; p != nil && slices.Contains(p.Tables, table) {
		g.abort(ctx, fmt.Sprintf("table %s was taken out of the group", table))
	}
	delete(g.st.Members, table)
	delete(g.st.Fetched, table)
	delete(g.st.Partitions, table)
	delete(g.st.Confirmed, table)
	if len(g.byCollection()[m.Collection]) == 0 {
		g.tr = g.tr.WithoutTables(m.Collection) // what it reported is kept for when it joins again
	} else {
		g.tr = g.tr.Forget(m.Collection) // shared: whose reports they were is unknown, so the others report again
	}
	left := GroupLeft{At: workflow.Now(ctx), Collection: m.Collection}
	if g.st.Published != nil {
		left.Cut = g.st.Published.Number
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          "leave-" + table,
		StartToCloseTimeout: time.Minute,
		Summary:             fmt.Sprintf("remove tag consistent of %s, taken out of group %s", table, g.in.Group),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec}},
	})
	var res payload.LeaveGroupResult
	if err := workflow.ExecuteActivity(actx, payload.ActivityLeaveGroup, payload.LeaveGroupRequest{Group: g.in.Group, Table: table}).Get(ctx, &res); err != nil {
		left.Error = fmt.Sprintf("its tag consistent was not removed (%s): remove it by hand, or readers of the group at consistent mix its last cut with later ones", errorText(err))
	}
	left.Untagged = res.Untagged
	if g.st.Left == nil {
		g.st.Left = map[string]GroupLeft{}
	}
	g.st.Left[table] = left
	workflow.GetLogger(ctx).Info("group: table taken out", "group", g.in.Group, "table", table, "untagged", res.Untagged)
}

// join adds a table to the group (a table already in it: its collection
// as now given). A table naming another transaction topic than the
// group's is taken and the mismatch recorded in Error.
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) join(ctx workflow.Context, m GroupMember) {
	if m.Table == "" || m.Collection == "" {
		return
	}
	if m.TransactionTopic != g.in.TransactionTopic {
		g.st.Error = fmt.Sprintf("table %s names transaction topic %q, the group reads %q", m.Table, m.TransactionTopic, g.in.TransactionTopic)
		workflow.GetLogger(ctx).Warn("group: a table names another transaction topic", "table", m.Table, "its", m.TransactionTopic, "group's", g.in.TransactionTopic)
	}
	old, ok := g.st.Members[m.Table]
	if ok && old.Collection == m.Collection {
		if old.Named != m.Named {
			g.st.Members[m.Table] = m
		}
		return
	}
	g.st.Members[m.Table] = m
	g.tr = g.tr.WithTables(m.Collection)
	if ok {
		delete(g.st.Confirmed, m.Table) // another collection: confirmed by its own events again
	}
	if g.confirm {
		g.st.Foreign = slices.DeleteFunc(g.st.Foreign, func(c string) bool { return c == m.Collection })
		if len(g.st.Foreign) == 0 {
			g.st.Foreign = nil
		}
	}
}

// appliedEvents gives the Tracker a report's events per transaction
// (GroupReport.TxSeen; in id order) of the table of data collection
// coll, recording an error in the state.
//
//workflowcheck:ignore (the loop goes over a map's sorted keys; deterministic)
func (g *group) appliedEvents(coll string, seen map[string]payload.TxSeen) {
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		if err := g.appliedTx(coll, id, seen[id]); err != nil {
			g.st.Error = err.Error()
		}
	}
}

// appliedTx gives the Tracker one transaction's events of a report.
func (g *group) appliedTx(coll, id string, s payload.TxSeen) error {
	var seqs []cdc.Seq
	for _, h := range s.Seqs {
		q, err := cdc.ParseSeqHex(h)
		if err != nil {
			return fmt.Errorf("report of %s, transaction %s: %w", coll, id, err)
		}
		seqs = append(seqs, q)
	}
	last, err := cdc.ParseSeqHex(s.Last)
	if err != nil {
		return fmt.Errorf("report of %s, transaction %s: %w", coll, id, err)
	}
	return g.tr.AppliedEvents(coll, id, s.Orders, seqs, last)
}

// report takes a table's batch report: its applied events per
// transaction (by identity, unioned with its earlier reports'; the
// running count for a report that has only counts), and its fetched
// position (the lowest over its partitions
// of the highest reported on each) once every partition has one.
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) report(ctx workflow.Context, r GroupReport) {
	if _, gone := g.st.Left[r.Table]; gone {
		return // taken out: a report sent before it stopped
	}
	g.join(ctx, r.GroupMember)
	if _, ok := g.st.Members[r.Table]; !ok {
		return
	}
	if r.Frozen != 0 || r.Refused != 0 {
		g.cutReport(ctx, r)
		return
	}
	g.st.Reports++
	if p := g.st.Pending; p != nil && g.confirm {
		if p.Reported == nil {
			p.Reported = map[string]time.Time{}
		}
		p.Reported[r.Table] = workflow.Now(ctx)
	}
	if r.Own && !g.st.Confirmed[r.Table] {
		if g.st.Confirmed == nil {
			g.st.Confirmed = map[string]bool{}
		}
		g.st.Confirmed[r.Table] = true
	}
	coll := g.st.Members[r.Table].Collection
	g.appliedEvents(coll, r.TxSeen)
	for _, id := range slices.Sorted(maps.Keys(r.TxEvents)) {
		if _, ok := r.TxSeen[id]; ok {
			continue
		}
		if err := g.tr.Applied(coll, id, g.tr.AppliedCount(coll, id)+r.TxEvents[id]); err != nil {
			g.st.Error = err.Error()
		}
	}
	g.noteFetched(r, coll)
}

// noteFetched takes a report's positions fetched per partition
// (FetchedPast, Partitions) of table r.Table, whose data collection is
// coll: the Tracker learns the table's fetched position (the lowest over
// its partitions of the highest reported on each) once every partition
// has one.
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) noteFetched(r GroupReport, coll string) {
	if g.st.Fetched == nil {
		g.st.Fetched = map[string]map[int32]string{}
	}
	if g.st.Partitions == nil { // also when carried across continue-as-new empty (left out)
		g.st.Partitions = map[string][]int32{}
	}
	f, _ := payload.MergeFetchedPast(g.st.Fetched[r.Table], r.FetchedPast)
	if f == nil {
		f = map[int32]string{}
	}
	g.st.Fetched[r.Table] = f
	if len(r.Partitions) > 0 {
		g.st.Partitions[r.Table] = slices.Sorted(slices.Values(r.Partitions))
	}
	low, ok := "", len(g.st.Partitions[r.Table]) > 0
	for i, p := range g.st.Partitions[r.Table] {
		pos, has := f[p]
		if !has {
			ok = false
			break
		}
		if i == 0 || pos < low {
			low = pos
		}
	}
	if ok {
		s, err := cdc.ParseSeqHex(low)
		if err == nil {
			err = g.tr.FetchedPast(coll, s)
		}
		if err != nil {
			g.st.Error = err.Error()
		}
	}
}

// read takes the transaction topic's new ENDs into the Tracker, holding
// at the first kept record or END the Tracker refuses; without a
// transaction topic it does nothing.
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) read(ctx workflow.Context) {
	if g.in.TransactionTopic == "" {
		return
	}
	opts := workflow.ActivityOptions{
		ActivityID:          "read-transactions",
		StartToCloseTimeout: 2 * time.Minute,
		Summary:             fmt.Sprintf("read transaction topic %s of group %s", g.in.TransactionTopic, g.in.Group),
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second, MaximumAttempts: 3,
			NonRetryableErrorTypes: []string{payload.ErrTypeBadSpec}},
	}
	actx := workflow.WithActivityOptions(ctx, opts)
	g.st.Error = ""
	for range groupReadsPerRound {
		var res payload.GroupReadResult
		err := workflow.ExecuteActivity(actx, payload.ActivityReadGroupTransactions,
			payload.GroupReadRequest{Group: g.in.Group, Topic: g.in.TransactionTopic, From: g.st.Next}).Get(ctx, &res)
		if err != nil {
			g.st.Error = errorText(err)
			return
		}
		if res.Connector != "" && g.tr.State().Connector == "" {
			s := g.tr.State()
			s.Connector = res.Connector
			if tr, err := cut.Restore(s); err == nil {
				g.tr = tr
			}
		}
		g.st.Kept = res.Kept
		next := maps.Clone(res.Next)
		for _, e := range res.Ends {
			commit, err := cdc.ParseSeqHex(e.Commit)
			if err == nil {
				err = g.tr.End(cut.End{ID: e.ID, Commit: commit, Counts: e.Counts, TsMs: e.TsMs})
			}
			if err != nil {
				// held at this END: read again from it next time
				g.st.Error = fmt.Sprintf("END %q at offset %d: %v", e.ID, e.Offset, err)
				next[e.Partition] = e.Offset
				g.st.Next = next
				return
			}
			g.st.Ends++
			g.noteForeign(e.Counts)
		}
		g.st.Next = next
		if !res.More {
			return
		}
	}
}

// noteForeign records the collections of an END's counts that no table
// of the group has (GroupState.Foreign).
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) noteForeign(counts map[string]int64) {
	for _, c := range slices.Sorted(maps.Keys(counts)) {
		known := slices.Contains(g.st.Foreign, c)
		for _, m := range g.st.Members {
			known = known || m.Collection == c
		}
		for _, l := range g.st.Left { // a table taken out: its source table goes on
			known = known || l.Collection == c
		}
		if !known && len(g.st.Foreign) < maxForeign {
			g.st.Foreign = append(g.st.Foreign, c)
		}
	}
}

// current is the cut the Tracker gives now.
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) current() cut.Cut {
	if g.in.TransactionTopic == "" {
		return g.tr.PositionCut()
	}
	return g.tr.Cut()
}

// advance counts a new cut when W moved up.
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) advance() {
	if w := g.current().W.Hex(); w > g.st.W {
		g.st.W = w
		g.st.Number++
	}
}

// cut is the query's answer.
//
//workflowcheck:ignore (the cut.Tracker and these loops go over maps, but their results do not depend on the order: sorted, summed or keyed; deterministic)
func (g *group) cut() GroupCut {
	c := g.current()
	out := GroupCut{Group: g.in.Group, TransactionTopic: g.in.TransactionTopic, Number: g.st.Number, W: c.W.Hex(), TxID: c.TxID,
		SourceTsMs: c.TsMs, PerPosition: c.PerPosition, Kept: g.st.Kept, Error: g.st.Error, ReadOffsets: g.st.Next,
		Tables: slices.Sorted(maps.Keys(g.st.Members)), Foreign: g.st.Foreign, Reports: g.st.Reports, Ends: g.st.Ends,
		Published: g.st.Published, Pending: g.st.Pending, Aborts: g.st.Aborts, LastAbort: g.st.LastAbort, Waiting: g.waiting(), Left: g.st.Left}
	if out.Tables == nil {
		out.Tables = []string{}
	}
	out.Holds = append(g.holds(c), g.blocked()...)
	return out
}

// blocked are the holds that keep the group from beginning or publishing
// any cut, whatever the tables applied: unconfirmed and shared.
func (g *group) blocked() []GroupHold {
	return append(g.unconfirmed(), g.shared()...)
}

// shared are the holds of the tables that mirror one data collection with
// another table of the group (cutSharedVersion), sorted by collection,
// then table. The Tracker keeps a collection's applied events once: the
// events one of them applied complete a transaction for all, so a cut
// could hold another without them. No cut begins, and none is published,
// while there is one; each says how to go on.
//
//workflowcheck:ignore (the loops go over maps, but their results do not depend on the order: sorted; deterministic)
func (g *group) shared() []GroupHold {
	if !g.sharedRule || !g.publish {
		return nil
	}
	byColl := g.byCollection()
	var out []GroupHold
	for _, c := range slices.Sorted(maps.Keys(byColl)) {
		ts := byColl[c]
		if len(ts) < 2 {
			continue
		}
		for _, t := range ts {
			out = append(out, GroupHold{Table: t, Collection: c,
				Note: fmt.Sprintf("tables %s all mirror data collection %q, and a group counts a collection's events once, so it cannot tell that each of them holds a transaction: "+
					"no cut is taken while they share it; stop all but one of them and start them again without --group (or in a group of their own)",
					strings.Join(ts, ", "), c)})
		}
	}
	return out
}

// unconfirmed are the holds of the tables whose data collection is not
// confirmed (neither Named nor Confirmed) while the ENDs name
// collections no table of the group has (Foreign), with a transaction
// topic and cutUnconfirmedVersion: such a table may be misnamed (its
// events' collection among Foreign), so the ENDs' counts for it are not
// waited for and a cut could hold none of its transactions. No cut
// begins, and none is published, while there is one; each says how to
// go on.
//
//workflowcheck:ignore (the loops go over maps, but their results do not depend on the order: sorted; deterministic)
func (g *group) unconfirmed() []GroupHold {
	if !g.confirm || !g.publish || g.in.TransactionTopic == "" || len(g.st.Foreign) == 0 {
		return nil
	}
	var out []GroupHold
	for _, t := range slices.Sorted(maps.Keys(g.st.Members)) {
		m := g.st.Members[t]
		if m.Named || g.st.Confirmed[t] {
			continue
		}
		out = append(out, GroupHold{Table: t, Collection: m.Collection, Unconfirmed: true,
			Note: fmt.Sprintf("no change event has named its data collection %q yet, and the transaction topic's ENDs name %s, which no table of the group has: "+
				"if one of them is this table's source table, stop the table and start it again with --source-table <that collection>; "+
				"if none is, its first change event confirms it, or stop it and start it again with --source-table %s",
				m.Collection, strings.Join(g.st.Foreign, ", "), m.Collection)})
	}
	return out
}

// byCollection maps each data collection of the group's members to its
// tables, sorted.
//
//workflowcheck:ignore (the loop goes over a map's sorted keys; deterministic)
func (g *group) byCollection() map[string][]string {
	byColl := map[string][]string{}
	for _, t := range slices.Sorted(maps.Keys(g.st.Members)) {
		c := g.st.Members[t].Collection
		byColl[c] = append(byColl[c], t)
	}
	return byColl
}

// holds are c's holds by the group's tables (a collection's hold is each
// table of that collection's, tables sorted).
//
//workflowcheck:ignore (the loops go over maps, but their results do not depend on the order: sorted; deterministic)
func (g *group) holds(c cut.Cut) []GroupHold {
	byColl := g.byCollection()
	var out []GroupHold
	for _, h := range c.Holds {
		for _, t := range byColl[h.Table] {
			gh := GroupHold{Table: t, Collection: h.Table, TxID: h.TxID, Missing: h.Missing}
			if h.Commit != "" {
				gh.Commit = h.Commit.Hex()
			}
			out = append(out, gh)
		}
	}
	return out
}
