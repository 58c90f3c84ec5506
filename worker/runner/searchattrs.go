package runner

import (
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/lakemirror/lakemirror/workflows"
)

// SearchAttributes the pipeline keeps on table workflows (Web UI filters):
// workflows.SearchAttributeTypes. The embedded dev stack that registers
// them is internal/devstack (StartStack), which the production worker
// does not link.
var SearchAttributes map[string]enumspb.IndexedValueType = workflows.SearchAttributeTypes
