package erasure

import "strings"

// ErasureRefusedError refuses an erasure that could not make its keys
// unreachable: a branch or tag keeps a snapshot that reaches a file
// holding a key (Force goes on anyway), or a table keeps every file
// (gc.enabled=false). Nothing was changed. Not retryable.
type ErasureRefusedError struct{ Reasons []string }

func (e *ErasureRefusedError) Error() string {
	return "lake: erasure refused, nothing was changed: " + strings.Join(e.Reasons, "; ")
}

// EraseKeyError is an erasure request that names no valid key of the
// table: bad input, not retryable.
type EraseKeyError struct{ Msg string }

func (e *EraseKeyError) Error() string { return "lake: erase: " + e.Msg }
