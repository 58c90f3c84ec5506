package workflows

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/layout"
)

// A settings update may name the table's delete format but not change
// it; the refusal says how to change it.
func TestSettingsDeleteFormatFixed(t *testing.T) {
	dv, pos := layout.DeleteVector, layout.DeletePosition
	for _, c := range []struct {
		req  *layout.DeleteFormat
		cur  layout.DeleteFormat
		want string
	}{
		{nil, "", ""},
		{&pos, "", ""},
		{&dv, dv, ""},
		{&dv, "", "the delete format is position (Iceberg v2 position deletes) and is fixed when the mirror and history are created (format-version 2); to write dv (Iceberg v3 deletion vectors), stop the table, drop its Iceberg tables and start it again with --delete-format dv (a rebuild from the topic), or mirror the topic into a new table name"},
		{&pos, dv, "the delete format is dv (Iceberg v3 deletion vectors) and is fixed when the mirror and history are created (format-version 3); to write position (Iceberg v2 position deletes), stop the table, drop its Iceberg tables and start it again with --delete-format position (a rebuild from the topic), or mirror the topic into a new table name"},
	} {
		err := SettingsRequest{DeleteFormat: c.req}.CheckDeleteFormat(c.cur)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("request %v on %q: %q, want %q", c.req, c.cur, got, c.want)
		}
	}
}
