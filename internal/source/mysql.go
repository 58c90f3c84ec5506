package source

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// MySQL reads tables of one MySQL or MariaDB database for reconciliation
// (github.com/go-sql-driver/mysql). It is safe for concurrent use.
//
// Types are mapped as Debezium's MySQL connector maps them with default
// settings (decimal.handling.mode=precise, time.precision.mode=
// adaptive_time_microseconds, bigint.unsigned.handling.mode=long), so a
// row read here equals the row the schemas decoder makes of Debezium's
// event:
//
//	MySQL                                  Connect (Debezium)              cdc.Value
//	tinyint, smallint (signed or not)      int16 (unsigned smallint int32) Int
//	mediumint, int                         int32 (unsigned int int64)      Int
//	bigint (signed or not)                 int64                           Int
//	float / double                         float / double                  Float
//	decimal(p,s), p ≤ 38                   bytes Decimal {scale s}         Decimal
//	char, varchar, *text, set              string                          String
//	enum / json (MySQL's)                  string Enum {allowed} / Json    String
//	binary, varbinary, *blob               bytes                           Bytes
//	date                                   int32 io.debezium.time.Date     Date
//	time(p)                                int64 MicroTime                 Time (0 ≤ t < 24 h)
//	datetime(p), p ≤ 3 / p > 3             int64 Timestamp / MicroTimestamp Timestamp
//	timestamp(p)                           string ZonedTimestamp (UTC)     TimestampTZ
//
// Other types (bit, year, geometry, decimal above 38 digits) are refused
// by DescribeMySQL, naming the column. Sessions use time_zone '+00:00'.
type MySQL struct {
	db *sql.DB
}

// OpenMySQL connects to dsn: a go-sql-driver DSN
// ("user:pass@tcp(host:3306)/db", "root@unix(/run/mysqld.sock)/db") or a
// URL "mysql://user:pass@host:3306/db" (also "mariadb://"). At most 4
// connections. Errors do not repeat the DSN; a malformed one matches
// ErrDefinition.
func OpenMySQL(ctx context.Context, dsn string) (*MySQL, error) {
	cfg, err := mysqlConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	cfg.ParseTime = false
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, definition("source: invalid MySQL DSN: %v", redact(err))
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(4)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("source: connecting to MySQL %s/%s: %w", cfg.Addr, cfg.DBName, err)
	}
	return &MySQL{db: db}, nil
}

// IsMySQLDSN reports whether dsn names a MySQL or MariaDB server (a
// mysql:// or mariadb:// URL, or a go-sql-driver DSN with "@tcp(" or
// "@unix("), rather than PostgreSQL.
func IsMySQLDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "mysql://") || strings.HasPrefix(dsn, "mariadb://") ||
		strings.Contains(dsn, "@tcp(") || strings.Contains(dsn, "@unix(")
}

func mysqlConfig(dsn string) (*mysql.Config, error) {
	if !strings.HasPrefix(dsn, "mysql://") && !strings.HasPrefix(dsn, "mariadb://") {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, definition("source: invalid MySQL DSN: %v", redact(err))
		}
		return cfg, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, definition("source: invalid MySQL URL")
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
	if u.Port() == "" {
		cfg.Addr = u.Hostname() + ":3306"
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	return cfg, nil
}

// Close closes the connections.
func (m *MySQL) Close() { m.db.Close() }

// Describe reads the columns and key of database.table from
// information_schema. keyCols nil means the primary key; given columns
// must be NOT NULL. Errors: a missing table, no key, an unsupported
// column type (each matching ErrDefinition).
func (m *MySQL) Describe(ctx context.Context, database, table string, keyCols []string) (TableInfo, error) {
	info := TableInfo{Database: database, Schema: database, Table: table}
	rows, err := m.db.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE,
		COALESCE(NUMERIC_PRECISION, 0), COALESCE(NUMERIC_SCALE, 0), COALESCE(DATETIME_PRECISION, 0)
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, database, table)
	if err != nil {
		return info, fmt.Errorf("source: describing %s.%s: %w", database, table, err)
	}
	defer rows.Close()
	notNull := map[string]bool{}
	var bad []string
	for rows.Next() {
		var name, dataType, colType, nullable string
		var prec, scale, dtPrec int
		if err := rows.Scan(&name, &dataType, &colType, &nullable, &prec, &scale, &dtPrec); err != nil {
			return info, fmt.Errorf("source: describing %s.%s: %w", database, table, err)
		}
		ci, err := mapMySQLColumn(name, strings.ToLower(dataType), strings.ToLower(colType), prec, scale, dtPrec)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%q (%s): %v", name, colType, err))
			continue
		}
		ci.Optional = nullable == "YES"
		notNull[name] = !ci.Optional
		info.Columns = append(info.Columns, ci)
	}
	if err := rows.Err(); err != nil {
		return info, fmt.Errorf("source: describing %s.%s: %w", database, table, err)
	}
	if len(info.Columns) == 0 && len(bad) == 0 {
		return info, definition("source: table %s.%s does not exist or has no columns", database, table)
	}
	if len(bad) > 0 {
		return info, definition("source: %s.%s: unsupported columns: %s", database, table, strings.Join(bad, "; "))
	}
	if keyCols == nil {
		krows, err := m.db.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
			WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION`, database, table)
		if err != nil {
			return info, fmt.Errorf("source: reading the primary key of %s.%s: %w", database, table, err)
		}
		defer krows.Close()
		for krows.Next() {
			var k string
			if err := krows.Scan(&k); err != nil {
				return info, err
			}
			keyCols = append(keyCols, k)
		}
		if err := krows.Err(); err != nil {
			return info, err
		}
	}
	if len(keyCols) == 0 {
		return info, definition("source: %s.%s has no primary key; give the key columns", database, table)
	}
	for _, k := range keyCols {
		if !notNull[k] {
			return info, definition("source: key column %q of %s.%s is not a NOT NULL column", k, database, table)
		}
	}
	info.Key = keyCols
	return info, nil
}

// mapMySQLColumn types one column (see the MySQL doc).
func mapMySQLColumn(name, dataType, colType string, prec, scale, dtPrec int) (ColumnInfo, error) {
	ci := ColumnInfo{Column: cdc.Column{Name: name}, PGType: colType, Read: dataType}
	unsigned := strings.Contains(colType, "unsigned")
	set := func(connect, logical string, typ cdc.Type) {
		ci.Connect, ci.Logical, ci.Type = connect, logical, typ
		ci.Source = connect
		if logical != "" {
			ci.Source = logical
		}
	}
	switch dataType {
	case "tinyint":
		set("int16", "", cdc.TypeInt)
	case "smallint":
		if unsigned {
			set("int32", "", cdc.TypeInt)
		} else {
			set("int16", "", cdc.TypeInt)
		}
	case "mediumint":
		set("int32", "", cdc.TypeInt)
	case "int", "integer":
		if unsigned {
			set("int64", "", cdc.TypeLong)
		} else {
			set("int32", "", cdc.TypeInt)
		}
	case "bigint":
		set("int64", "", cdc.TypeLong)
	case "float":
		set("float", "", cdc.TypeFloat)
	case "double", "real":
		set("double", "", cdc.TypeDouble)
	case "decimal", "numeric":
		if prec > maxIcebergDecimal {
			return ci, fmt.Errorf("decimal(%d,%d) beyond %d digits", prec, scale, maxIcebergDecimal)
		}
		set("bytes", logicalDecimal, cdc.DecimalType(int16(prec), int16(scale)))
		ci.Precision, ci.Scale = prec, scale
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "set":
		set("string", "", cdc.TypeString)
	case "json":
		set("string", logicalJSON, cdc.TypeString)
	case "enum":
		set("string", logicalEnum, cdc.TypeString)
		ci.Allowed = enumLabels(colType)
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		set("bytes", "", cdc.TypeBinary)
	case "date":
		set("int32", logicalDate, cdc.TypeDate)
	case "time":
		set("int64", logicalMicroTime, cdc.TypeTime)
		ci.Precision = dtPrec
	case "datetime":
		if dtPrec <= 3 {
			set("int64", logicalTimestamp, cdc.TypeTimestamp)
		} else {
			set("int64", logicalMicroTimestamp, cdc.TypeTimestamp)
		}
		ci.Precision = dtPrec
	case "timestamp":
		set("string", logicalZonedTimestamp, cdc.TypeTimestampTZ)
		ci.Precision = dtPrec
	default:
		return ci, errors.New("not supported")
	}
	return ci, nil
}

// enumLabels reads the labels of "enum('a','b')" as "a,b" (quotes
// doubled inside a label are undone).
func enumLabels(colType string) string {
	body := strings.TrimSuffix(strings.TrimPrefix(colType, "enum("), ")")
	var labels []string
	for _, part := range strings.Split(body, "','") {
		labels = append(labels, strings.ReplaceAll(strings.Trim(part, "'"), "''", "'"))
	}
	return strings.Join(labels, ",")
}

// mysqlPlan is the keyset query of one table.
type mysqlPlan struct {
	info   TableInfo
	cols   *cdc.Columns
	keyIdx []int
	selct  string
	order  string
}

func newMySQLPlan(info TableInfo) (*mysqlPlan, error) {
	keyIdx, err := info.keyIndexes()
	if err != nil {
		return nil, err
	}
	q := func(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range info.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q(c.Name))
	}
	b.WriteString(" FROM " + q(info.Schema) + "." + q(info.Table))
	var o strings.Builder
	o.WriteString(" ORDER BY ")
	var keys []string
	for _, k := range info.Key {
		keys = append(keys, q(k))
	}
	o.WriteString(strings.Join(keys, ", "))
	return &mysqlPlan{info: info, cols: cdc.NewColumns(info.names()), keyIdx: keyIdx, selct: b.String(), order: o.String()}, nil
}

func (p *mysqlPlan) keyList() string {
	var keys []string
	for _, k := range p.info.Key {
		keys = append(keys, "`"+strings.ReplaceAll(k, "`", "``")+"`")
	}
	return "(" + strings.Join(keys, ", ") + ")"
}

// ReadChunkAt reads at most limit rows whose key is above after (nil:
// from the start) in key order, in a REPEATABLE READ READ ONLY
// transaction, and returns them with the key of the last row and the
// read's position. The position is the binlog position (SHOW MASTER
// STATUS, or SHOW BINARY LOG STATUS on MySQL 8.4+) read on the same
// connection just before the transaction's first read takes its
// snapshot: every change the snapshot misses is written at or after it.
// Its Seq is (file index, pos − 1, 0): above every change written before
// pos (an event before it starts at least one byte earlier), below every
// change at or after it. Changes the snapshot shows that were written
// after pos also sort above it; a repair at that Seq is then overtaken
// by their streamed events, which carry the same values or later ones.
// Errors: binary logging off (no position), query and decoding errors.
func (m *MySQL) ReadChunkAt(ctx context.Context, info TableInfo, after []cdc.Value, limit int) (rows []*cdc.Row, last []cdc.Value, pos Position, err error) {
	plan, err := newMySQLPlan(info)
	if err != nil {
		return nil, nil, pos, err
	}
	if limit <= 0 {
		return nil, nil, pos, fmt.Errorf("source: chunk size %d: must be positive", limit)
	}
	query, args := plan.selct, []any{}
	if after != nil {
		if len(after) != len(plan.keyIdx) {
			return nil, nil, pos, fmt.Errorf("source: %s: resume key has %d values, the key has %d columns", info.qualified(), len(after), len(plan.keyIdx))
		}
		ph := strings.TrimSuffix(strings.Repeat("?, ", len(after)), ", ")
		query += " WHERE " + plan.keyList() + " > (" + ph + ")"
		for _, v := range after {
			a, err := mysqlArg(v)
			if err != nil {
				return nil, nil, pos, err
			}
			args = append(args, a)
		}
	}
	query += plan.order + " LIMIT " + strconv.Itoa(limit)
	pos, rows, err = m.readTx(ctx, plan, query, args)
	if err != nil {
		return nil, nil, pos, err
	}
	if len(rows) > 0 {
		last = make([]cdc.Value, len(plan.keyIdx))
		for i, j := range plan.keyIdx {
			last[i] = rows[len(rows)-1].Vals[j]
		}
	}
	return rows, last, pos, nil
}

// ReadKeys reads the rows of the given keys (values in info.Key order;
// at most 1,000) in one transaction, positioned as ReadChunkAt.
func (m *MySQL) ReadKeys(ctx context.Context, info TableInfo, keys [][]cdc.Value) (rows []*cdc.Row, pos Position, err error) {
	if len(keys) > 1000 {
		return nil, pos, fmt.Errorf("source: %d keys in one read: at most 1000", len(keys))
	}
	plan, err := newMySQLPlan(info)
	if err != nil {
		return nil, pos, err
	}
	query, args := plan.selct+" WHERE 1=0", []any{}
	if len(keys) > 0 {
		var tuples []string
		for _, k := range keys {
			if len(k) != len(plan.keyIdx) {
				return nil, pos, fmt.Errorf("source: %s: key has %d values, the key has %d columns", info.qualified(), len(k), len(plan.keyIdx))
			}
			tuples = append(tuples, "("+strings.TrimSuffix(strings.Repeat("?, ", len(k)), ", ")+")")
			for _, v := range k {
				a, err := mysqlArg(v)
				if err != nil {
					return nil, pos, err
				}
				args = append(args, a)
			}
		}
		query = plan.selct + " WHERE " + plan.keyList() + " IN (" + strings.Join(tuples, ", ") + ")" + plan.order
	}
	pos, rows, err = m.readTx(ctx, plan, query, args)
	return rows, pos, err
}

// readTx reads the binlog position, then runs query in a REPEATABLE
// READ READ ONLY transaction on the same connection.
func (m *MySQL) readTx(ctx context.Context, plan *mysqlPlan, query string, args []any) (Position, []*cdc.Row, error) {
	var pos Position
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return pos, nil, fmt.Errorf("source: %s: %w", plan.info.qualified(), err)
	}
	defer conn.Close()
	if pos, err = binlogPosition(ctx, conn); err != nil {
		return pos, nil, err
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return pos, nil, fmt.Errorf("source: %s: beginning a transaction: %w", plan.info.qualified(), err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	rs, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return pos, nil, fmt.Errorf("source: reading %s: %w", plan.info.qualified(), err)
	}
	defer rs.Close()
	var out []*cdc.Row
	raw := make([]sql.RawBytes, len(plan.info.Columns))
	dests := make([]any, len(raw))
	for i := range raw {
		dests[i] = &raw[i]
	}
	for rs.Next() {
		if err := rs.Scan(dests...); err != nil {
			return pos, nil, fmt.Errorf("source: reading %s: %w", plan.info.qualified(), err)
		}
		vals := make([]cdc.Value, len(raw))
		for i, b := range raw {
			ci := &plan.info.Columns[i]
			v, err := mysqlValue(ci, b)
			if err != nil {
				return pos, nil, fmt.Errorf("source: reading %s: column %q (%s): %w", plan.info.qualified(), ci.Name, ci.PGType, err)
			}
			vals[i] = v
		}
		out = append(out, &cdc.Row{Cols: plan.cols, Vals: vals})
	}
	if err := rs.Err(); err != nil {
		return pos, nil, fmt.Errorf("source: reading %s: %w", plan.info.qualified(), err)
	}
	if err := tx.Commit(); err != nil {
		return pos, nil, fmt.Errorf("source: %s: ending the transaction: %w", plan.info.qualified(), err)
	}
	return pos, out, nil
}

// binlogPosition reads the server's current binlog file and position.
func binlogPosition(ctx context.Context, conn *sql.Conn) (Position, error) {
	var pos Position
	for _, stmt := range []string{"SHOW MASTER STATUS", "SHOW BINARY LOG STATUS"} {
		rows, err := conn.QueryContext(ctx, stmt)
		if err != nil {
			continue
		}
		cols, _ := rows.Columns()
		vals := make([]sql.RawBytes, len(cols))
		dests := make([]any, len(cols))
		for i := range vals {
			dests[i] = &vals[i]
		}
		ok := rows.Next()
		if ok {
			err = rows.Scan(dests...)
		}
		rows.Close()
		if err != nil {
			return pos, fmt.Errorf("source: %s: %w", stmt, err)
		}
		if !ok || len(cols) < 2 {
			return pos, definition("source: the MySQL server has binary logging off (%s returned no row): reconciliation needs log_bin, as Debezium does", stmt)
		}
		return mysqlPosition(string(vals[0]), string(vals[1]))
	}
	return pos, errors.New("source: neither SHOW MASTER STATUS nor SHOW BINARY LOG STATUS is allowed (grant REPLICATION CLIENT, as Debezium needs)")
}

// mysqlPosition is the Position of binlog file at offset pos.
func mysqlPosition(file, posText string) (Position, error) {
	p, err := strconv.ParseUint(posText, 10, 64)
	if err != nil || p == 0 {
		return Position{}, fmt.Errorf("source: binlog position %q is not a positive number", posText)
	}
	i := strings.LastIndexByte(file, '.')
	idx, err := strconv.ParseUint(file[i+1:], 10, 64)
	if i < 0 || err != nil {
		return Position{}, fmt.Errorf("source: binlog file %q has no numeric suffix", file)
	}
	return Position{Seq: cdc.MySQLSeq(idx, p-1, 0), Text: file + ":" + posText, File: file, Pos: p}, nil
}

// mysqlArg is the query argument for a key value.
func mysqlArg(v cdc.Value) (any, error) {
	switch v.Kind {
	case cdc.KindInt:
		return v.I, nil
	case cdc.KindFloat:
		return v.Float64(), nil
	case cdc.KindString:
		return v.S, nil
	case cdc.KindBytes:
		return []byte(v.S), nil
	case cdc.KindDecimal:
		return decimalText(v), nil
	case cdc.KindDate:
		return time.Unix(v.I*86400, 0).UTC().Format("2006-01-02"), nil
	case cdc.KindTime:
		d := time.Duration(v.I) * time.Microsecond
		return fmt.Sprintf("%02d:%02d:%02d.%06d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60, v.I%1_000_000), nil
	case cdc.KindTimestamp, cdc.KindTimestampTZ:
		return time.UnixMicro(v.I).UTC().Format("2006-01-02 15:04:05.999999"), nil
	}
	return nil, fmt.Errorf("source: a key value of kind %d cannot be a MySQL query argument", v.Kind)
}

// decimalText is a decimal's exact text.
func decimalText(v cdc.Value) string {
	digits := v.S
	if digits == "" {
		digits = strconv.FormatInt(v.I, 10)
	}
	r := new(big.Rat)
	n, _ := new(big.Int).SetString(digits, 10)
	if n == nil {
		return digits
	}
	r.SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(v.Scale)), nil))
	return r.FloatString(int(v.Scale))
}

// mysqlValue decodes one column's text (the MySQL text protocol's form
// of a value; nil is NULL).
func mysqlValue(ci *ColumnInfo, b sql.RawBytes) (cdc.Value, error) {
	if b == nil {
		return cdc.Null(), nil
	}
	s := string(b)
	switch ci.Read {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return cdc.Int(i), nil
		}
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cdc.Value{}, err
		}
		return cdc.Int(int64(u)), nil // bigint.unsigned.handling.mode=long: wraps like Debezium
	case "float":
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return cdc.Value{}, err
		}
		return cdc.Float(float64(float32(f))), nil
	case "double", "real":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return cdc.Value{}, err
		}
		return cdc.Float(f), nil
	case "decimal", "numeric":
		return parseDecimal(s, ci.Scale)
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return cdc.Bytes(append([]byte(nil), b...)), nil
	case "date":
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return cdc.Value{}, err
		}
		return cdc.Date(int64(math.Floor(float64(t.Unix()) / 86400))), nil
	case "time":
		t, err := time.Parse("15:04:05.999999", s)
		if err != nil {
			return cdc.Value{}, fmt.Errorf("time %q outside 00:00:00..23:59:59.999999: %w", s, err)
		}
		return cdc.Time(int64(t.Hour())*3_600_000_000 + int64(t.Minute())*60_000_000 + int64(t.Second())*1_000_000 + int64(t.Nanosecond()/1000)), nil
	case "datetime", "timestamp":
		t, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			return cdc.Value{}, err
		}
		if ci.Read == "timestamp" {
			return cdc.TimestampTZ(t.UnixMicro()), nil
		}
		return cdc.Timestamp(t.UnixMicro()), nil
	}
	return cdc.String(s), nil
}

// parseDecimal reads a decimal's text at scale.
func parseDecimal(s string, scale int) (cdc.Value, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	if len(fp) > scale {
		return cdc.Value{}, fmt.Errorf("decimal %q has more than %d fraction digits", s, scale)
	}
	digits := strings.TrimLeft(ip+fp+strings.Repeat("0", scale-len(fp)), "0")
	if digits == "" {
		digits = "0"
	}
	if neg && digits != "0" {
		digits = "-" + digits
	}
	if i, err := strconv.ParseInt(digits, 10, 64); err == nil {
		return cdc.Decimal(i, int16(scale)), nil
	}
	return cdc.BigDecimal(digits, int16(scale)), nil
}
