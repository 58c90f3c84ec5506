package evolve

import (
	"fmt"
	"strings"
)

// SchemaBlockedError stops a batch whose events carry a schema change the
// pipeline may not apply on its own (an incompatible type change, a dropped column that still has values, a rename, which looks
// like both). Nothing of the batch is written; an operator decides.
type SchemaBlockedError struct {
	Fingerprint string
	Changes     []SchemaChange
	// EvolveRefused: why DecisionEvolve cannot take this change ("" when
	// it can); DecisionSkip still can.
	EvolveRefused string
}

func (e *SchemaBlockedError) Error() string {
	var parts []string
	for _, c := range e.Changes {
		if !c.Allowed {
			parts = append(parts, c.String())
		}
	}
	if e.EvolveRefused != "" {
		return fmt.Sprintf("schema change needs a decision (skip; evolve is refused: %s): %s", e.EvolveRefused, strings.Join(parts, "; "))
	}
	return fmt.Sprintf("schema change needs a decision (evolve or skip): %s", strings.Join(parts, "; "))
}
