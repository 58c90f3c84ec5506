package main

import (
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakemirror/lakemirror/internal/payload"
)

// start's flags of payload.Settings fill the spec, an alias spelling
// included, and a value a setting's rule refuses is a usage error naming
// the flag, before anything is dialled.
func TestStartSettingFlags(t *testing.T) {
	var f specFlags
	cmd := &cobra.Command{Use: "start"}
	f.bind(cmd, payload.TableSpec{}.Defaults())
	if err := cmd.ParseFlags([]string{"--max-events", "250", "--max-wait", "3s", "--max-batch-events", "1000", "--start-from", "latest"}); err != nil {
		t.Fatal(err)
	}
	spec, err := f.spec("shop.public.orders")
	if err != nil {
		t.Fatal(err)
	}
	if spec.Table != "public.orders" || spec.MaxEvents != 250 || spec.MaxWait != 3*time.Second || spec.MaxBatchEvents != 1000 ||
		spec.StartFrom != "latest" || spec.MaxQuarantine != 100 {
		t.Fatalf("spec %+v", spec)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"start", "shop.public.orders", "--batch-size", "0"}, "--batch-size: 0 outside 1..1000000 records"},
		{[]string{"start", "shop.public.orders", "--max-events", "1000001"}, "--batch-size: 1000001 outside 1..1000000 records"},
		{[]string{"start", "shop.public.orders", "--max-wait", "11m"}, "--max-wait: 11m outside (0, 10m]"},
		{[]string{"start", "shop.public.orders", "--max-quarantine", "0"}, "--max-quarantine: 0 outside 1..1000000 records"},
		{[]string{"start", "shop.public.orders", "--start-from", "newest"}, `--start-from: "newest": give earliest or latest`},
		{[]string{"settings", "shop.orders", "--max-batch-size", "-1"}, "--max-batch-size: -1 outside 0..1000000 records (0 = batches do not grow)"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != exitUsage || stderr != "starter: "+c.want+"\n" {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
}
