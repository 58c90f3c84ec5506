package main

import (
	"encoding/json"
	"testing"
)

// The schema and resnapshot commands' JSON: the signal with the decision
// or the mode it carried, empty fields left out.
func TestSentJSONFields(t *testing.T) {
	for _, c := range []struct {
		v    sentJSON
		want string
	}{
		{sentJSON{Table: "a.b", WorkflowID: "lakemirror-table-a.b", Signal: "schema", Decision: "evolve"}, `{"table":"a.b","workflow_id":"lakemirror-table-a.b","signal":"schema","decision":"evolve"}`},
		{sentJSON{Table: "a.b", WorkflowID: "lakemirror-table-a.b", Signal: "resnapshot", Mode: "incremental"}, `{"table":"a.b","workflow_id":"lakemirror-table-a.b","signal":"resnapshot","mode":"incremental"}`},
		{sentJSON{Table: "a.b", WorkflowID: "lakemirror-table-a.b", Signal: "stop"}, `{"table":"a.b","workflow_id":"lakemirror-table-a.b","signal":"stop"}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: %s, %v; want %s", c.v, b, err, c.want)
		}
	}
}

// start takes its topic as the argument: a --topic flag (as other tools
// spell it) is a usage error whose message says so.
func TestStartTopicFlagHint(t *testing.T) {
	code, stdout, stderr := cli(t, "start", "--table", "shop.orders", "--topic", "dbserver1.public.orders", "--key", "id")
	want := "starter: unknown flag: --topic (the topic is start's argument: starter start TOPIC --table NS.TABLE --key COL)\n"
	if code != exitUsage || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, exitUsage, want)
	}
}
