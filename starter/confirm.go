package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// confirm asks the operator to type want (e.g. "yes", or a table name)
// before a command changes pipelines or drops tables. Without a terminal
// it refuses with a usage error (exit 2) that names --yes; an answer other
// than want is a failure (exit 1) that says nothing was changed.
func (a *app) confirm(w io.Writer, prompt, want string) error {
	if !a.interactive || a.in == nil {
		return usage("not confirmed: stdin is not a terminal; give --yes to go ahead without a confirmation (nothing was changed)")
	}
	fmt.Fprintf(w, "%s ", prompt)
	line, err := bufio.NewReader(a.in).ReadString('\n')
	if err != nil && line == "" {
		return &exitError{code: exitFailure, err: errors.New("not confirmed: no answer (nothing was changed)")}
	}
	if strings.TrimSpace(line) != want {
		return &exitError{code: exitFailure, err: fmt.Errorf("not confirmed: the answer was not %q (nothing was changed)", want)}
	}
	return nil
}
