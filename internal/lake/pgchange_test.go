package lake

import "github.com/lakemirror/lakemirror/internal/sample"

var pgChange = sample.PostgresChange
