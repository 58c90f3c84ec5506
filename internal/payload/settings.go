package payload

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Setting describes one table setting of the Settings table: its one
// user-facing name, where it lives in TableSpec (and SettingsChange), its
// default, its rule and its help. The starter's flags (start, settings),
// the pipelines file (internal/pipelines) and the table workflow's
// settings update all read the setting from here.
type Setting struct {
	// Name is the canonical user-facing name: the pipelines file's key
	// and, with "-" for "_", the starter flag ("batch_size",
	// --batch-size); errors name the setting by it.
	Name string
	// JSON is the JSON name of the TableSpec field (and of the
	// SettingsChange field for a Live setting): the name workflow
	// histories record, kept as it was ("max_events" for batch_size).
	JSON string
	// Aliases are other spellings the pipelines file and the flags accept
	// for Name (the JSON name, when it differs: status --output json
	// shows the spec by it).
	Aliases []string
	// Doc is the one-line help of the flag and the configuration
	// reference.
	Doc string
	// Default is the value TableSpec.Defaults puts in a zero field (an
	// int, a time.Duration or a string, the field's type); nil = the
	// zero value is the default.
	Default any
	// Live: a running table takes a change through the settings update
	// (`starter settings`, `starter apply`); otherwise the setting is
	// fixed when the pipeline starts.
	Live bool
	// PerGroup: the setting is its source group's (Group), the same for
	// every table of the group; the pipelines file gives it once per group
	// (groups.NAME.<name>), not per pipeline.
	PerGroup bool
	// check returns why the setting's value in s is not accepted ("" when
	// it is): a short phrase that follows the setting's name, e.g. "0
	// outside 1..1000000 records".
	check func(s TableSpec) string

	index []int // of the field in TableSpec
}

// SettingError is a setting's value that its rule refuses (Setting.Check,
// TableSpec.Validate, SettingsChange.Validate).
type SettingError struct {
	Name string // the setting's canonical name, e.g. "batch_size"
	Why  string // e.g. "0 outside 1..1000000 records"
}

// Error is "NAME: WHY", e.g. "batch_size: 0 outside 1..1000000 records".
func (e *SettingError) Error() string { return e.Name + ": " + e.Why }

// Flag is the setting's starter flag name: Name with "-" for "_".
func (s *Setting) Flag() string { return strings.ReplaceAll(s.Name, "_", "-") }

// Kind is the Go type of the setting's value: int, time.Duration or
// string.
//
//workflowcheck:ignore (reflection over the spec's fields: deterministic)
func (s *Setting) Kind() reflect.Type { return reflect.TypeOf(TableSpec{}).FieldByIndex(s.index).Type }

// Ptr is a pointer to the setting's field in spec: *int, *time.Duration
// or *string (for binding a flag to it).
//
//workflowcheck:ignore (reflection over the spec's fields: deterministic)
func (s *Setting) Ptr(spec *TableSpec) any {
	return reflect.ValueOf(spec).Elem().FieldByIndex(s.index).Addr().Interface()
}

// Get is the setting's value in spec (int, time.Duration or string).
//
//workflowcheck:ignore (reflection over the spec's fields: deterministic)
func (s *Setting) Get(spec TableSpec) any {
	return reflect.ValueOf(spec).FieldByIndex(s.index).Interface()
}

// Set stores v (the setting's Kind) in spec's field; a v of another type
// panics.
//
//workflowcheck:ignore (reflection over the spec's fields: deterministic)
func (s *Setting) Set(spec *TableSpec, v any) {
	reflect.ValueOf(spec).Elem().FieldByIndex(s.index).Set(reflect.ValueOf(v))
}

// Check returns a *SettingError when spec's value of the setting breaks
// its rule, else nil.
func (s *Setting) Check(spec TableSpec) error {
	if s.check == nil {
		return nil
	}
	if why := s.check(spec); why != "" {
		return &SettingError{Name: s.Name, Why: why}
	}
	return nil
}

// Parse reads the setting's value from text: a decimal integer, a
// duration (ParseDuration: "500ms", "2s", "30d") or the text itself.
// Errors say what is accepted, without the setting's name.
func (s *Setting) Parse(text string) (any, error) {
	switch s.Kind() {
	case durationType:
		return ParseDuration(text)
	case intType:
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", text)
		}
		return n, nil
	}
	return text, nil
}

// Format writes v (the setting's Kind) the way Parse reads it; durations
// as FormatDuration does.
func (s *Setting) Format(v any) string {
	switch x := v.(type) {
	case time.Duration:
		return FormatDuration(x)
	case int:
		return strconv.Itoa(x)
	}
	return fmt.Sprint(v)
}

var (
	intType      = reflect.TypeOf(0)
	durationType = reflect.TypeOf(time.Duration(0))
	stringType   = reflect.TypeOf("")
)

// LookupSetting finds a setting by its canonical name or an alias, with
// "-" or "_" between words (a flag's or a key's spelling); nil when there
// is none.
func LookupSetting(name string) *Setting {
	name = strings.ReplaceAll(name, "-", "_")
	for i := range Settings {
		s := &Settings[i]
		if s.Name == name {
			return s
		}
		for _, a := range s.Aliases {
			if a == name {
				return s
			}
		}
	}
	return nil
}

// Validate checks every setting of Settings in s against its rule and
// returns the first refusal as a *SettingError (in Settings order), or
// nil. Apply Defaults first: a zero value is not a default here.
func (s TableSpec) Validate() error {
	for i := range Settings {
		if err := Settings[i].Check(s); err != nil {
			return err
		}
	}
	return nil
}

// Defaults fills each zero field of a Settings setting with its Default
// (an int or a duration at or below zero counts as zero).
//
//workflowcheck:ignore (reflection over the spec's fields: deterministic)
func (s TableSpec) Defaults() TableSpec {
	for i := range Settings {
		st := &Settings[i]
		if st.Default == nil {
			continue
		}
		f := reflect.ValueOf(&s).Elem().FieldByIndex(st.index)
		zero := false
		switch f.Kind() {
		case reflect.String:
			zero = f.String() == ""
		case reflect.Int, reflect.Int64:
			zero = f.Int() <= 0
		}
		if zero {
			f.Set(reflect.ValueOf(st.Default))
		}
	}
	return s
}

// SettingsOnly is s with only the fields of Settings' settings set, the
// others zero.
func (s TableSpec) SettingsOnly() TableSpec {
	var out TableSpec
	for i := range Settings {
		Settings[i].Set(&out, Settings[i].Get(s))
	}
	return out
}

// field is c's field of the live setting s (a nil or non-nil pointer).
//
//workflowcheck:ignore (reflection over the spec's fields: deterministic)
func (c *SettingsChange) field(s *Setting) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		if jsonName(v.Type().Field(i)) == s.JSON {
			return v.Field(i)
		}
	}
	panic("payload: SettingsChange has no field " + s.JSON + " for live setting " + s.Name)
}

// Set records a new value v (the setting's Kind) for the live setting
// named name (canonical or alias); it panics for another name, a setting
// that is not Live or a v of another type.
//
//workflowcheck:ignore (reflection over the spec's fields: deterministic)
func (c *SettingsChange) Set(name string, v any) {
	s := LookupSetting(name)
	if s == nil || !s.Live {
		panic("payload: no live setting " + name)
	}
	p := reflect.New(s.Kind())
	p.Elem().Set(reflect.ValueOf(v))
	c.field(s).Set(p)
}

// Changed lists the live settings c changes, in Settings order.
func (c SettingsChange) Changed() []*Setting {
	var out []*Setting
	for i := range Settings {
		if s := &Settings[i]; s.Live && !c.field(s).IsNil() {
			out = append(out, s)
		}
	}
	return out
}

// Apply is spec with c's new values.
func (c SettingsChange) Apply(spec TableSpec) TableSpec {
	for _, s := range c.Changed() {
		s.Set(&spec, c.field(s).Elem().Interface())
	}
	return spec
}

// Validate checks each new value of c against its setting's rule and
// returns the first refusal as a *SettingError, or nil.
func (c SettingsChange) Validate() error {
	next := c.Apply(TableSpec{})
	for _, s := range c.Changed() {
		if err := s.Check(next); err != nil {
			return err
		}
	}
	return nil
}

// IsZero reports whether c changes nothing.
func (c SettingsChange) IsZero() bool { return len(c.Changed()) == 0 }

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// index the Settings table: each setting's TableSpec field by its JSON
// name, which must exist and be an int, a time.Duration or a string; a
// Live setting must have its SettingsChange field.
func init() {
	t := reflect.TypeOf(TableSpec{})
	for i := range Settings {
		s := &Settings[i]
		for j := 0; j < t.NumField(); j++ {
			if jsonName(t.Field(j)) == s.JSON {
				s.index = t.Field(j).Index
			}
		}
		if s.index == nil {
			panic("payload: Settings: TableSpec has no field " + s.JSON)
		}
		if k := s.Kind(); k != intType && k != durationType && k != stringType {
			panic("payload: Settings: " + s.Name + " is a " + k.String())
		}
		if s.Default != nil && reflect.TypeOf(s.Default) != s.Kind() {
			panic("payload: Settings: the default of " + s.Name + " is not a " + s.Kind().String())
		}
		if s.Live {
			var c SettingsChange
			if f := c.field(s); f.Type().Elem() != s.Kind() {
				panic("payload: SettingsChange." + s.JSON + " is not a *" + s.Kind().String())
			}
		}
	}
}

// ParseDuration reads a Go duration ("500ms", "2s", "1h30m") or a whole
// number of days ("30d"). Errors say what is accepted.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 500ms, 2s, 1h, 30d)", s)
	}
	return d, nil
}

// FormatDuration writes d the way a pipelines file would: whole days as
// "30d", else Go's form without zero units ("1h", "1h30m", "2s",
// "500ms"); 0 is "0s".
func FormatDuration(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
