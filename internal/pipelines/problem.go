package pipelines

import (
	"fmt"
	"strings"
)

// Problem is one error or warning about a pipelines file, at a place in it.
type Problem struct {
	File    string // the file's name as given to Parse
	Line    int    // 1-based line; 0 = the file as a whole
	Path    string // YAML path, e.g. "pipelines[2].max_wait"; "" = the document
	Msg     string
	Warning bool // a warning does not stop apply
}

// String renders the problem as "FILE:LINE: [warning: ]PATH: MSG" (the
// line and path are left out when unknown).
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Warning {
		b.WriteString("warning: ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is a list of problems; as an error it is every problem, one a
// line, in file order.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Errors returns the problems that are not warnings.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// Warnings returns the problems that are warnings.
func (ps Problems) Warnings() Problems {
	var out Problems
	for _, p := range ps {
		if p.Warning {
			out = append(out, p)
		}
	}
	return out
}
