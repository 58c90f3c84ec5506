package names

import (
	"errors"
	"strings"
	"testing"
)

const rule = "; " + TableRule

// Every name issues 34 (item 6) and 35 (item 3) found accepted, with the
// exact error; names the fixtures and docs use still pass.
func TestCheckTable(t *testing.T) {
	long := "ns." + strings.Repeat("t", 297)
	for name, want := range map[string]string{
		"../../esc.t1":                       `table name "../../esc.t1" has "/" at byte 2 (a path separator)`,
		"x/../../../../elsewhere/escaped.t2": `table name "x/../../../../elsewhere/escaped.t2" has "/" at byte 1 (a path separator)`,
		"ns.a/b":                             `table name "ns.a/b" has "/" at byte 4 (a path separator)`,
		`ns.a\b`:                             `table name "ns.a\\b" has "\\" at byte 4 (a path separator)`,
		"a..b.t5":                            `table name "a..b.t5" has an empty part (a dot at an end, or two in a row)`,
		".orders":                            `table name ".orders" has an empty part (a dot at an end, or two in a row)`,
		"shop.":                              `table name "shop." has an empty part (a dot at an end, or two in a row)`,
		"ns.a%2Fb":                           `table name "ns.a%2Fb" has "%" at byte 4 (an escape)`,
		long:                                 `table name "ns.ttttttttttttttttttttttttttttttttttttt"… (300 bytes) is 300 bytes long, more than 128`,
		"ns." + strings.Repeat("t", 65):      `table name "ns.ttttttttttttttttttttttttttttttttttttt"… (68 bytes) has a part of 65 characters, more than 64`,
		"ns.tëst_表_🙂":                        `table name "ns.tëst_表_🙂" has "ë" at byte 4 (not ASCII)`,
		"Shop.Orders ":                       `table name "Shop.Orders " has "S" at byte 0 (upper case)`,
		"shop.orders ":                       `table name "shop.orders " has " " at byte 11 (white space)`,
		"shop.or\tders":                      `table name "shop.or\tders" has "\t" at byte 7 (white space)`,
		"shop.or\x00ders":                    `table name "shop.or\x00ders" has "\x00" at byte 7 (a control character)`,
		"shop.or\xffders":                    `table name "shop.or\xffders" has "\xff" at byte 7 (not UTF-8)`,
		"shop.order-lines":                   `table name "shop.order-lines" has "-" at byte 10 (an engine must quote it)`,
		`shop."orders"`:                      `table name "shop.\"orders\"" has "\"" at byte 5 (an engine must quote it)`,
		"shop.2orders":                       `table name "shop.2orders" has a part starting with a digit ("2orders")`,
		"shop.order":                         `table name "shop.order" has the part "order", a word SQL reserves (engines must quote it)`,
		"table.orders":                       `table name "table.orders" has the part "table", a word SQL reserves (engines must quote it)`,
		"orders":                             `table name "orders" has no namespace (namespace.table)`,
		"":                                   `table name "" is empty`,
	} {
		err := CheckTable(name)
		if err == nil || err.Error() != want+rule {
			t.Errorf("%q:\n got %v\nwant %s", name, err, want+rule)
		}
	}
	for _, name := range []string{"shop.orders", "inventory.customers", "a.b.order_lines", "_x.t_1", "e2e.crash_history", "ns." + strings.Repeat("t", 64)} {
		if err := CheckTable(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	if err := CheckNamespace("sales.eu"); err != nil {
		t.Error(err)
	}
	if err := CheckNamespace("Sales"); err == nil || err.Error() != `namespace "Sales" has "S" at byte 0 (upper case)`+rule {
		t.Errorf("namespace: %v", err)
	}
	if err := CheckPart("a.b"); err == nil || err.Error() != `table "a.b" has a dot`+rule {
		t.Errorf("part: %v", err)
	}
	if err := CheckPart("stock"); err != nil {
		t.Error(err)
	}
}

// CheckTopic: Kafka's topic rule, with the first thing wrong named.
func TestCheckTopic(t *testing.T) {
	for _, ok := range []string{"shop.public.orders", "dbserver1.inventory.customers", "A_b-c.9", strings.Repeat("t", 249)} {
		if err := CheckTopic(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	rule := "; " + TopicRule
	for topic, want := range map[string]string{
		"":                       `topic "" is empty`,
		"..":                     `topic ".." is a dot name`,
		"bad topic":              `topic "bad topic" has " " at byte 3`,
		"shop.public.orders ":    `topic "shop.public.orders " has " " at byte 18`,
		"shop/orders":            `topic "shop/orders" has "/" at byte 4`,
		"shop.tëst":              `topic "shop.tëst" has "ë" at byte 6`,
		strings.Repeat("t", 250): `topic "tttttttttttttttttttttttttttttttttttttttt"… (250 bytes) is 250 bytes long, more than 249`,
		"shop.orders\x01":        `topic "shop.orders\x01" has "\x01" at byte 11`,
	} {
		err := CheckTopic(topic)
		if err == nil || err.Error() != want+rule {
			t.Errorf("%q: %v, want %s", topic, err, want+rule)
		}
	}
}

func TestCheckColumn(t *testing.T) {
	for _, ok := range []string{"order_id", "OrderID", "order id", "straße", "a"} {
		if err := CheckColumn("key column", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for name, why := range map[string]string{
		"":                       "is empty",
		"order_id ":              "has white space at its end",
		" order_id":              "has white space at its start",
		"order_id\u00a0":         "has white space at its end",
		"a,b":                    "has a comma at byte 1",
		"a\x00b":                 `has '\x00' at byte 1 (a control character)`,
		"a\xffb":                 "is not UTF-8",
		strings.Repeat("c", 129): "is 129 characters long, more than 128",
	} {
		err := CheckColumn("key column", name)
		var ce *ColumnError
		if !errors.As(err, &ce) || ce.Why != why {
			t.Errorf("%q: %v, want %q", name, err, why)
		}
	}
	want := `key column "order_id " has white space at its end; ` + ColumnRule
	if err := CheckColumn("key column", "order_id "); err == nil || err.Error() != want {
		t.Errorf("message: %v", err)
	}
	if err := CheckColumns("history column", []string{"a", "b", "a"}); err == nil || err.Error() != `history column "a" is listed twice` {
		t.Errorf("twice: %v", err)
	}
	if err := CheckColumns("key column", []string{"a", ""}); err == nil || err.Error() != "key column 2 is empty" {
		t.Errorf("empty: %v", err)
	}
	if err := CheckColumns("key column", []string{"a", "b "}); err == nil || err.Error() != `key column "b " has white space at its end; `+ColumnRule {
		t.Errorf("white space: %v", err)
	}
	if err := CheckColumns("key column", nil); err != nil {
		t.Errorf("none: %v", err)
	}
}
