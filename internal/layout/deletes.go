package layout

import (
	"fmt"
	"strings"
)

// DeleteFormat is how a table's mirror and history remove a replaced
// row: Iceberg v2 position-delete files (Parquet, file_path + pos) or
// Iceberg v3 deletion vectors (one Roaring bitmap per data file, a
// `deletion-vector-v1` blob in a Puffin file). It is chosen when the
// tables are created and fixed for their life: the mirror and history
// are created with format-version 2 for DeletePosition and 3 for
// DeleteVector (a v3 table takes deletion vectors only). Bronze has no
// deletes and stays format-version 2 either way. The zero value is
// DeletePosition.
type DeleteFormat string

const (
	// DeletePosition is v2 position deletes (the default): read by every
	// Iceberg reader that reads v2 merge-on-read tables.
	DeletePosition DeleteFormat = "position"
	// DeleteVector is v3 deletion vectors (Puffin `deletion-vector-v1`).
	DeleteVector DeleteFormat = "dv"
)

// DeleteFormats lists the accepted values, default first.
var DeleteFormats = []DeleteFormat{DeletePosition, DeleteVector}

// ParseDeleteFormat reads an operator's value (any ASCII case, spaces
// trimmed): "position" (also "" and "positional", "v2") or "dv" (also
// "deletion-vector", "deletion-vectors", "v3"). Errors: any other value,
// with the accepted ones.
func ParseDeleteFormat(s string) (DeleteFormat, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "position", "positional", "v2":
		return DeletePosition, nil
	case "dv", "deletion-vector", "deletion-vectors", "v3":
		return DeleteVector, nil
	}
	return "", fmt.Errorf("%w %q: want a delete format, position (v2 position deletes) or dv (v3 deletion vectors)", ErrSyntax, s)
}

// Or is f, or DeletePosition when f is zero.
func (f DeleteFormat) Or() DeleteFormat {
	if f == "" {
		return DeletePosition
	}
	return f
}

// FormatVersion is the Iceberg table format version the mirror and
// history are created with for f: 3 for DeleteVector, 2 otherwise.
func (f DeleteFormat) FormatVersion() int {
	if f == DeleteVector {
		return 3
	}
	return 2
}

// Validate checks that f is zero or one of DeleteFormats.
func (f DeleteFormat) Validate() error {
	if f == "" || f == DeletePosition || f == DeleteVector {
		return nil
	}
	return fmt.Errorf("%w %q: want a delete format, position or dv", ErrSyntax, string(f))
}

// String is the value as an operator writes it ("position" for zero).
func (f DeleteFormat) String() string { return string(f.Or()) }

// Describe is the format as status shows it: "position (v2 position
// deletes)" or "dv (v3 deletion vectors)".
func (f DeleteFormat) Describe() string {
	if f.Or() == DeleteVector {
		return "dv (Iceberg v3 deletion vectors)"
	}
	return "position (Iceberg v2 position deletes)"
}

// Readers says what a reader of a table with delete format f needs, as
// docs/readers.md records it: pyiceberg, DuckDB's iceberg extension and
// Spark 4 with Iceberg 1.10 tested (internal/lake TestDeletionVectorReaders,
// the versions of scripts/realstack/requirements.txt and
// scripts/spark/requirements.txt), and Trino 476 (scripts/trino/run.sh),
// which reads position deletes and refuses deletion vectors.
func (f DeleteFormat) Readers() string {
	if f.Or() == DeleteVector {
		return "deletion vectors (format-version 3): pyiceberg 0.12, DuckDB 1.5.5 (iceberg extension) and Spark 4.0 with Iceberg 1.10 read them (tested; a mirror created with the old soft-delete column _deleted, a name Iceberg reserves, needs it renamed to _is_deleted for Spark); Trino 476 refuses them (ICEBERG_BAD_DATA: Unexpected PUFFIN file format: keep position deletes for a table Trino 476 reads), as does a reader without format-version 3 support (Iceberg's Java library before 1.8, by its release notes); see docs/readers.md"
	}
	return "position deletes (format-version 2): pyiceberg 0.12, DuckDB 1.5.5 (iceberg extension) and Spark 4.0 with Iceberg 1.10 read them (tested; a mirror created with the old soft-delete column _deleted, a name Iceberg reserves, needs it renamed to _is_deleted for Spark), and Trino 476 (tested), as does every reader of Iceberg v2 merge-on-read tables; see docs/readers.md"
}
