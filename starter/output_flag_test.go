package main

import "testing"

// dump and demo print JSON lines only: they take --output json (the
// default, so every command that prints results takes it) and refuse
// another format with exit code 2, before anything is read.
func TestJSONLinesOutputFlag(t *testing.T) {
	nowhere := []string{"--temporal-address", closedAddr(t), "--kafka-brokers", closedAddr(t), "--data-dir", t.TempDir()}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dump", "shop.orders", "--output", "text"}, `starter: --output "text": dump prints JSON lines only: give json or leave --output out` + "\n"},
		{[]string{"demo", "-o", "yaml"}, `starter: --output "yaml": demo prints JSON lines only: give json or leave --output out` + "\n"},
	} {
		code, _, stderr := cli(t, append(c.args, nowhere...)...)
		if code != exitUsage || stderr != c.want {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
	// json is taken: dump goes on to the catalog, which is not there
	code, _, stderr := cli(t, append([]string{"dump", "shop.orders", "--output", "json"}, nowhere...)...)
	if code == exitUsage || code == exitOK {
		t.Errorf("dump --output json: exit %d, stderr %q; want it past the flags, failing on the missing catalog", code, stderr)
	}
}
