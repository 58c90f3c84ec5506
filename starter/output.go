package main

import (
	"encoding/json"
	"fmt"
	"io"
)

// writeJSON writes v as indented JSON (--output json), one value ending in
// a newline. Errors: the writer's.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printCheckRun writes a validation or reconciliation run as JSON (asJSON)
// or through text, and returns an exit error with code exitFailure
// naming how many of its checks failed, nil when none did.
func printCheckRun(w io.Writer, asJSON bool, res any, text func(io.Writer), failed, checks int, runID string) error {
	if asJSON {
		if err := writeJSON(w, res); err != nil {
			return err
		}
	} else {
		text(w)
	}
	if failed > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("%d of %d checks failed (run %s)", failed, checks, runID)}
	}
	return nil
}
