package typing

import (
	"github.com/lakemirror/lakemirror/internal/cdc"
)

// InferColumns returns the column list for events that carried no Connect
// schema: the union of the columns of the events' images (Before and
// After), in first-seen order, each typed from the values seen:
//
//   - NULL and TOAST placeholders (KindUnavailable) say nothing and are
//     skipped; a column that has nothing else is string ("json:null").
//   - only booleans: boolean. Only strings: string.
//   - only numbers: double if any is a Float (integers and decimals then
//     Coerce exactly or report that they do not fit); else long if all are
//     Int; else (integers beyond int64, decoded as scale-0 decimals, e.g.
//     BIGINT UNSIGNED) decimal(20,0) when every value has at most 20
//     digits, decimal(38,0) up to 38 digits, string beyond (Iceberg's
//     decimal precision ends at 38). Decimals with a scale (only from typed
//     decoding) give decimal(38, the largest scale).
//   - only one other kind (date, time, timestamp, timestamptz, uuid,
//     binary; only from typed decoding): that type.
//   - mixed kinds (e.g. integers and strings, booleans and numbers):
//     string. Coerce turns integers, floats, booleans and decimals into
//     their JSON text for such a column, losslessly; other kinds fail.
//
// Every inferred column is Optional: a sample of events cannot prove NOT
// NULL. Source records what was seen: "json:boolean", "json:string",
// "json:integer", "json:number", "json:null", "json:mixed", or
// "json:<type>" for other kinds. Events decoded with a Connect schema
// should use Event.Schema instead.
func InferColumns(events []*cdc.Event) []cdc.Column {
	var order []string
	stats := map[string]*colStat{}
	add := func(r *cdc.Row) {
		if r == nil || r.Cols == nil {
			return
		}
		for i, name := range r.Cols.Names {
			if i >= len(r.Vals) {
				break
			}
			st := stats[name]
			if st == nil {
				st = &colStat{}
				stats[name] = st
				order = append(order, name)
			}
			st.add(r.Vals[i])
		}
	}
	for _, ev := range events {
		if ev == nil {
			continue
		}
		add(ev.Before)
		add(ev.After)
	}
	cols := make([]cdc.Column, len(order))
	for i, name := range order {
		t, src := stats[name].result()
		cols[i] = cdc.Column{Name: name, Type: t, Optional: true, Source: src}
	}
	return cols
}

// colStat accumulates what one column's values look like.
type colStat struct {
	kinds     uint32 // bit per cdc.Kind seen (NULL and unavailable excluded)
	maxDigits int    // decimals: most unscaled digits
	maxScale  int16  // decimals: largest scale
}

func (s *colStat) add(v cdc.Value) {
	if v.Kind == cdc.KindNull || v.Kind == cdc.KindUnavailable {
		return
	}
	s.kinds |= 1 << v.Kind
	if v.Kind == cdc.KindDecimal {
		d := len(v.UnscaledText())
		if v.UnscaledText()[0] == '-' {
			d--
		}
		s.maxDigits = max(s.maxDigits, d)
		s.maxScale = max(s.maxScale, v.Scale)
	}
}

func (s *colStat) result() (cdc.Type, string) {
	const (
		bInt   = 1 << cdc.KindInt
		bFloat = 1 << cdc.KindFloat
		bDec   = 1 << cdc.KindDecimal
	)
	switch {
	case s.kinds == 0:
		return cdc.TypeString, "json:null"
	case s.kinds == 1<<cdc.KindBool:
		return cdc.TypeBool, "json:boolean"
	case s.kinds == 1<<cdc.KindString:
		return cdc.TypeString, "json:string"
	case s.kinds == bInt:
		return cdc.TypeLong, "json:integer"
	case s.kinds&^(bInt|bFloat|bDec) == 0:
		if s.kinds&bFloat != 0 {
			return cdc.TypeDouble, "json:number"
		}
		if s.maxScale > 0 {
			return cdc.DecimalType(38, s.maxScale), "json:number"
		}
		switch {
		case s.maxDigits <= 20:
			return cdc.DecimalType(20, 0), "json:integer"
		case s.maxDigits <= 38:
			return cdc.DecimalType(38, 0), "json:integer"
		}
		return cdc.TypeString, "json:integer"
	}
	for k := cdc.KindBool; k <= cdc.KindUUID; k++ {
		if s.kinds == 1<<k {
			t := typeOfKind(k)
			return t, "json:" + t.String()
		}
	}
	return cdc.TypeString, "json:mixed"
}

func typeOfKind(k cdc.Kind) cdc.Type {
	switch k {
	case cdc.KindBytes:
		return cdc.TypeBinary
	case cdc.KindDate:
		return cdc.TypeDate
	case cdc.KindTime:
		return cdc.TypeTime
	case cdc.KindTimestamp:
		return cdc.TypeTimestamp
	case cdc.KindTimestampTZ:
		return cdc.TypeTimestampTZ
	case cdc.KindUUID:
		return cdc.TypeUUID
	}
	return cdc.TypeString
}
