package workflows

import (
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

// searchAttributes upserts phase and paused when they change. It is on
// only when the workflow was started with LakemirrorTable set (the
// attributes are registered on the server); otherwise upserting would
// fail every workflow task.
type searchAttributes struct {
	on     bool
	phase  string
	paused bool
	set    bool
}

func newSearchAttributes(ctx workflow.Context) *searchAttributes {
	_, on := workflow.GetTypedSearchAttributes(ctx).GetKeyword(SATable)
	return &searchAttributes{on: on}
}

func (s *searchAttributes) upsert(ctx workflow.Context, st *TableState) {
	if !s.on || (s.set && s.phase == st.Phase && s.paused == st.Paused) {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, SAPhase.ValueSet(st.Phase), SAPaused.ValueSet(st.Paused)); err != nil {
		workflow.GetLogger(ctx).Warn("upsert search attributes", "error", err)
		return
	}
	s.phase, s.paused, s.set = st.Phase, st.Paused, true
}
