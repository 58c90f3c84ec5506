// Package cuts publishes the consistent cuts of a source group
// (docs/design.md, "Consistent cuts across a source group"; issue 37)
// in the Iceberg tables: the tags `cut-<n>` and `consistent` on each
// mirror and history table's snapshot at the cut, and the group table
// `<ns>._cuts` (one row per table per cut). Which W to cut at, and
// holding the tables there, are the group's workflow's (workflows) and
// the pure rule's (internal/cut); this package only writes what a cut
// left in the tables.
//
// Files:
//   - cuts.go: Publish (tags, the `_cuts` rows, `consistent`), Read (the
//     `_cuts` rows), Refs (a table's cut tags), the names.
package cuts
