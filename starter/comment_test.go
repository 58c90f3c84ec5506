package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/workflows"
)

// A table's comment: set by start --comment, refused when it is not one
// line of at most 1000 characters, shown by status (text and JSON).
func TestTableComment(t *testing.T) {
	var f specFlags
	cmd := &cobra.Command{Use: "start"}
	f.bind(cmd, payload.TableSpec{}.Defaults())
	if err := cmd.ParseFlags([]string{"--comment", "orders from the shop database, owner: data-eng"}); err != nil {
		t.Fatal(err)
	}
	spec, err := f.spec("shop.public.orders")
	if err != nil {
		t.Fatal(err)
	}
	if spec.Comment != "orders from the shop database, owner: data-eng" {
		t.Fatalf("comment %q", spec.Comment)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"start", "shop.public.orders", "--comment", "two\nlines"}, "--comment: control character U+000A at character 4: give one line of text without tabs"},
		{[]string{"start", "shop.public.orders", "--comment", strings.Repeat("é", 1001)}, "--comment: 1001 characters, more than 1000"},
		{[]string{"settings", "shop.orders", "--comment", "a\tb"}, "--comment: control character U+0009 at character 2: give one line of text without tabs"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != exitUsage || stderr != "starter: "+c.want+"\n" {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, %q", c.args[:3], code, stderr, exitUsage, c.want)
		}
	}

	st := workflows.Status{Table: "shop.orders", Topic: "shop.public.orders", Spec: payload.TableSpec{Comment: "orders, owner: data-eng"}}
	var b bytes.Buffer
	printStatusAt(&b, st, time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC))
	lines := strings.Split(b.String(), "\n")
	if got := strings.Join(strings.Fields(lines[2]), " "); got != "comment orders, owner: data-eng" {
		t.Fatalf("third status line %q, want the comment\n%s", got, b.String())
	}
	b.Reset()
	if err := writeJSON(&b, st); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Spec struct {
			Comment string `json:"comment"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil || out.Spec.Comment != "orders, owner: data-eng" {
		t.Fatalf("status JSON spec.comment = %q (%v)", out.Spec.Comment, err)
	}
	b.Reset()
	printStatusAt(&b, workflows.Status{Table: "shop.orders"}, time.Now())
	if strings.Contains(b.String(), "comment") {
		t.Fatalf("a table without a comment shows one:\n%s", b.String())
	}
}
