package names

import (
	"strings"
	"testing"
)

// Break 35: MaxColumn is documented as SQL Server's and Oracle's limit
// with MySQL's 64 below it, but it counts bytes: MySQL (64) and SQL
// Server (128, sysname is nvarchar) count characters, so a legal column
// of non-ASCII letters is refused. Fails today.
func TestBreakColumnLimitInCharacters(t *testing.T) {
	for _, c := range []struct{ db, name string }{
		{"MySQL, 64 characters (utf8mb3, 192 bytes)", strings.Repeat("注", 64)},
		{"SQL Server, 128 characters (256 bytes)", strings.Repeat("é", 128)},
		{"PostgreSQL, 63 bytes", strings.Repeat("é", 31) + "x"},
	} {
		if err := CheckColumn("key column", c.name); err != nil {
			t.Errorf("%s: a legal column is refused: %v", c.db, err)
		}
	}
}
