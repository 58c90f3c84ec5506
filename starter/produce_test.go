//go:build e2e

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/worker/runner"
)

// TestProduceRefusesAnotherSeed: the generated stream of another seed is
// another source history: produce refuses it into a topic that holds a
// seed's stream (exit 2, naming both seeds and the way on, nothing
// produced), takes the same seed again (a redelivery) and the other seed
// into its own topic.
func TestProduceRefusesAnotherSeed(t *testing.T) {
	st := testStack(t)
	args := stackArgs(st)
	produce := func(topic string, extra ...string) (int, string, string) {
		return cli(t, append(append([]string{"produce", topic}, extra...), args...)...)
	}
	if code, out, errw := produce("seed.public.orders"); code != exitOK || out != "produced 134 records to seed.public.orders (end offsets map[0:134])\n" {
		t.Fatalf("first produce: exit %d\n%s%s", code, out, errw)
	}
	code, out, errw := produce("seed.public.orders", "--seed", "2")
	want := "starter: topic seed.public.orders holds the generated stream of --seed 1; --seed 2 is another source history " +
		"(the same order_ids with other changes at the same positions), and a table reading both would see changes no source makes " +
		"(validate: illegal transitions). Nothing was produced: give --seed 2 its own topic (starter produce seed.public.orders.seed2 --seed 2), " +
		"or produce --seed 1 again for a redelivery of the same history\n"
	if code != exitUsage || out != "" || errw != want {
		t.Fatalf("--seed 2 into seed 1's topic: exit %d\nstdout %q\nstderr %q\nwant %q", code, out, errw, want)
	}
	kc, err := runner.NewKafka(st.Settings)
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	ends, err := kc.EndOffsets(context.Background(), "seed.public.orders")
	if err != nil || ends[0] != 134 {
		t.Fatalf("after the refusal: end offsets %v (%v), want 0:134", ends, err)
	}
	if code, out, errw := produce("seed.public.orders"); code != exitOK || !strings.HasSuffix(out, "(end offsets map[0:268])\n") {
		t.Fatalf("the same seed again: exit %d\n%s%s", code, out, errw)
	}
	if code, out, errw := produce("seed.public.orders.seed2", "--seed", "2"); code != exitOK || !strings.HasPrefix(out, "produced ") {
		t.Fatalf("--seed 2 into its own topic: exit %d\n%s%s", code, out, errw)
	}
}
