package main

import (
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/names"
)

// Issues 34 (item 6) and 35 (item 3): every command that names a table
// refuses a name the rule refuses, with exit code 2 and the rule, before
// it dials anything (the addresses here lead nowhere): the names were
// accepted at start and then retried forever, or failed with a raw gRPC
// header error, or started a second pipeline on a topic ("Shop.Orders ").
func TestTableNameRuleEveryCommand(t *testing.T) {
	r := "; " + names.TableRule
	bad := map[string]string{
		"../../esc.t1":                       `table name "../../esc.t1" has "/" at byte 2 (a path separator)`,
		"x/../../../../elsewhere/escaped.t2": `table name "x/../../../../elsewhere/escaped.t2" has "/" at byte 1 (a path separator)`,
		"ns.a/b":                             `table name "ns.a/b" has "/" at byte 4 (a path separator)`,
		"a..b.t5":                            `table name "a..b.t5" has an empty part (a dot at an end, or two in a row)`,
		"ns.a%2Fb":                           `table name "ns.a%2Fb" has "%" at byte 4 (an escape)`,
		"ns." + strings.Repeat("t", 297):     `table name "ns.ttttttttttttttttttttttttttttttttttttt"… (300 bytes) is 300 bytes long, more than 128`,
		"ns.tëst_表_🙂":                        `table name "ns.tëst_表_🙂" has "ë" at byte 4 (not ASCII)`,
		"Shop.Orders ":                       `table name "Shop.Orders " has "S" at byte 0 (upper case)`,
		"shop.orders\n":                      `table name "shop.orders\n" has "\n" at byte 11 (white space)`,
	}
	nowhere := []string{"--temporal-address", closedAddr(t), "--kafka-brokers", closedAddr(t), "--data-dir", t.TempDir()}
	commands := [][]string{
		{"status"}, {"stop"}, {"pause"}, {"resume"}, {"retry"}, {"drop", "--yes"}, {"dump"}, {"validate"}, {"reconcile"},
		{"settings", "--batch-size", "10"}, {"wait"}, {"backfill", "--from", "2026-01-01T00:00:00Z"}, {"schema", "--evolve"},
		{"resnapshot"}, {"schedule"},
	}
	for name, why := range bad {
		for _, c := range commands {
			args := append(append(append([]string{c[0]}, name), c[1:]...), nowhere...)
			code, _, stderr := cli(t, args...)
			if want := "starter: " + why + r + "\n"; code != exitUsage || stderr != want {
				t.Errorf("%s %q: exit %d, stderr:\n%s\nwant exit 2:\n%s", c[0], name, code, stderr, want)
			}
		}
		code, _, stderr := cli(t, append([]string{"maintain", name, "compact"}, nowhere...)...)
		if want := "starter: " + why + r + "\n"; code != exitUsage || stderr != want {
			t.Errorf("maintain %q: exit %d, stderr:\n%s", name, code, stderr)
		}
		code, _, stderr = cli(t, append([]string{"start", "shop.public.orders", "--table", name}, nowhere...)...)
		if want := "starter: --table: " + why + r + "\n"; code != exitUsage || stderr != want {
			t.Errorf("start --table %q: exit %d, stderr:\n%s\nwant:\n%s", name, code, stderr, want)
		}
	}
	// key and history columns: the source's names, refused only for what
	// no column holds (a control character, a comma, white space at an end)
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--key", "order\tid"}, `--key: key column "order\tid" has '\t' at byte 5 (a control character); ` + names.ColumnRule},
		{[]string{"--key", "order_id", "--history-columns", "a,a"}, `--history-columns: history column "a" is listed twice`},
	} {
		args := append(append([]string{"start", "shop.public.orders", "--table", "shop.orders"}, c.flags...), nowhere...)
		code, _, stderr := cli(t, args...)
		if want := "starter: " + c.want + "\n"; code != exitUsage || stderr != want {
			t.Errorf("start %q: exit %d, stderr:\n%s\nwant:\n%s", c.flags, code, stderr, want)
		}
	}
	code, _, stderr := cli(t, append([]string{"start", "srv.Shop.Orders"}, nowhere...)...)
	if want := `starter: topic srv.Shop.Orders makes the table name "Shop.Orders", which has "S" at byte 0 (upper case): give --table` + r + "\n"; code != exitUsage || stderr != want {
		t.Errorf("start srv.Shop.Orders: exit %d, stderr:\n%s\nwant:\n%s", code, stderr, want)
	}
}

// A topic Kafka would refuse (a space, a slash, a non-ASCII letter) is a
// usage error naming the byte and Kafka's rule in start and produce,
// before anything is dialled: a new user's `start "shop.public.orders "`
// started a table that waited for a topic that cannot exist.
func TestTopicRuleStartAndProduce(t *testing.T) {
	nowhere := []string{"--temporal-address", closedAddr(t), "--kafka-brokers", closedAddr(t), "--data-dir", t.TempDir()}
	for _, c := range []struct {
		args []string
		why  string
	}{
		{[]string{"start", "shop.public.orders ", "--table", "shop.x1"}, `topic "shop.public.orders " has " " at byte 18`},
		{[]string{"start", "shop/orders", "--table", "shop.x1"}, `topic "shop/orders" has "/" at byte 4`},
		{[]string{"produce", "bad topic"}, `topic "bad topic" has " " at byte 3`},
		{[]string{"produce", "shop.tëst"}, `topic "shop.tëst" has "ë" at byte 6`},
	} {
		code, _, stderr := cli(t, append(c.args, nowhere...)...)
		if want := "starter: " + c.why + "; " + names.TopicRule + "\n"; code != exitUsage || stderr != want {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 2:\n%s", c.args, code, stderr, want)
		}
	}
}
