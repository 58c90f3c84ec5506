// Package human renders values for people to read: durations in days,
// hours and minutes past a day instead of Go's hour count. Pure
// functions, no I/O; what a command prints as text goes through here, its
// --output json keeps the machine forms.
package human
