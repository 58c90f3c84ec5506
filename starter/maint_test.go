package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// maintain and schedule refuse an unknown job and a purge window below the
// floor before anything starts, as usage errors (exit 2).
func TestMaintValidate(t *testing.T) {
	f := maintFlags{retention: time.Hour, floor: 7 * 24 * time.Hour}
	for _, c := range []struct{ job, wantErr string }{
		{"compact", ""},
		{"expire", ""},
		{"bogus", `unknown job "bogus": give purge, compact or expire`},
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
}
