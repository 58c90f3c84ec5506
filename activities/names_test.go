package activities

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// activitySignatures is what the workflows pass to each activity (after
// the context) and decode its result into, by registered name.
var activitySignatures = map[string]struct {
	args   []reflect.Type
	result reflect.Type
}{
	payload.ActivityRecover:                   {[]reflect.Type{reflect.TypeFor[payload.TableSpec]()}, reflect.TypeFor[payload.RecoverResult]()},
	payload.ActivityPlanBatch:                 {[]reflect.Type{reflect.TypeFor[payload.PlanRequest]()}, reflect.TypeFor[payload.Plan]()},
	payload.ActivityApplyBatch:                {[]reflect.Type{reflect.TypeFor[payload.ApplyRequest]()}, reflect.TypeFor[payload.ApplyResult]()},
	payload.ActivityRebuildKeys:               {[]reflect.Type{reflect.TypeFor[payload.RebuildRequest]()}, reflect.TypeFor[payload.RebuildResult]()},
	payload.ActivityClaimTable:                {[]reflect.Type{reflect.TypeFor[payload.ClaimRequest]()}, reflect.TypeFor[payload.ClaimResult]()},
	payload.ActivityTableOwner:                {[]reflect.Type{reflect.TypeFor[string]()}, reflect.TypeFor[string]()},
	payload.ActivityLoadTable:                 {[]reflect.Type{reflect.TypeFor[payload.LoadRequest]()}, reflect.TypeFor[payload.LoadResult]()},
	payload.ActivitySignalIncrementalSnapshot: {[]reflect.Type{reflect.TypeFor[payload.TableSpec](), reflect.TypeFor[string]()}, reflect.TypeFor[payload.SignalResult]()},
	payload.ActivityResolveBackfill:           {[]reflect.Type{reflect.TypeFor[payload.BackfillRequest]()}, reflect.TypeFor[[]payload.Range]()},
	payload.ActivityMaintain:                  {[]reflect.Type{reflect.TypeFor[payload.MaintenanceRequest]()}, reflect.TypeFor[payload.MaintenanceResult]()},
	payload.ActivityErase:                     {[]reflect.Type{reflect.TypeFor[payload.EraseRequest]()}, reflect.TypeFor[payload.EraseResult]()},
	payload.ActivityValidate:                  {[]reflect.Type{reflect.TypeFor[payload.ValidationRequest]()}, reflect.TypeFor[payload.ValidationResult]()},
	payload.ActivityReconcile:                 {[]reflect.Type{reflect.TypeFor[payload.ReconcileRequest]()}, reflect.TypeFor[payload.ReconcileResult]()},
	payload.ActivityReadGroupTransactions:     {[]reflect.Type{reflect.TypeFor[payload.GroupReadRequest]()}, reflect.TypeFor[payload.GroupReadResult]()},
	payload.ActivityPublishCut:                {[]reflect.Type{reflect.TypeFor[payload.PublishCutRequest]()}, reflect.TypeFor[payload.PublishCutResult]()},
	payload.ActivityLeaveGroup:                {[]reflect.Type{reflect.TypeFor[payload.LeaveGroupRequest]()}, reflect.TypeFor[payload.LeaveGroupResult]()},
}

// activityNameConstants returns the Activity* constants of
// internal/payload/names.go (name → value), read from its source: Go
// cannot list a package's constants by reflection.
func activityNameConstants(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "internal", "payload", "names.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, id := range vs.Names {
			lit, ok := vs.Values[i].(*ast.BasicLit)
			if !strings.HasPrefix(id.Name, "Activity") || !ok || lit.Kind != token.STRING {
				t.Fatalf("names.go: %s is not an Activity* string constant", id.Name)
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			out[id.Name] = v
		}
		return false
	})
	return out
}

// The workflows schedule activities by name (payload.Activity*), and the
// worker registers *Activities, whose methods become the activities of
// their names: every name constant is "Activity" + its value, the value
// is a method of *Activities taking a context and the argument types the
// workflows pass and returning the result type they decode and an error,
// and every exported method has a constant. A renamed method or changed
// signature fails here instead of at a workflow's schedule.
func TestActivityNamesAreMethods(t *testing.T) {
	consts := activityNameConstants(t)
	if len(consts) != len(activitySignatures) {
		t.Errorf("names.go has %d Activity* constants, the test knows %d signatures", len(consts), len(activitySignatures))
	}
	typ := reflect.TypeFor[*Activities]()
	ctxType, errType := reflect.TypeFor[context.Context](), reflect.TypeFor[error]()
	for constName, name := range consts {
		if constName != "Activity"+name {
			t.Errorf("payload.%s = %q: want the constant named Activity%s", constName, name, name)
		}
		want, ok := activitySignatures[name]
		if !ok {
			t.Errorf("payload.%s = %q: no signature in the test", constName, name)
			continue
		}
		m, ok := typ.MethodByName(name)
		if !ok {
			t.Errorf("payload.%s = %q is not a method of *Activities", constName, name)
			continue
		}
		ft := m.Type // receiver first
		in := []reflect.Type{}
		for i := 1; i < ft.NumIn(); i++ {
			in = append(in, ft.In(i))
		}
		out := []reflect.Type{}
		for i := 0; i < ft.NumOut(); i++ {
			out = append(out, ft.Out(i))
		}
		if wantIn := append([]reflect.Type{ctxType}, want.args...); !slices.Equal(in, wantIn) {
			t.Errorf("(*Activities).%s takes %v, the workflows pass %v", name, in, wantIn)
		}
		if wantOut := []reflect.Type{want.result, errType}; !slices.Equal(out, wantOut) {
			t.Errorf("(*Activities).%s returns %v, the workflows decode %v", name, out, wantOut)
		}
	}
	var methods []string
	for i := 0; i < typ.NumMethod(); i++ {
		methods = append(methods, typ.Method(i).Name)
		if _, ok := consts["Activity"+typ.Method(i).Name]; !ok {
			t.Errorf("(*Activities).%s is registered as an activity but has no payload.Activity%s", typ.Method(i).Name, typ.Method(i).Name)
		}
	}
	want := []string{"ApplyBatch", "ClaimTable", "Erase", "LeaveGroup", "LoadTable", "Maintain", "PlanBatch", "PublishCut", "ReadGroupTransactions", "RebuildKeys", "Reconcile",
		"Recover", "ResolveBackfill", "SignalIncrementalSnapshot", "TableOwner", "Validate"}
	if !slices.Equal(methods, want) {
		t.Errorf("methods of *Activities: %v, want %v", methods, want)
	}
}
