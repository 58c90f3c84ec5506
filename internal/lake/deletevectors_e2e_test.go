//go:build e2e

package lake

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/schemas"
)

// readersPython is the Python of the pinned reader environment
// (scripts/realstack/requirements.txt: pyiceberg, DuckDB with its iceberg
// extension): $LAKEMIRROR_PYTHON (scripts/realstack/run.sh sets it), else
// the virtualenv scripts/realstack/setup.sh makes in its cache; "" when
// neither exists.
func readersPython(t *testing.T) string {
	if p := os.Getenv("LAKEMIRROR_PYTHON"); p != "" {
		return p
	}
	req, err := os.ReadFile("../../scripts/realstack/requirements.txt")
	if err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("LAKEMIRROR_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "lakemirror-realstack")
	}
	sum := sha1.Sum(req)
	venv := filepath.Join(cache, "venv-"+hex.EncodeToString(sum[:])[:10])
	if _, err := os.Stat(filepath.Join(venv, ".complete")); err != nil {
		return ""
	}
	return filepath.Join(venv, "bin", "python")
}

// trinoRefusesDV is Trino 476's error for a table with deletion vectors
// (check_readers.py's rendering of it).
const trinoRefusesDV = "RuntimeError: ICEBERG_BAD_DATA: Unexpected PUFFIN file format"

// readerResult is check_readers.py's report of one table.
type readerResult struct {
	FormatVersion int `json:"format_version"`
	PyIceberg     struct {
		Rows  []string `json:"rows"`
		Error string   `json:"error"`
	} `json:"pyiceberg"`
	DuckDB struct {
		Rows  []string `json:"rows"`
		Error string   `json:"error"`
	} `json:"duckdb"`
	Spark *struct {
		Rows    []string `json:"rows"`
		Error   string   `json:"error"`
		Without *struct {
			Columns []string `json:"columns"`
			Rows    []string `json:"rows"`
			Error   string   `json:"error"`
		} `json:"without"`
	} `json:"spark"`
	Trino *struct {
		Rows  []string `json:"rows"`
		Error string   `json:"error"`
	} `json:"trino"`
}

// The readers table of docs/readers.md, tested: the same changes written
// with position deletes (format-version 2) and with deletion vectors
// (format-version 3), mirror and history, read by pyiceberg and by
// DuckDB's iceberg extension (scripts/readers/check_readers.py, the
// versions of scripts/realstack/requirements.txt). Runs where that
// environment is (scripts/realstack/run.sh runs it with
// LAKEMIRROR_PYTHON); skipped elsewhere. With LAKEMIRROR_SPARK_JAR (the
// Iceberg Spark runtime jar; scripts/spark/run.sh sets it and
// LAKEMIRROR_PYTHON to its venv) Spark 4 reads the same tables and its
// rows and errors are asserted too; with LAKEMIRROR_TRINO (the URL of a
// Trino server: scripts/trino/run.sh starts one and sets it) Trino's: 476
// reads the position-delete tables exactly and refuses the
// deletion-vector ones.
func TestDeletionVectorReaders(t *testing.T) {
	python := readersPython(t)
	if python == "" {
		t.Skip("no reader environment: run scripts/realstack/setup.sh, or set LAKEMIRROR_PYTHON to a Python with scripts/realstack/requirements.txt")
	}
	sparkJar := os.Getenv("LAKEMIRROR_SPARK_JAR")
	trino := os.Getenv("LAKEMIRROR_TRINO")
	dir := t.TempDir()
	batches := [][]byte{
		orderValue("c", 100, 0, "", orderRow(1, "eu", 10)),
		orderValue("c", 101, 0, "", orderRow(2, "us", 20)),
		orderValue("c", 102, 0, "", orderRow(3, "eu", 30)),
	}
	later := [][]byte{
		orderValue("u", 200, 1, orderRow(1, "eu", 10), orderRow(1, "eu", 11)),
		orderValue("d", 201, 1, orderRow(2, "us", 20), ""),
	}
	last := [][]byte{ // 3 is in the first file too: its deletion vector is replaced by one of three positions
		orderValue("u", 300, 2, orderRow(3, "eu", 30), orderRow(3, "eu", 31)),
	}
	for _, x := range []struct {
		ns string
		f  layout.DeleteFormat
	}{{"v2", layout.DeletePosition}, {"v3", layout.DeleteVector}} {
		cat, err := lakecat.OpenCatalog(context.Background(), lakecat.CatalogConfig{LocalDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{"id"}
		name := lakecat.TableName{Namespace: x.ns, Name: "orders"}
		tw := NewTableWriter(cat, name, keys, WriterOptions{History: true, DeleteFormat: x.f, StateDir: t.TempDir()})
		p := &layoutPipeline{t: t, tw: tw, cat: cat, dec: schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: keys})}
		p.batch(batches...)
		p.batch(later...)
		p.batch(last...)
		tw.Mirror.State().Close()
	}
	args := []string{"../../scripts/readers/check_readers.py", "--catalog-db", filepath.Join(dir, "catalog.db"), "--warehouse", filepath.Join(dir, "warehouse")}
	for _, ns := range []string{"v2", "v3"} {
		args = append(args, "--table", ns+".orders:id,amount,"+lakecat.ColDeleted, "--table", ns+".orders_history:id,amount,"+lakecat.ColIsCurrent)
	}
	if sparkJar != "" {
		args = append(args, "--spark-jar", sparkJar)
	}
	if trino != "" {
		args = append(args, "--trino", trino)
	}
	cmd := exec.Command(python, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check_readers.py: %v\n%s", err, stderr.String())
	}
	var res map[string]readerResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("check_readers.py printed %s: %v", out, err)
	}
	t.Logf("check_readers.py: %s", out)
	mirror := []string{"1 11 false", "2 20 true", "3 31 false"}
	history := []string{"1 10 false", "1 11 true", "2 20 false", "3 30 false", "3 31 true"}
	for ns, version := range map[string]int{"v2": 2, "v3": 3} {
		for ident, want := range map[string][]string{ns + ".orders": mirror, ns + ".orders_history": history} {
			r := res[ident]
			if r.FormatVersion != version {
				t.Errorf("%s: format version %d, want %d", ident, r.FormatVersion, version)
			}
			if !slices.Equal(r.PyIceberg.Rows, want) || r.PyIceberg.Error != "" {
				t.Errorf("%s: pyiceberg read %q (error %q), want %q", ident, r.PyIceberg.Rows, r.PyIceberg.Error, want)
			}
			if !slices.Equal(r.DuckDB.Rows, want) || r.DuckDB.Error != "" {
				t.Errorf("%s: DuckDB read %q (error %q), want %q", ident, r.DuckDB.Rows, r.DuckDB.Error, want)
			}
		}
		// Trino 476: position deletes exactly; deletion vectors refused
		// (its Iceberg connector reads no Puffin delete files)
		for ident, want := range map[string][]string{ns + ".orders": mirror, ns + ".orders_history": history} {
			r := res[ident].Trino
			switch {
			case trino == "":
			case version == 2 && (r == nil || !slices.Equal(r.Rows, want) || r.Error != ""):
				t.Errorf("%s: Trino read %+v, want %q", ident, r, want)
			case version == 3 && (r == nil || len(r.Rows) != 0 || r.Error != trinoRefusesDV):
				t.Errorf("%s: Trino read %+v, want the error %q", ident, r, trinoRefusesDV)
			}
		}
		if sparkJar == "" {
			continue
		}
		if s := res[ns+".orders_history"].Spark; s == nil || !slices.Equal(s.Rows, history) || s.Error != "" {
			t.Errorf("%s.orders_history: Spark read %+v, want %q", ns, s, history)
		}
		// Spark: mirror (its soft-delete column _is_deleted) and history exactly
		if s := res[ns+".orders"].Spark; s == nil || !slices.Equal(s.Rows, mirror) || s.Error != "" || s.Without != nil {
			t.Errorf("%s.orders: Spark read %+v, want %q", ns, s, mirror)
		}
	}
}
