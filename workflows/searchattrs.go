package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Search attributes kept on table workflows, for Web UI filters such as
// `LakemirrorPaused = true` or `LakemirrorPhase = "blocked"`.
var (
	SATable  = temporal.NewSearchAttributeKeyKeyword("LakemirrorTable")
	SATopic  = temporal.NewSearchAttributeKeyKeyword("LakemirrorTopic")
	SAPhase  = temporal.NewSearchAttributeKeyKeyword("LakemirrorPhase")
	SAPaused = temporal.NewSearchAttributeKeyBool("LakemirrorPaused")
)

// SearchAttributeTypes are the search attributes above with their types:
// what a namespace must have registered for the table workflows (the dev
// stack registers them; on other clusters `temporal operator
// search-attribute create`, see docs/operating.md).
var SearchAttributeTypes = map[string]enumspb.IndexedValueType{
	SATable.GetName():  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SATopic.GetName():  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SAPhase.GetName():  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SAPaused.GetName(): enumspb.INDEXED_VALUE_TYPE_BOOL,
}

// searchAttributes publishes the phase when it changes: the
// LakemirrorPhase and LakemirrorPaused search attributes, and the gauge
// lakemirror_table_phase{table,phase} (1 for the current phase, 0 for the
// one before; through the SDK's metrics handler, so on the /metrics of the
// worker running the workflow, and never during replay). The search
// attributes are on only when the workflow was started with
// LakemirrorTable set (the attributes are registered on the server);
// otherwise upserting would fail every workflow task.
type searchAttributes struct {
	on          bool
	phase       string
	paused      bool
	set         bool
	metricPhase string
	midBatch    workflow.Version // publishing while blocked or retrying (a versioned change); -2 until asked
}

// PhaseGauge is the name of the per-table phase gauge.
const PhaseGauge = "lakemirror_table_phase"

func newSearchAttributes(ctx workflow.Context) *searchAttributes {
	_, on := workflow.GetTypedSearchAttributes(ctx).GetKeyword(SATable)
	return &searchAttributes{on: on, midBatch: -2}
}

// publish publishes st's phase from inside a batch (blocked, retrying,
// schema-blocked, and back); a no-op for st without a publisher.
func (st *TableState) publish(ctx workflow.Context) {
	s := st.published
	if s == nil {
		return
	}
	if s.on && s.midBatch == -2 {
		s.midBatch = workflow.GetVersion(ctx, publishMidBatchVersion, workflow.DefaultVersion, 1)
	}
	if s.midBatch == workflow.DefaultVersion {
		on := s.on
		s.on = false // the metric only
		s.upsert(ctx, st)
		s.on = on
		return
	}
	s.upsert(ctx, st)
}

func (s *searchAttributes) upsert(ctx workflow.Context, st *TableState) {
	st.showDetails(ctx) // the Web UI's current details follow every publish (no command)
	if s.metricPhase != st.Phase {
		mh := workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"table": st.Spec.Table})
		if s.metricPhase != "" {
			mh.WithTags(map[string]string{"phase": s.metricPhase}).Gauge(PhaseGauge).Update(0)
		}
		mh.WithTags(map[string]string{"phase": st.Phase}).Gauge(PhaseGauge).Update(1)
		s.metricPhase = st.Phase
	}
	if !s.on || (s.set && s.phase == st.Phase && s.paused == st.Paused) {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, SAPhase.ValueSet(st.Phase), SAPaused.ValueSet(st.Paused)); err != nil {
		workflow.GetLogger(ctx).Warn("upsert search attributes", "error", err)
		return
	}
	s.phase, s.paused, s.set = st.Phase, st.Paused, true
}
