// Package names holds the rule for lakemirror table names, the one check
// every way in applies: the starter's TABLE arguments and --table, the
// pipelines YAML (internal/pipelines), the workflow start, and the
// activities' spec validation (lake.ParseTableName).
//
// A table name is the Iceberg identifier of the table's mirror (its
// companion tables add _bronze, _history, … to the last part), the
// table workflow's id ("lakemirror-table-<name>"), part of schedule ids
// and of the tables' storage paths. So it must be the same text for every
// engine and every service: lower case (Trino folds identifiers to lower
// case, Temporal compares ids byte for byte, the workflow id has always
// been the lower-cased name), nothing an engine must quote, no path
// characters, a bounded length.
//
// It also holds Kafka's rule for topic names (CheckTopic) and the rule
// for the source columns a table's settings name (CheckColumn: key and
// history columns).
package names

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a table name, in bytes (the rule allows ASCII only).
const (
	MaxPart  = 64  // one dot-separated part
	MaxTable = 128 // the whole name
)

// TableRule is the rule, as error messages state it.
const TableRule = "a table name is namespace.table in lower case: dot-separated parts (the namespace may have several), " +
	"each 1 to 64 characters of a-z, 0-9 and _, not starting with a digit and not a word SQL reserves " +
	"(select, order, table, …), at most 128 characters in all"

// reserved are the keywords Trino reserves (its docs, "Keywords and
// identifiers"): an identifier spelled like one must be quoted there.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`alter and as auto between by case cast constraint create cross cube
		current_catalog current_date current_path current_role current_schema current_time current_timestamp current_user
		deallocate delete describe distinct drop else end escape except execute exists extract false for from full
		group grouping having in inner insert intersect into is join json_array json_exists json_object json_query
		json_table json_value left like listagg localtime localtimestamp natural normalize not null on or order outer
		prepare recursive right rollup select skip table then trim true uescape union unnest using values when where with`) {
		reserved[w] = true
	}
}

// Error is a name that breaks TableRule.
type Error struct {
	What string // "table name", "namespace" or "table" (a last part alone)
	Name string // the name as given
	Why  string // the first thing wrong with it: `has "S" at byte 0 (upper case)`
}

// Error renders `table name "Shop.Orders " has "S" at byte 0 (upper
// case); a table name is …` (the name cut to 40 bytes when longer).
func (e *Error) Error() string {
	return fmt.Sprintf("%s %s %s; %s", e.What, show(e.Name), e.Why, TableRule)
}

// CheckTable returns nil when name follows TableRule, else an *Error that
// names the first thing wrong with it and states the rule.
func CheckTable(name string) error {
	if why := tableWhy(name); why != "" {
		return &Error{What: "table name", Name: name, Why: why}
	}
	return nil
}

// CheckNamespace is CheckTable for a namespace alone (one or more
// dot-separated parts), as the pipelines YAML gives it.
func CheckNamespace(ns string) error {
	if why := partsWhy(ns, 1); why != "" {
		return &Error{What: "namespace", Name: ns, Why: why}
	}
	return nil
}

// CheckPart is CheckTable for the last part alone (a table given without
// its namespace).
func CheckPart(part string) error {
	why := partsWhy(part, 1)
	if why == "" && strings.Contains(part, ".") {
		why = "has a dot"
	}
	if why != "" {
		return &Error{What: "table", Name: part, Why: why}
	}
	return nil
}

func tableWhy(name string) string {
	if name == "" {
		return "is empty"
	}
	if len(name) > MaxTable {
		return fmt.Sprintf("is %d bytes long, more than %d", len(name), MaxTable)
	}
	if why := charsWhy(name); why != "" {
		return why
	}
	if !strings.Contains(name, ".") {
		return "has no namespace (namespace.table)"
	}
	return partsWhy(name, 2)
}

// partsWhy checks s as min or more dot-separated parts.
func partsWhy(s string, min int) string {
	if s == "" {
		return "is empty"
	}
	if why := charsWhy(s); why != "" {
		return why
	}
	parts := strings.Split(s, ".")
	if len(parts) < min {
		return "has no namespace (namespace.table)"
	}
	for _, p := range parts {
		switch {
		case p == "":
			return "has an empty part (a dot at an end, or two in a row)"
		case len(p) > MaxPart:
			return fmt.Sprintf("has a part of %d characters, more than %d", len(p), MaxPart)
		case p[0] >= '0' && p[0] <= '9':
			return fmt.Sprintf("has a part starting with a digit (%q)", p)
		case reserved[p]:
			return fmt.Sprintf("has the part %q, a word SQL reserves (engines must quote it)", p)
		}
	}
	return ""
}

// charsWhy names the first byte of s outside a-z, 0-9, _ and the dot.
func charsWhy(s string) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		what := ""
		switch {
		case c >= 'A' && c <= 'Z':
			what = "upper case"
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			what = "white space"
		case c < 0x20 || c == 0x7f:
			what = "a control character"
		case c == '/' || c == '\\':
			what = "a path separator"
		case c == '%':
			what = "an escape"
		case r == utf8.RuneError && size <= 1:
			what = "not UTF-8"
		case r >= 0x80:
			what = "not ASCII"
		default:
			what = "an engine must quote it"
		}
		return fmt.Sprintf("has %q at byte %d (%s)", s[i:i+size], i, what)
	}
	return ""
}

// show quotes s for a message, cut to its first 40 bytes when longer.
func show(s string) string {
	if len(s) <= 48 {
		return fmt.Sprintf("%q", s)
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// TopicRule is Kafka's rule for a topic name, as error messages state it
// (Apache Kafka, org.apache.kafka.common.internals.Topic.validate).
const TopicRule = "a Kafka topic name is 1 to 249 characters of a-z, A-Z, 0-9, '.', '_' and '-', other than \".\" and \"..\""

// MaxTopic is the longest Kafka topic name, in bytes.
const MaxTopic = 249

// CheckTopic returns nil when topic follows TopicRule (a topic Kafka
// accepts), else an error that names the first thing wrong with it and
// states the rule.
func CheckTopic(topic string) error {
	why := ""
	switch {
	case topic == "":
		why = "is empty"
	case topic == "." || topic == "..":
		why = "is a dot name"
	case len(topic) > MaxTopic:
		why = fmt.Sprintf("is %d bytes long, more than %d", len(topic), MaxTopic)
	default:
		for i := 0; i < len(topic); {
			c := topic[i]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
				i++
				continue
			}
			_, size := utf8.DecodeRuneInString(topic[i:])
			why = fmt.Sprintf("has %q at byte %d", topic[i:i+size], i)
			break
		}
	}
	if why == "" {
		return nil
	}
	return &topicError{Name: topic, Why: why}
}

// topicError is a topic name that breaks TopicRule.
type topicError struct{ Name, Why string }

func (e *topicError) Error() string {
	return fmt.Sprintf("topic %s %s; %s", show(e.Name), e.Why, TopicRule)
}

// ColumnRule is the rule for a source column named in a table's settings
// (key columns, history columns), as error messages state it. Columns
// are the source's: case and inner spaces are kept as Debezium writes
// them, so the rule refuses only what no column a connector captures
// holds and what a typing slip adds.
const ColumnRule = "a column name is the source's, as Debezium writes it (case kept): 1 to 128 characters of UTF-8, " +
	"no control character, no comma, no white space at either end"

// MaxColumn is the longest column name, in characters (SQL Server's
// limit, 128 characters of sysname; Oracle's is 128 bytes, MySQL's 64
// characters, PostgreSQL's 63 bytes: all within it).
const MaxColumn = 128

// ColumnError is a column name that breaks ColumnRule.
type ColumnError struct {
	What  string // "key column", "history column"
	Name  string // the name as given
	Why   string // the first thing wrong with it
	Index int    // its place in a list (CheckColumns), from 1; 0 alone
}

// Error renders `key column "order_id " has white space at its end; a
// column name is …`; an empty name of a list `key column 2 is empty`,
// and one listed twice `key column "id" is listed twice` (no rule:
// neither is about the name's text).
func (e *ColumnError) Error() string {
	switch {
	case e.Name == "" && e.Index > 0:
		return fmt.Sprintf("%s %d %s", e.What, e.Index, e.Why)
	case e.Why == whyTwice:
		return fmt.Sprintf("%s %s %s", e.What, show(e.Name), e.Why)
	}
	return fmt.Sprintf("%s %s %s; %s", e.What, show(e.Name), e.Why, ColumnRule)
}

const whyTwice = "is listed twice"

// CheckColumn returns nil when name follows ColumnRule, else a
// *ColumnError (What is what) naming the first thing wrong with it.
func CheckColumn(what, name string) error {
	if why := columnWhy(name); why != "" {
		return &ColumnError{What: what, Name: name, Why: why}
	}
	return nil
}

// CheckColumns is CheckColumn for each of names; a name listed twice is
// an error too.
func CheckColumns(what string, names []string) error {
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if why := columnWhy(n); why != "" {
			return &ColumnError{What: what, Name: n, Why: why, Index: i + 1}
		}
		if seen[n] {
			return &ColumnError{What: what, Name: n, Why: whyTwice, Index: i + 1}
		}
		seen[n] = true
	}
	return nil
}

func columnWhy(s string) string {
	switch {
	case s == "":
		return "is empty"
	case !utf8.ValidString(s):
		return "is not UTF-8"
	case utf8.RuneCountInString(s) > MaxColumn:
		return fmt.Sprintf("is %d characters long, more than %d", utf8.RuneCountInString(s), MaxColumn)
	}
	if r, _ := utf8.DecodeRuneInString(s); unicode.IsSpace(r) {
		return "has white space at its start"
	}
	if r, _ := utf8.DecodeLastRuneInString(s); unicode.IsSpace(r) {
		return "has white space at its end"
	}
	for i, r := range s {
		switch {
		case r == ',':
			return fmt.Sprintf("has a comma at byte %d", i)
		case unicode.IsControl(r):
			return fmt.Sprintf("has %q at byte %d (a control character)", r, i)
		}
	}
	return ""
}
