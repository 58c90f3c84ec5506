package cut

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// TxKey is the part of a transaction id that is the same on the BEGIN,
// the END and every change event of one transaction, by which the Tracker
// matches them: for PostgreSQL the txId of "txId:LSN", since Debezium
// appends to the txId the LSN last seen when it writes each of those
// records (io.debezium.connector.postgresql.pipeline.txmetadata.
// PostgresTransactionMonitor.adjustTxId: lastSeenLsn), so the BEGIN, each
// change and the END of one transaction carry different ids (Debezium's
// docs show BEGIN "571:53195829" and END "571:53195832"). A txId repeats
// only after 2^32 transactions (wraparound), far beyond the transactions
// open at once. For other connectors, and a PostgreSQL id without a
// colon, the id as it is (SQL Server: the commit LSN; MySQL: the GTID;
// Oracle: the XID).
func TxKey(connector, id string) string {
	if connector == Postgres {
		if tx, _, ok := strings.Cut(id, ":"); ok {
			return tx
		}
	}
	return id
}

// Connector names as Debezium writes them in source.connector.
const (
	Postgres  = "postgresql"
	SQLServer = "sqlserver"
)

// CommitPosition derives the commit position of a source transaction from
// the id of its END event on the transaction metadata topic (Debezium
// docs, "Transaction metadata", per connector: the `id` field of the
// BEGIN/END records, the `transaction.id` of the change events), in the
// word layout the tables' `_seq` use for that connector, so that it can
// be compared with the tables' positions: every change of the transaction
// sorts at or below it and every change of a later transaction above it.
//
// connector is source.connector ("postgresql", "sqlserver", ...).
//
//   - PostgreSQL: id is "txId:LSN" (decimal transaction id, colon,
//     decimal LSN; Debezium PostgreSQL docs, "Transaction metadata"). On
//     the END, LSN is the last LSN Debezium saw when it wrote the END
//     (PostgresTransactionMonitor.adjustTxId), that of the transaction's
//     COMMIT message, which Debezium also records as the commit position
//     the next transaction's events carry as lastCommitLsn (first element
//     of source.sequence). The position is cdc.PostgresSeq(L, 0). Why (L, 0):
//     a change event sits at (max(lastCommitLsn, lsn), lsn)
//     (cdc.PostgresEventWords); every change of the transaction has
//     both words below its commit LSN, so it sorts below (L, 0); every
//     change of a later transaction has lastCommitLsn ≥ L as first word
//     and its own lsn > 0 as second, so it sorts above (L, 0). It is the
//     same convention as a source snapshot at WAL position X, (X, 0):
//     "above every change committed before X". Only END ids are meant:
//     Debezium's BEGIN of the same transaction may carry another LSN
//     (its docs show BEGIN "571:53195829", END "571:53195832"; TxKey).
//     That the END's LSN equals the next transaction's lastCommitLsn is
//     read from Debezium's code, not yet seen on the real stack; a
//     Tracker refuses ENDs whose positions do not grow (ErrOutOfOrder),
//     which shows an id LSN that is not commit-ordered.
//   - SQL Server: id is the commit LSN in its text form
//     "vvvvvvvv:bbbbbbbb:ssss" (cdc.ParseSQLServerLSN). Events sit at
//     (commit LSN, change LSN, event_serial_no) (cdc.SQLServerSeq); the
//     position is (commit LSN, all ones, all ones, all ones): at or above
//     every change of the transaction, below every change of a later
//     commit.
//   - MySQL, MariaDB (id: a GTID "uuid:n" or binlog coordinates of the
//     transaction's start), Oracle (the XID) and any other connector: an
//     error, since the id does not give the commit's place in the
//     tables' position layout. Such groups cut by position
//     (Tracker.PositionCut) until the commit position is taken from
//     elsewhere.
//
// Errors name the connector and the id; the id is a transaction id, not
// row content.
func CommitPosition(connector, id string) (cdc.Seq, error) {
	switch connector {
	case Postgres:
		tx, lsn, ok := strings.Cut(id, ":")
		if !ok {
			return "", fmt.Errorf("cut: PostgreSQL transaction id %q is not of the form txId:LSN", id)
		}
		if _, err := strconv.ParseUint(tx, 10, 64); err != nil {
			return "", fmt.Errorf("cut: PostgreSQL transaction id %q: txId is not a decimal number", id)
		}
		l, err := strconv.ParseUint(lsn, 10, 64)
		if err != nil || l == 0 {
			return "", fmt.Errorf("cut: PostgreSQL transaction id %q: LSN is not a positive decimal number", id)
		}
		return cdc.PostgresSeq(l, 0), nil
	case SQLServer:
		lsn, err := cdc.ParseSQLServerLSN(id)
		if err != nil {
			return "", fmt.Errorf("cut: SQL Server transaction id %q: %w", id, err)
		}
		return cdc.SeqOf(lsn.Hi, lsn.Lo, math.MaxUint64, math.MaxUint64, math.MaxUint64), nil
	case "mysql", "mariadb":
		return "", fmt.Errorf("cut: %s transaction id %q (a GTID or binlog coordinates) gives no commit position in (file, pos, row): cut by position instead", connector, id)
	case "oracle":
		return "", fmt.Errorf("cut: oracle transaction id %q (an XID) gives no commit SCN: cut by position instead", id)
	}
	return "", fmt.Errorf("cut: connector %q: no commit position from transaction id %q", connector, id)
}

// IDConnector is the connector whose transaction id form id has, for a
// group that knows its connector only from its transaction topic (the
// END records name none): Postgres for "txId:LSN", two decimal numbers;
// SQLServer for a commit LSN "vvvvvvvv:bbbbbbbb:ssss" (8, 8 and 4 hex
// digits, cdc.ParseSQLServerLSN); "" for any other form (MySQL and
// MariaDB: a GTID "uuid:n" or binlog coordinates "file:pos"; Oracle: an
// XID "a.b.c"), whose ids give no commit position (CommitPosition). The
// forms do not overlap: an SQL Server LSN has two colons, a GTID's uuid
// and a binlog file name are not decimal.
func IDConnector(id string) string {
	if tx, lsn, ok := strings.Cut(id, ":"); ok && decimal(tx) && decimal(lsn) {
		return Postgres
	}
	if _, err := cdc.ParseSQLServerLSN(id); err == nil {
		return SQLServer
	}
	return ""
}

// decimal reports whether s is one or more ASCII digits.
func decimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
