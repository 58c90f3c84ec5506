package source

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Postgres reads tables of one PostgreSQL database for a direct load. It
// holds a small connection pool and is safe for concurrent use.
type Postgres struct {
	pool *pgxpool.Pool
}

// Open connects to the database named by dsn (a libpq connection string
// or postgres:// URL, as pgx accepts it) and checks the connection. The
// connections identify themselves as application_name
// "lakemirror-source" unless dsn sets one. Errors do not repeat the DSN
// (it may hold a password); a malformed DSN matches ErrDefinition, a
// database that cannot be reached does not (retry it).
func Open(ctx context.Context, dsn string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, definition("source: invalid PostgreSQL DSN: %v", redact(err))
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "lakemirror-source"
	}
	if cfg.MaxConns > 4 {
		cfg.MaxConns = 4
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("source: connecting to PostgreSQL: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("source: connecting to PostgreSQL %s:%d/%s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, err)
	}
	return &Postgres{pool: pool}, nil
}

// redact drops the input text from a DSN parse error (it may hold a
// password).
func redact(err error) error {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return errors.New(msg)
}

// Close closes the connections.
func (p *Postgres) Close() { p.pool.Close() }

// CurrentLSN returns the server's current WAL write position,
// pg_current_wal_lsn(), as a number (the "X/Y" text form is
// X<<32 | Y). It fails on a standby (PostgreSQL has no current WAL
// position during recovery; Debezium reads from the primary too).
func (p *Postgres) CurrentLSN(ctx context.Context) (uint64, error) {
	var text string
	if err := p.pool.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&text); err != nil {
		return 0, fmt.Errorf("source: reading pg_current_wal_lsn(): %w", err)
	}
	return ParseLSN(text)
}

// ParseLSN reads PostgreSQL's pg_lsn text form "X/Y" (two hexadecimal
// numbers of up to 32 bits each) into X<<32 | Y, the number Debezium
// writes as source.lsn.
func ParseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("source: LSN %q is not of the form X/Y", s)
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("source: LSN %q is not of the form X/Y (hexadecimal)", s)
	}
	return h<<32 | l, nil
}

// FormatLSN writes lsn in PostgreSQL's pg_lsn text form "X/Y"
// (cdc.FormatLSN).
func FormatLSN(lsn uint64) string { return cdc.FormatLSN(lsn) }
