package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
)

// maintain and schedule refuse an unknown job and a purge window below the
// floor before anything starts, as usage errors (exit 2).
func TestMaintValidate(t *testing.T) {
	f := maintFlags{retention: time.Hour, floor: 7 * 24 * time.Hour}
	for _, c := range []struct{ job, wantErr string }{
		{"compact", ""},
		{"expire", ""},
		{"keep-applied", ""},
		{"bogus", `unknown job "bogus": give purge, compact, expire or keep-applied`},
		{"purge", "--retention 1h0m0s is shorter than the floor 168h0m0s"},
	} {
		err := f.validate(c.job)
		var ee *exitError
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.job, err)
		case c.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), c.wantErr) || !errors.As(err, &ee) || ee.code != exitUsage):
			t.Errorf("%s: err = %v, want a usage error starting %q", c.job, err, c.wantErr)
		}
	}
	f.floor = time.Minute // lowered on purpose
	if err := f.validate("purge"); err != nil {
		t.Errorf("purge with a lowered floor: %v", err)
	}
	// --bronze-retention takes days and is refused below one
	if err := f.bronzeRetention.Set("30d"); err != nil || time.Duration(f.bronzeRetention) != 30*24*time.Hour || f.bronzeRetention.String() != "30d" {
		t.Fatalf("30d: %v %s", err, f.bronzeRetention.String())
	}
	if err := f.validate("expire"); err != nil {
		t.Errorf("expire with a 30-day bronze retention: %v", err)
	}
	if req := f.request(activities.TableSpec{Table: "shop.orders"}, "expire"); req.BronzeRetention != 30*24*time.Hour {
		t.Errorf("request bronze retention %s", req.BronzeRetention)
	}
	_ = f.bronzeRetention.Set("12h")
	var ee *exitError
	if err := f.validate("expire"); err == nil || !errors.As(err, &ee) || ee.code != exitUsage ||
		err.Error() != "--bronze-retention: bronze retention 12h0m0s is shorter than a day: bronze is dropped in whole day partitions (0 keeps it for ever)" {
		t.Errorf("12h: %v", err)
	}
}
