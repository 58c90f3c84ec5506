package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// confirm goes ahead only on the exact answer typed on a terminal; another
// answer fails (exit 1), no terminal is a usage error (exit 2).
func TestConfirm(t *testing.T) {
	for _, c := range []struct {
		interactive bool
		input       string
		code        int
	}{
		{true, "yes\n", exitOK},
		{true, "  yes \n", exitOK},
		{true, "y\n", exitFailure},
		{true, "", exitFailure},
		{false, "yes\n", exitUsage},
	} {
		a := &app{in: strings.NewReader(c.input), interactive: c.interactive}
		var out bytes.Buffer
		err := a.confirm(&out, "Apply this plan?", "yes")
		var ee *exitError
		code := exitOK
		if errors.As(err, &ee) {
			code = ee.code
		}
		if code != c.code || (c.interactive && out.String() != "Apply this plan? ") {
			t.Errorf("interactive %v, input %q: exit %d (%v), prompt %q; want exit %d", c.interactive, c.input, code, err, out.String(), c.code)
		}
	}
}
