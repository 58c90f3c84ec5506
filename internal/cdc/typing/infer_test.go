package typing

import (
	"fmt"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

func TestInferColumns(t *testing.T) {
	// The images as schemas' decoder reads these JSON objects (no Connect
	// schema): integers beyond int64 as scale-0 decimals, an object as its
	// compact JSON text, the TOAST placeholder as Unavailable.
	img := func(kv ...any) *cdc.Row {
		r := &cdc.Row{}
		var names []string
		for i := 0; i < len(kv); i += 2 {
			names = append(names, kv[i].(string))
			r.Vals = append(r.Vals, kv[i+1].(cdc.Value))
		}
		r.Cols = cdc.NewColumns(names)
		return r
	}
	big := func(digits string) cdc.Value { return cdc.BigDecimal(digits, 0) }
	evs := []*cdc.Event{
		// {"a":1,"b":1,"c":"x","d":true,"e":null,"f":1,"g":1,"h":{"x":1}}
		{Op: cdc.OpCreate, After: img("a", cdc.Int(1), "b", cdc.Int(1), "c", cdc.String("x"), "d", cdc.Bool(true),
			"e", cdc.Null(), "f", cdc.Int(1), "g", cdc.Int(1), "h", cdc.String(`{"x":1}`))},
		// before {"a":2,"b":2.5,"c":"y","d":false,"e":null,"f":18446744073709551615,"g":"two"},
		// after {"a":3,"b":3,"c":"__debezium_unavailable_value","d":null,"e":null,"f":2,"g":true,"i":123456789012345678901234567890}
		{Op: cdc.OpUpdate, Before: img("a", cdc.Int(2), "b", cdc.Float(2.5), "c", cdc.String("y"), "d", cdc.Bool(false),
			"e", cdc.Null(), "f", big("18446744073709551615"), "g", cdc.String("two")),
			After: img("a", cdc.Int(3), "b", cdc.Int(3), "c", cdc.Unavailable(), "d", cdc.Null(), "e", cdc.Null(),
				"f", cdc.Int(2), "g", cdc.Bool(true), "i", big("123456789012345678901234567890"))},
		// {"a":4,"j":1234567890123456789012345678901234567890}
		{Op: cdc.OpDelete, Before: img("a", cdc.Int(4), "j", big("1234567890123456789012345678901234567890"))},
		nil,
	}
	got := InferColumns(evs)
	want := []cdc.Column{
		{Name: "a", Type: cdc.TypeLong, Optional: true, Source: "json:integer"},
		{Name: "b", Type: cdc.TypeDouble, Optional: true, Source: "json:number"},
		{Name: "c", Type: cdc.TypeString, Optional: true, Source: "json:string"},
		{Name: "d", Type: cdc.TypeBool, Optional: true, Source: "json:boolean"},
		{Name: "e", Type: cdc.TypeString, Optional: true, Source: "json:null"},
		{Name: "f", Type: cdc.DecimalType(20, 0), Optional: true, Source: "json:integer"},
		{Name: "g", Type: cdc.TypeString, Optional: true, Source: "json:mixed"},
		{Name: "h", Type: cdc.TypeString, Optional: true, Source: "json:string"},
		{Name: "i", Type: cdc.DecimalType(38, 0), Optional: true, Source: "json:integer"},
		{Name: "j", Type: cdc.TypeString, Optional: true, Source: "json:integer"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("InferColumns:\n got %+v\nwant %+v", got, want)
	}
	// Mixed columns take the JSON text of their numbers and booleans.
	for _, c := range []struct {
		in   cdc.Value
		want string
	}{{cdc.Int(1), "1"}, {cdc.Bool(true), "true"}, {cdc.String("two"), "two"}} {
		v, err := Coerce(c.in, cdc.TypeString)
		if err != nil || v != cdc.String(c.want) {
			t.Errorf("Coerce(%+v, string) = %+v, %v", c.in, v, err)
		}
	}
	// Every value of every event Coerces to its inferred column type,
	// except where the rule says it cannot (j exceeds 38 digits: its
	// column is string and the decimal renders as text).
	for _, ev := range evs {
		if ev == nil {
			continue
		}
		for _, r := range []*cdc.Row{ev.Before, ev.After} {
			if r == nil {
				continue
			}
			for i, name := range r.Cols.Names {
				var col cdc.Column
				for _, c := range got {
					if c.Name == name {
						col = c
					}
				}
				if _, err := Coerce(r.Vals[i], col.Type); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}
	}
	if InferColumns(nil) == nil || len(InferColumns(nil)) != 0 {
		t.Errorf("InferColumns(nil) = %v", InferColumns(nil))
	}
}
