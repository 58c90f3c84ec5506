package payload

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// activityTypes is each activity's argument types (after the context)
// and result type, as the workflows pass and read them (names.go).
var activityTypes = map[string]struct {
	args   []reflect.Type
	result reflect.Type
}{
	ActivityRecover:                   {[]reflect.Type{reflect.TypeFor[TableSpec]()}, reflect.TypeFor[RecoverResult]()},
	ActivityPlanBatch:                 {[]reflect.Type{reflect.TypeFor[PlanRequest]()}, reflect.TypeFor[Plan]()},
	ActivityApplyBatch:                {[]reflect.Type{reflect.TypeFor[ApplyRequest]()}, reflect.TypeFor[ApplyResult]()},
	ActivityRebuildKeys:               {[]reflect.Type{reflect.TypeFor[RebuildRequest]()}, reflect.TypeFor[RebuildResult]()},
	ActivityClaimTable:                {[]reflect.Type{reflect.TypeFor[ClaimRequest]()}, reflect.TypeFor[ClaimResult]()},
	ActivityTableOwner:                {[]reflect.Type{reflect.TypeFor[string]()}, reflect.TypeFor[string]()},
	ActivityLoadTable:                 {[]reflect.Type{reflect.TypeFor[LoadRequest]()}, reflect.TypeFor[LoadResult]()},
	ActivitySignalIncrementalSnapshot: {[]reflect.Type{reflect.TypeFor[TableSpec](), reflect.TypeFor[string]()}, reflect.TypeFor[SignalResult]()},
	ActivityResolveBackfill:           {[]reflect.Type{reflect.TypeFor[BackfillRequest]()}, reflect.TypeFor[[]Range]()},
	ActivityMaintain:                  {[]reflect.Type{reflect.TypeFor[MaintenanceRequest]()}, reflect.TypeFor[MaintenanceResult]()},
	ActivityErase:                     {[]reflect.Type{reflect.TypeFor[EraseRequest]()}, reflect.TypeFor[EraseResult]()},
	ActivityValidate:                  {[]reflect.Type{reflect.TypeFor[ValidationRequest]()}, reflect.TypeFor[ValidationResult]()},
	ActivityReconcile:                 {[]reflect.Type{reflect.TypeFor[ReconcileRequest]()}, reflect.TypeFor[ReconcileResult]()},
}

type recordedPayloads struct {
	Payloads []struct {
		Data []byte `json:"data"` // base64 in the history's JSON, decoded by encoding/json
	} `json:"payloads"`
}

type recordedEvent struct {
	EventID   string `json:"eventId"`
	EventType string `json:"eventType"`
	Started   *struct {
		Memo *struct {
			Fields map[string]json.RawMessage `json:"fields"`
		} `json:"memo"`
	} `json:"workflowExecutionStartedEventAttributes"`
	Modified *struct {
		Memo *struct {
			Fields map[string]json.RawMessage `json:"fields"`
		} `json:"upsertedMemo"`
	} `json:"workflowPropertiesModifiedEventAttributes"`
	Scheduled *struct {
		ActivityType struct {
			Name string `json:"name"`
		} `json:"activityType"`
		Input recordedPayloads `json:"input"`
	} `json:"activityTaskScheduledEventAttributes"`
	Completed *struct {
		ScheduledEventID string           `json:"scheduledEventId"`
		Result           recordedPayloads `json:"result"`
	} `json:"activityTaskCompletedEventAttributes"`
}

// roundTrip decodes data into a new value of type typ and encodes it
// again, as Temporal's JSON payload converter does (encoding/json).
func roundTrip(t *testing.T, typ reflect.Type, data []byte) []byte {
	t.Helper()
	v := reflect.New(typ)
	if err := json.Unmarshal(data, v.Interface()); err != nil {
		t.Fatalf("decode %s into %v: %v", data, typ, err)
	}
	out, err := json.Marshal(v.Elem().Interface())
	if err != nil {
		t.Fatalf("encode %v: %v", typ, err)
	}
	return out
}

// The newest recorded histories of every kind (workflows/testdata/replay,
// recorded by worker/runner's recorders with the workflows and activities
// of their time): every activity input and result and every memo "spec"
// in them decodes into today's payload types and encodes back to the same
// bytes, so these types carry exactly the JSON the workflows recorded.
func TestRecordedPayloadsRoundTrip(t *testing.T) {
	files := []string{"v9-stream.json", "v9-blocked.json", "v9-paused.json", "v9-handover.json",
		"v8-load.json", "v8-load-failing.json", "v7-maintenance.json"}
	checked := map[string]int{}
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("..", "..", "workflows", "testdata", "replay", f))
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Events []recordedEvent `json:"events"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		scheduled := map[string]string{} // event id → activity name
		same := func(what string, typ reflect.Type, data []byte) {
			if got := roundTrip(t, typ, data); !bytes.Equal(got, data) {
				t.Errorf("%s: %s as %v:\nrecorded %s\nencoded  %s", f, what, typ, data, got)
			}
			checked[what]++
		}
		memo := func(fields map[string]json.RawMessage) {
			if fields["spec"] == nil {
				return
			}
			var p struct {
				Data []byte `json:"data"`
			}
			if err := json.Unmarshal(fields["spec"], &p); err != nil {
				t.Fatalf("%s: memo spec: %v", f, err)
			}
			same("memo spec", reflect.TypeFor[TableSpec](), p.Data)
		}
		for _, e := range h.Events {
			switch {
			case e.Started != nil && e.Started.Memo != nil:
				memo(e.Started.Memo.Fields)
			case e.Modified != nil && e.Modified.Memo != nil:
				memo(e.Modified.Memo.Fields)
			case e.Scheduled != nil:
				name := e.Scheduled.ActivityType.Name
				types, ok := activityTypes[name]
				if !ok {
					t.Fatalf("%s: activity %q has no name constant", f, name)
				}
				if len(e.Scheduled.Input.Payloads) != len(types.args) {
					t.Fatalf("%s: %s scheduled with %d arguments, want %d", f, name, len(e.Scheduled.Input.Payloads), len(types.args))
				}
				for i, p := range e.Scheduled.Input.Payloads {
					same(name+" input", types.args[i], p.Data)
				}
				scheduled[e.EventID] = name
			case e.Completed != nil:
				name := scheduled[e.Completed.ScheduledEventID]
				for _, p := range e.Completed.Result.Payloads {
					same(name+" result", activityTypes[name].result, p.Data)
				}
			}
		}
	}
	// every kind the fixtures hold was seen (a fixture format change
	// would otherwise check nothing)
	for _, what := range []string{"memo spec", "Recover input", "Recover result", "PlanBatch input", "PlanBatch result",
		"ApplyBatch input", "ApplyBatch result", "RebuildKeys input", "RebuildKeys result", "ClaimTable input",
		"ClaimTable result", "TableOwner input", "TableOwner result", "LoadTable input", "LoadTable result",
		"Maintain input", "Maintain result"} {
		if checked[what] == 0 {
			t.Errorf("no %s in %v", what, files)
		}
	}
	t.Logf("checked: %v", checked)
}
