package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/workflows"
)

// status shows the table's delete format; --delete-format sets it in
// the spec start builds (the default, position, as the zero value specs
// had before the setting), and a bad value is a usage error.
func TestDeleteFormatStartAndStatus(t *testing.T) {
	for _, c := range []struct {
		flag       string
		spec       layout.DeleteFormat
		statusLine string
	}{
		{"", "", "deletes position (Iceberg v2 position deletes)"},
		{"position", "", "deletes position (Iceberg v2 position deletes)"},
		{"dv", layout.DeleteVector, "deletes dv (Iceberg v3 deletion vectors)"},
	} {
		f := specFlags{settings: payload.TableSpec{StartFrom: "earliest", MaxEvents: 100, MaxWait: 1e9, MaxQuarantine: 1}, deleteFormat: c.flag}
		spec, err := f.spec("s.shop.orders")
		if err != nil {
			t.Fatal(err)
		}
		if spec.DeleteFormat != c.spec {
			t.Errorf("--delete-format %q: spec %q, want %q", c.flag, spec.DeleteFormat, c.spec)
		}
		var b bytes.Buffer
		printStatus(&b, workflows.Status{Table: "shop.orders", Spec: activities.TableSpec{DeleteFormat: spec.DeleteFormat}})
		var got []string
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "deletes") {
				got = append(got, strings.Join(strings.Fields(l), " "))
			}
		}
		if len(got) != 1 || got[0] != c.statusLine {
			t.Errorf("--delete-format %q: status lines %q, want %q", c.flag, got, c.statusLine)
		}
	}
	f := specFlags{settings: payload.TableSpec{StartFrom: "earliest", MaxEvents: 100, MaxWait: 1e9, MaxQuarantine: 1}, deleteFormat: "equality"}
	if _, err := f.spec("s.shop.orders"); err == nil || err.Error() != `--delete-format: layout: invalid field "equality": want a delete format, position (v2 position deletes) or dv (v3 deletion vectors)` {
		t.Errorf("bad --delete-format: %v", err)
	}
}
