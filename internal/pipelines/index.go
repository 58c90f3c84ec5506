package pipelines

import (
	"fmt"
	"github.com/lakemirror/lakemirror/internal/payload"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// nodeIndex maps YAML paths ("pipelines[2].maintenance.retention") to
// their nodes, so that problems name a path and a line.
type nodeIndex struct {
	key   map[string]*yaml.Node // the key node of a mapping entry, the item node of a list item
	value map[string]*yaml.Node
	all   []indexed // document order, a key given twice twice
}

type indexed struct {
	path       string
	key, value *yaml.Node
}

func indexNodes(doc *yaml.Node) *nodeIndex {
	ix := &nodeIndex{key: map[string]*yaml.Node{}, value: map[string]*yaml.Node{}}
	var walk func(prefix string, n *yaml.Node)
	walk = func(prefix string, n *yaml.Node) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if prefix != "" {
					p = prefix + "." + k.Value
				}
				if _, dup := ix.key[p]; !dup {
					ix.key[p], ix.value[p] = k, v
				}
				ix.all = append(ix.all, indexed{p, k, v})
				walk(p, v)
			}
		case yaml.SequenceNode:
			for i, item := range n.Content {
				p := fmt.Sprintf("%s[%d]", prefix, i)
				ix.key[p], ix.value[p] = item, item
				ix.all = append(ix.all, indexed{p, item, item})
				walk(p, item)
			}
		case yaml.AliasNode:
			if n.Alias != nil {
				walk(prefix, n.Alias)
			}
		}
	}
	walk("", doc)
	return ix
}

// line returns the line of path's key (0 when the path is not in the file).
func (ix *nodeIndex) line(path string) int {
	if n, ok := ix.key[path]; ok {
		return n.Line
	}
	return 0
}

var (
	yamlTypeLine   = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownField   = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)
	fieldTwice     = regexp.MustCompile(`^(?:field (\S+) already set in type \S+|mapping key "(.*)" already defined at line (\d+))$`)
	atColumn       = regexp.MustCompile(`^col (\d+): (.*)$`)
	cannotDecode   = regexp.MustCompile(`^cannot unmarshal !!(\w+)(?: ` + "`.*`" + `)? into (\S+)$`)
	knownFieldList = map[string][]string{ // for "did you mean"
		"rawFile":        {"version", "defaults", "pipelines", "groups"},
		"rawGroup":       fieldsOf(rawGroup{}),
		"rawSettings":    settingsKeys(),
		"rawEntry":       append(settingsKeys(), entryKeys()...),
		"rawMaintenance": fieldsOf(rawMaintenance{}),
	}
)

// explain turns one of yaml.v3's decoding messages ("line 7: field
// max_wiat not found in type pipelines.rawEntry") into a Problem with the
// path and a message in the file's terms.
func (ix *nodeIndex) explain(msg string) Problem {
	m := yamlTypeLine.FindStringSubmatch(msg)
	if m == nil {
		return Problem{Msg: msg}
	}
	line, _ := strconv.Atoi(m[1])
	rest := m[2]
	p := Problem{Line: line, Msg: rest}
	if u := unknownField.FindStringSubmatch(rest); u != nil {
		p.Path = ix.keyAt(line, u[1])
		typ := u[2][strings.LastIndexByte(u[2], '.')+1:]
		switch {
		case typ == "rawSettings" && entryOnly[u[1]]:
			p.Msg = fmt.Sprintf("%s is set per pipeline, not in defaults", u[1])
		default:
			p.Msg = unknownKey(u[1], knownFieldList[typ])
		}
		return p
	}
	if d := fieldTwice.FindStringSubmatch(rest); d != nil {
		name := d[1] + d[2]
		p.Path = ix.keyAt(line, name)
		p.Msg = "given twice"
		if d[3] != "" {
			p.Msg += " (first at line " + d[3] + ")"
		}
		return p
	}
	if c := cannotDecode.FindStringSubmatch(rest); c != nil {
		kind := map[string]yaml.Kind{"map": yaml.MappingNode, "seq": yaml.SequenceNode}[c[1]]
		if kind == 0 {
			kind = yaml.ScalarNode
		}
		p.Path = ix.valueOfKindAt(line, kind)
		val := "the value"
		if n := ix.valueOn(p.Path, line); n != nil {
			switch n.Kind {
			case yaml.ScalarNode:
				val = strconv.Quote(n.Value)
			case yaml.MappingNode:
				val = "a mapping"
			case yaml.SequenceNode:
				val = "a list"
			}
		}
		want := map[string]string{"int": "an integer", "int64": "an integer", "bool": "true or false", "string": "a string",
			"[]pipelines.rawEntry": "a list of pipelines", "*pipelines.rawSettings": "a mapping", "pipelines.rawSettings": "a mapping",
			"pipelines.rawEntry": "a mapping", "*pipelines.rawMaintenance": "a mapping", "pipelines.rawMaintenance": "a mapping"}[c[2]]
		if want == "" {
			want = "of type " + c[2]
		}
		p.Msg = fmt.Sprintf("%s is not %s", val, want)
		return p
	}
	if cm := atColumn.FindStringSubmatch(rest); cm != nil { // nameList's own: "col N: msg"
		col, _ := strconv.Atoi(cm[1])
		for _, e := range ix.all {
			if e.value.Line == line && e.value.Column == col {
				p.Path = e.path
			}
		}
		p.Msg = cm[2]
		return p
	}
	p.Path = ix.valueAt(line)
	return p
}

// valueOfKindAt is the deepest path whose value of kind starts on line
// (else valueAt).
func (ix *nodeIndex) valueOfKindAt(line int, kind yaml.Kind) string {
	best := ""
	for _, e := range ix.all {
		if e.value.Line == line && e.value.Kind == kind && len(e.path) > len(best) {
			best = e.path
		}
	}
	if best == "" {
		return ix.valueAt(line)
	}
	return best
}

// valueOn is path's value node on line (of a key given twice, the one there).
func (ix *nodeIndex) valueOn(path string, line int) *yaml.Node {
	for _, e := range ix.all {
		if e.path == path && e.value.Line == line {
			return e.value
		}
	}
	return ix.value[path]
}

// decodes reports whether yaml.v3 decodes a list item into a struct: a
// mapping without a key given twice, or null. An item it does not decode
// is left out of the list it decodes, so the items after it move up.
func decodes(n *yaml.Node) bool {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return true
	}
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i < len(n.Content); i += 2 {
		for j := i + 2; j < len(n.Content); j += 2 {
			if n.Content[i].Kind == n.Content[j].Kind && n.Content[i].Value == n.Content[j].Value {
				return false
			}
		}
	}
	return true
}

// keyAt is the path of the key named name on line.
func (ix *nodeIndex) keyAt(line int, name string) string {
	for _, e := range ix.all {
		if e.key.Line == line && e.key.Value == name {
			return e.path
		}
	}
	return ix.valueAt(line)
}

// valueAt is the deepest path whose value starts on line.
func (ix *nodeIndex) valueAt(line int) string {
	best := ""
	for _, e := range ix.all {
		if e.value.Line == line && len(e.path) > len(best) {
			best = e.path
		}
	}
	return best
}

// fieldsOf lists a raw struct's YAML field names, inlined structs' too.
func fieldsOf(v any) []string {
	var out []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if opts == "inline" && t.Field(i).Type.Kind() == reflect.Map {
			continue // the keys no field takes (rawSettings.Other)
		}
		if opts == "inline" {
			out = append(out, fieldsOf(reflect.Zero(t.Field(i).Type).Interface())...)
			continue
		}
		out = append(out, name)
	}
	return out
}

// settingsKeys are the keys a defaults block and a pipeline share, in
// the file's order: rawSettings' fields with the names of
// payload.Settings after key.
func settingsKeys() []string {
	var out []string
	for _, k := range fieldsOf(rawSettings{}) {
		out = append(out, k)
		if k == "key" {
			for _, s := range payload.Settings {
				if s.PerGroup {
					continue
				}
				out = append(out, s.Name)
			}
		}
	}
	return out
}

// entryKeys are the keys only a pipeline has.
func entryKeys() []string {
	shared := map[string]bool{}
	for _, k := range fieldsOf(rawSettings{}) {
		shared[k] = true
	}
	var out []string
	for _, k := range fieldsOf(rawEntry{}) {
		if !shared[k] {
			out = append(out, k)
		}
	}
	return out
}

// unknownKey is the message of a key the file does not take: "unknown
// field KEY", with "(did you mean K?)" when one of known is close.
func unknownKey(key string, known []string) string {
	msg := "unknown field " + key
	if s := closest(key, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return msg
}

// closest returns the candidate at edit distance at most 2 from s (the
// first of the nearest), or "".
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
