package tablestate

import "github.com/lakemirror/lakemirror/internal/lake/keyindex"

// Knobs of the state's builds and recording that tests of the writers (in
// internal/lake) turn to reach their rare paths with small tables. Each
// Set function sets its knob for every State of the process and returns a
// function that restores the old value; they are not safe for concurrent
// use with running builds.

// SetBuildChunk makes every build read its tables in chunks of n rows
// (0: the size chosen from the budget), so that small tables spill runs.
func SetBuildChunk(n int) (restore func()) {
	old := testBuildChunk
	testBuildChunk = n
	return func() { testBuildChunk = old }
}

// SetBuildTickRows makes a build report its progress every n rows and
// keys (default 65,536).
func SetBuildTickRows(n int) (restore func()) {
	old := buildTickRows
	buildTickRows = n
	return func() { buildTickRows = old }
}

// SetParallelRecordKeys is the batch size in keys from which a batch's
// chain records are encoded on two goroutines (default 4,096).
func SetParallelRecordKeys(n int) (restore func()) {
	old := parallelRecordKeys
	parallelRecordKeys = n
	return func() { parallelRecordKeys = old }
}

// SetBudget gives every State made afterwards budget b for its key index
// (nil: unbounded, the default).
func SetBudget(b *keyindex.Budget) (restore func()) {
	old := testBudget
	testBudget = b
	return func() { testBudget = old }
}
