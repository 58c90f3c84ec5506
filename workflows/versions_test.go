package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Every workflow.GetVersion of the workflows names a marker declared in
// versions.go (one list of markers with their dates and fixtures), every
// marker there is asked somewhere, and every marker has exactly one entry
// in versionMarkers.
func TestVersionMarkersListed(t *testing.T) {
	fset := token.NewFileSet()
	listed := map[string]bool{} // constant name → asked by a GetVersion
	vf, err := parser.ParseFile(fset, "versions.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range vf.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.Name != "supportWindow" {
						listed[n.Name] = false
					}
				}
			}
		}
	}
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "GetVersion" || len(call.Args) < 2 {
				return true
			}
			id, ok := call.Args[1].(*ast.Ident)
			if !ok {
				t.Errorf("%s: GetVersion with a change id that is not a versions.go marker", fset.Position(call.Pos()))
				return true
			}
			if _, ok := listed[id.Name]; !ok {
				t.Errorf("%s: GetVersion(%s) is not listed in versions.go", fset.Position(call.Pos()), id.Name)
			}
			listed[id.Name] = true
			return true
		})
	}
	for name, used := range listed {
		if !used {
			t.Errorf("versions.go lists %s, which no GetVersion asks", name)
		}
	}
	if len(versionMarkers) != len(listed) {
		t.Errorf("versionMarkers has %d entries for %d markers", len(versionMarkers), len(listed))
	}
	seen := map[string]bool{}
	for _, m := range versionMarkers {
		if seen[m.id] {
			t.Errorf("versionMarkers lists %q twice", m.id)
		}
		seen[m.id] = true
		if _, err := m.removableFrom(); err != nil {
			t.Errorf("%s: added %q: %v", m.id, m.added, err)
		}
		if len(m.old) == 0 && m.noOld == "" || len(m.new) == 0 {
			t.Errorf("%s names no recorded history for its old branch (and says not why) or none for its new one", m.id)
		}
	}
}

// The earliest removal day is the marker's day plus the 90-day window.
func TestVersionMarkerRemovableFrom(t *testing.T) {
	got, err := versionMarker{added: "2026-12-02"}.removableFrom()
	if err != nil {
		t.Fatal(err)
	}
	if got.Format(time.DateOnly) != "2027-03-02" {
		t.Errorf("removable from %s, want 2027-03-02", got.Format(time.DateOnly))
	}
}

// The recorded histories versionMarkers names for each marker exist and
// are exactly those whose replay asks the marker: old with
// workflow.DefaultVersion (the old branch), new with version 1. Every
// history of the marker's workflow is replayed on today's code with an
// interceptor that sees each GetVersion.
func TestVersionMarkerFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "replay", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata/replay (%v)", err)
	}
	type replayed struct {
		workflow string
		asked    map[string]workflow.Version // change id → the version the replay got
	}
	histories := map[string]replayed{}
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		seen := &versionsSeen{asked: map[string]workflow.Version{}}
		rp, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{seen}})
		if err != nil {
			t.Fatal(err)
		}
		rp.RegisterWorkflowWithOptions(TableWorkflow, workflow.RegisterOptions{Name: TableWorkflowName})
		rp.RegisterWorkflowWithOptions(MaintenanceWorkflow, workflow.RegisterOptions{Name: MaintenanceWorkflowName})
		rp.RegisterWorkflowWithOptions(GroupWorkflow, workflow.RegisterOptions{Name: GroupWorkflowName})
		if err := rp.ReplayWorkflowHistory(nil, h); err != nil {
			t.Fatalf("%s does not replay: %v", f, err)
		}
		name := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
		histories[filepath.Base(f)] = replayed{workflow: name, asked: seen.asked}
	}
	matches := func(m versionMarker, patterns []string, file string) bool {
		return slices.ContainsFunc(patterns, func(p string) bool {
			ok, err := path.Match(p, file)
			if err != nil {
				t.Errorf("%s: pattern %q: %v", m.id, p, err)
			}
			return ok
		})
	}
	for _, m := range versionMarkers {
		for _, p := range append(append([]string(nil), m.old...), m.new...) {
			found := false
			for file, h := range histories {
				if ok, _ := path.Match(p, file); ok && h.workflow == m.workflow {
					found = true
				}
			}
			if !found {
				t.Errorf("%s names %q: no recorded %s history matches", m.id, p, m.workflow)
			}
		}
		for file, h := range histories {
			if h.workflow != m.workflow {
				continue
			}
			v, asked := h.asked[m.id]
			inOld, inNew := matches(m, m.old, file), matches(m, m.new, file)
			switch {
			case asked && v == workflow.DefaultVersion && !inOld:
				t.Errorf("%s: %s takes the old branch, not listed in old", m.id, file)
			case asked && v == 1 && !inNew:
				t.Errorf("%s: %s takes the new branch, not listed in new", m.id, file)
			case !asked && (inOld || inNew):
				t.Errorf("%s: %s is listed but its replay never asks the marker", m.id, file)
			case asked && v == workflow.DefaultVersion && inNew, asked && v == 1 && inOld:
				t.Errorf("%s: %s is listed on the other branch (got version %d)", m.id, file, v)
			}
		}
	}
}

// versionsSeen is a worker interceptor that records, for each change id a
// replayed workflow asks with workflow.GetVersion, the version it got.
type versionsSeen struct {
	interceptor.WorkerInterceptorBase
	asked map[string]workflow.Version
}

func (s *versionsSeen) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	in := &versionsInbound{seen: s}
	in.Next = next
	return in
}

type versionsInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	seen *versionsSeen
}

func (in *versionsInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	out := &versionsOutbound{seen: in.seen}
	out.Next = outbound
	return in.Next.Init(out)
}

type versionsOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	seen *versionsSeen
}

func (out *versionsOutbound) GetVersion(ctx workflow.Context, changeID string, minSupported, maxSupported workflow.Version) workflow.Version {
	v := out.Next.GetVersion(ctx, changeID, minSupported, maxSupported)
	out.seen.asked[changeID] = v
	return v
}
