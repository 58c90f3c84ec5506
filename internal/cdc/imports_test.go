package cdc

import (
	"bufio"
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The import rules of docs/design.md ("Layout"), checked over the source
// text (go/parser, imports only) of every non-test .go file whatever its
// build tags:
//
//   - the pure core (internal/cdc and every package below it such as
//     internal/cdc/typing, internal/merge, internal/validate, internal/cut) imports only
//     the standard library and the core's event model, internal/cdc[/...];
//   - internal/payload, what the workflows persist and pass around,
//     imports only the standard library, the core (internal/cdc[/...],
//     internal/validate), internal/layout and internal/names (the naming
//     rules its settings check), which import only the standard
//     library;
//   - no package under internal/ imports a package of this module outside
//     internal/ (schemas, activities, workflows, ...): the arrows point
//     from the top-level packages down into internal/, never up;
//   - workflows links no adapter (TestWorkflowsLinkNoAdapter, over the
//     go command's dependency list).

// moduleRoot returns the directory of go.mod above the test's directory
// and the module path it declares.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(m), `"`)
				}
			}
			t.Fatalf("%s/go.mod declares no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// fileImport is one import of one non-test file.
type fileImport struct {
	file string // slash path relative to the module root
	path string // the imported package
}

// importsUnder returns the imports of the non-test .go files in dir and,
// with recursive, in the directories below it (testdata and hidden
// directories excepted, as the go command skips them).
func importsUnder(t *testing.T, root, dir string, recursive bool) []fileImport {
	t.Helper()
	var out []fileImport
	fset := token.NewFileSet()
	base := filepath.Join(root, filepath.FromSlash(dir))
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != base && (!recursive || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			out = append(out, fileImport{file: filepath.ToSlash(rel), path: ip})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// isStandard reports whether path names a standard-library package: its
// first element has no dot (the go command's rule for the standard
// library; every other module path here starts with a domain). "C" (cgo)
// is not one.
func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return path != "C" && !strings.Contains(first, ".")
}

func TestCoreImportsOnlyStandardLibrary(t *testing.T) {
	root, module := moduleRoot(t)
	core := module + "/internal/cdc"
	var imports []fileImport
	imports = append(imports, importsUnder(t, root, "internal/cdc", true)...) // cdc, cdc/typing, ...
	imports = append(imports, importsUnder(t, root, "internal/merge", false)...)
	imports = append(imports, importsUnder(t, root, "internal/validate", false)...)
	imports = append(imports, importsUnder(t, root, "internal/cut", false)...)
	dirs := map[string]bool{}
	for _, imp := range imports {
		dirs[path.Dir(imp.file)] = true
		if isStandard(imp.path) || imp.path == core || strings.HasPrefix(imp.path, core+"/") {
			continue
		}
		t.Errorf("%s imports %q: the core (internal/cdc[/...], internal/merge, internal/validate, internal/cut) imports only the standard library and internal/cdc[/...]", imp.file, imp.path)
	}
	// internal/layout and internal/names: the standard library only
	for _, dir := range []string{"internal/layout", "internal/names"} {
		for _, imp := range importsUnder(t, root, dir, false) {
			dirs[path.Dir(imp.file)] = true
			if !isStandard(imp.path) {
				t.Errorf("%s imports %q: %s imports only the standard library", imp.file, imp.path, dir)
			}
		}
	}
	// internal/payload: the standard library, the core and internal/layout
	for _, imp := range importsUnder(t, root, "internal/payload", false) {
		dirs[path.Dir(imp.file)] = true
		if isStandard(imp.path) || imp.path == core || strings.HasPrefix(imp.path, core+"/") ||
			imp.path == module+"/internal/validate" || imp.path == module+"/internal/layout" || imp.path == module+"/internal/names" {
			continue
		}
		t.Errorf("%s imports %q: internal/payload imports only the standard library, internal/cdc[/...], internal/validate, internal/layout and internal/names", imp.file, imp.path)
	}
	// The walk read the packages it is meant to guard.
	for _, want := range []string{"internal/cdc", "internal/cdc/typing", "internal/merge", "internal/validate", "internal/cut", "internal/layout", "internal/names", "internal/payload"} {
		if !dirs[want] {
			t.Errorf("no import seen in %s: the test no longer reads that package", want)
		}
	}
}

// The workflows link no adapter: the non-test dependencies of
// ./workflows (go list -deps, every build tag of this platform's default
// build) hold no iceberg-go, arrow-go, franz-go or pgx package, and
// neither activities nor internal/lake (their payloads are
// internal/payload's). They do hold internal/payload, so the list is the
// workflows'.
func TestWorkflowsLinkNoAdapter(t *testing.T) {
	root, module := moduleRoot(t)
	cmd := exec.Command("go", "list", "-deps", "./workflows")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -deps ./workflows: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps ./workflows: %v", err)
	}
	deps := strings.Fields(string(out))
	forbidden := []string{"github.com/apache/iceberg-go", "github.com/apache/arrow-go", "github.com/twmb/franz-go",
		"github.com/jackc/pgx", module + "/activities", module + "/internal/lake"}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("workflows depends on %s (forbidden: %s)", d, f)
			}
		}
	}
	for _, want := range []string{module + "/workflows", module + "/internal/payload"} {
		if !slices.Contains(deps, want) {
			t.Errorf("go list -deps ./workflows lacks %s: %v", want, deps)
		}
	}
}

func TestInternalImportsNothingAbove(t *testing.T) {
	root, module := moduleRoot(t)
	n := 0
	for _, imp := range importsUnder(t, root, "internal", true) {
		n++
		inModule := imp.path == module || strings.HasPrefix(imp.path, module+"/")
		inInternal := imp.path == module+"/internal" || strings.HasPrefix(imp.path, module+"/internal/")
		if inModule && !inInternal {
			t.Errorf("%s imports %q: packages under internal/ must not import the module's packages outside internal/ (schemas, activities, workflows, ...)", imp.file, imp.path)
		}
	}
	if n == 0 {
		t.Error("no import seen under internal/")
	}
}

// lakeLayers are the packages of internal/lake from the bottom up: a
// package may import only the packages of lower layers (and none of its
// own layer but itself); internal/lake itself is the top. A new package
// under internal/lake must be given its layer here.
var lakeLayers = [][]string{
	{"internal/lake/parquetio", "internal/lake/keyindex"},                                                      // the Parquet/Arrow codec; the key index
	{"internal/lake/lakecat", "internal/lake/localstate"},                                                      // catalog, table names and loading, schemas, properties; the local state's log, records and sidecar file
	{"internal/lake/maintain", "internal/lake/tableread", "internal/lake/evolve"},                              // snapshot expiry, expired and orphan files, manifest merges, bronze retention; row readers; schema evolution
	{"internal/lake/rowdelta"},                                                                                 // data and delete files per partition, the row-delta commit
	{"internal/lake/erasure", "internal/lake/compact", "internal/lake/validation", "internal/lake/tablestate"}, // erasure on request: the erasures table, the guard, Erase; compaction; the validation table and readers; one table's local write-path state (index, chain log, sidecar, batch plans)
	{"internal/lake/scd2", "internal/lake/cuts"},                                                               // the SCD2 history writer; consistent cuts' tags and the _cuts table
	{"internal/lake"}, // the table writer (the write protocol), the mirror writer, bronze, quarantine, purge
}

// maxLakePackageLines bounds each package under internal/lake, in
// non-test lines (issue 36: one job per package, none of 11,900 lines).
const maxLakePackageLines = 5000

// Inside internal/lake the arrows point down (lakeLayers): no package
// under internal/lake imports internal/lake itself or a package of its
// own or a higher layer, and none has maxLakePackageLines non-test lines
// or more (it logs each package's count).
func TestLakeImportsPointDown(t *testing.T) {
	root, module := moduleRoot(t)
	layer := map[string]int{}
	for i, l := range lakeLayers {
		for _, p := range l {
			layer[p] = i
		}
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, "internal", "lake"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		dir := filepath.ToSlash(rel)
		imports := importsUnder(t, root, dir, false)
		lines := 0
		files, _ := filepath.Glob(filepath.Join(p, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			lines += strings.Count(string(b), "\n")
		}
		if lines == 0 {
			return nil // a directory of directories
		}
		seen[dir] = true
		t.Logf("%s: %d lines of non-test Go", dir, lines)
		if lines >= maxLakePackageLines {
			t.Errorf("%s has %d lines of non-test Go: a package under internal/lake stays under %d (carve out a job of its own)", dir, lines, maxLakePackageLines)
		}
		mine, ok := layer[dir]
		if !ok {
			t.Errorf("%s is in no layer of lakeLayers: give it one", dir)
			return nil
		}
		for _, imp := range imports {
			to, found := strings.CutPrefix(imp.path, module+"/")
			if !found || (to != "internal/lake" && !strings.HasPrefix(to, "internal/lake/")) || to == dir {
				continue
			}
			if l, ok := layer[to]; !ok || l >= mine {
				t.Errorf("%s imports %q: inside internal/lake a package imports only packages of lower layers (lakeLayers)", imp.file, imp.path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range layer {
		if !seen[p] {
			t.Errorf("lakeLayers names %s, which holds no Go file", p)
		}
	}
}
