package source

import "strings"

// IsDSN reports whether s is a DSN rather than the name of a source
// database (the names a worker maps to DSNs with -sources name=dsn, which
// hold no "="): a URL (postgres://…, mysql://…, anything with "://"), a
// PostgreSQL key=value string ("host=db user=repl"), or a go-sql-driver
// MySQL DSN (IsMySQLDSN: "@tcp(" or "@unix(").
func IsDSN(s string) bool {
	return strings.Contains(s, "://") || strings.Contains(s, "=") || IsMySQLDSN(s)
}
