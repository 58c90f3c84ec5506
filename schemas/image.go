package schemas

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Row images: the "before" and "after" objects of the envelope.

// layout is the field layout of a schema-less image: its column names in
// JSON order (shared by every image with that layout) and the declared
// spec of each column (nil: inferred from the JSON token).
type layout struct {
	cols  *cdc.Columns
	specs []*fieldSpec
}

// layoutCacheLimit bounds the number of distinct schema-less layouts kept.
const layoutCacheLimit = 1024

// resolveLayout finds or creates the layout of o's field names.
func (d *Decoder) resolveLayout(o *fastjson.Object) (*layout, error) {
	d.raw = d.raw[:0]
	o.Visit(func(k []byte, _ *fastjson.Value) {
		d.raw = binary.AppendUvarint(d.raw, uint64(len(k)))
		d.raw = append(d.raw, k...)
	})
	if l, ok := d.layouts[string(d.raw)]; ok {
		d.lastLayout = l
		return l, nil
	}
	names := make([]string, 0, o.Len())
	seen := make(map[string]bool, o.Len())
	var dup string
	o.Visit(func(k []byte, _ *fastjson.Value) {
		n := string(k)
		if seen[n] && dup == "" {
			dup = n
		}
		seen[n] = true
		names = append(names, n)
	})
	if dup != "" {
		return nil, fmt.Errorf("duplicate field %q", dup)
	}
	return d.addLayout(d.raw, names), nil
}

// addLayout creates the layout of column names (no duplicates), caches it
// under raw (its names, each preceded by its length as a uvarint) and
// makes it the last layout.
func (d *Decoder) addLayout(raw []byte, names []string) *layout {
	l := &layout{cols: cdc.NewColumns(names), specs: make([]*fieldSpec, len(names))}
	for i, n := range names {
		l.specs[i] = d.looseSpec(n)
	}
	if len(d.layouts) >= layoutCacheLimit {
		clear(d.layouts)
	}
	d.layouts[string(raw)] = l
	d.lastLayout = l
	return l
}

// decodeLooseRow decodes a schema-less image into vals (len(vals) ==
// o.Len()) and returns its layout. The common case, the same layout as the
// previous image, is checked while decoding, in one pass.
func (d *Decoder) decodeLooseRow(o *fastjson.Object, vals []cdc.Value) (*layout, error) {
	var err error
	if l := d.lastLayout; l != nil && len(l.specs) == len(vals) {
		blobMark, fixMark := len(d.blob), len(d.fix)
		i, same := 0, true
		o.Visit(func(k []byte, v *fastjson.Value) {
			if !same || err != nil {
				return
			}
			if l.cols.Names[i] != string(k) {
				same = false
				return
			}
			if fs := l.specs[i]; fs != nil || !d.inferFast(v, &vals[i]) {
				if e := d.field(v, fs, &vals[i]); e != nil {
					err = fmt.Errorf("%s: %w", l.cols.Names[i], e)
				}
			}
			i++
		})
		if err != nil {
			return nil, err
		}
		if same {
			return l, nil
		}
		d.blob, d.fix = d.blob[:blobMark], d.fix[:fixMark]
		clear(vals)
	}
	l, err := d.resolveLayout(o)
	if err != nil {
		return nil, err
	}
	return l, d.decodeLayoutRow(o, l, vals)
}

// inferFast handles the common schema-less tokens (integers that fit
// int64, plain strings, booleans, null) inline; it returns false for
// anything else, which then takes the general path.
func (d *Decoder) inferFast(v *fastjson.Value, out *cdc.Value) bool {
	switch v.Type() {
	case fastjson.TypeNumber:
		d.num = v.MarshalTo(d.num[:0])
		if n, ok, overflow := parseJSONInt(d.num); ok && !overflow {
			*out = cdc.Int(n)
			return true
		}
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		if string(s) != d.phText && utf8.Valid(s) {
			d.putValue(out, cdc.Value{Kind: cdc.KindString}, s)
			return true
		}
	case fastjson.TypeNull:
		*out = cdc.Value{}
		return true
	case fastjson.TypeTrue:
		*out = cdc.Bool(true)
		return true
	case fastjson.TypeFalse:
		*out = cdc.Bool(false)
		return true
	}
	return false
}

// decodeLayoutRow decodes a schema-less image whose layout is l.
func (d *Decoder) decodeLayoutRow(o *fastjson.Object, l *layout, vals []cdc.Value) error {
	i := 0
	var err error
	o.Visit(func(_ []byte, v *fastjson.Value) {
		if err == nil {
			if e := d.field(v, l.specs[i], &vals[i]); e != nil {
				err = fmt.Errorf("%s: %w", l.cols.Names[i], e)
			}
		}
		i++
	})
	return err
}

// decodeStructRow decodes an image typed by its Connect struct schema.
// Fields normally arrive in schema order (JsonConverter writes them so);
// otherwise they are matched by name. A field the schema lacks, a
// duplicate, or a missing required field is an error; a missing optional
// field is NULL.
func (d *Decoder) decodeStructRow(o *fastjson.Object, ss *structSpec, vals []cdc.Value) error {
	var err error
	if o.Len() == len(ss.fields) {
		blobMark, fixMark := len(d.blob), len(d.fix)
		i, inOrder := 0, true
		o.Visit(func(k []byte, v *fastjson.Value) {
			if err != nil || !inOrder {
				return
			}
			f := &ss.fields[i]
			if f.name != string(k) {
				inOrder = false
				return
			}
			if e := d.field(v, f, &vals[i]); e != nil {
				err = fmt.Errorf("%s: %w", f.name, e)
			}
			i++
		})
		if err != nil || inOrder {
			return err
		}
		d.blob, d.fix = d.blob[:blobMark], d.fix[:fixMark]
		clear(vals)
	}
	if cap(d.seen) < len(ss.fields) {
		d.seen = make([]bool, len(ss.fields))
	}
	seen := d.seen[:len(ss.fields)]
	clear(seen)
	o.Visit(func(k []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		j, ok := ss.index[string(k)]
		switch {
		case !ok:
			err = fmt.Errorf("field %q is not in the schema", k)
		case seen[j]:
			err = fmt.Errorf("duplicate field %q", k)
		default:
			seen[j] = true
			if e := d.field(v, &ss.fields[j], &vals[j]); e != nil {
				err = fmt.Errorf("%s: %w", k, e)
			}
		}
	})
	if err != nil {
		return err
	}
	for j, ok := range seen {
		if !ok && !ss.fields[j].optional {
			return fmt.Errorf("required field %q is missing", ss.fields[j].name)
		}
	}
	return nil
}

// imageObject checks that an image is an object or null.
func imageObject(v *fastjson.Value, name string) (*fastjson.Object, error) {
	if isNull(v) {
		return nil, nil
	}
	if v.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("%s: want an object or null, got %s", name, jsonTypeName(v))
	}
	o, _ := v.Object()
	return o, nil
}

// finishText turns the event's text blob into one string and points every
// pending value at its part of it. It returns the string.
func (d *Decoder) finishText() string {
	if len(d.blob) == 0 {
		d.fix = d.fix[:0]
		return ""
	}
	s := string(d.blob)
	for _, f := range d.fix {
		f.v.S = s[f.off:f.end]
	}
	clear(d.fix)
	d.fix = d.fix[:0]
	if cap(d.blob) > 1<<20 {
		d.blob = nil // do not keep a huge buffer after one huge record
	}
	return s
}

func (d *Decoder) beginText() {
	d.blob = d.blob[:0]
	d.fix = d.fix[:0]
}

// DecodeImage decodes one row image: a Debezium before/after JSON object
// without the Connect schema (JsonConverter schemas.enable=false). Columns
// declared in the decoder's options are decoded to their declared type; the
// others by the inference rule of the package doc. It is what Decode does
// to each image of a schema-less record, exposed for inputs that carry
// images without a position (e.g. captures whose source block was dropped).
// Errors name the column and why its value does not fit.
func (d *Decoder) DecodeImage(image []byte) (*cdc.Row, error) {
	if err := checkEscapes(image); err != nil {
		return nil, fmt.Errorf("schemas: malformed JSON: %v", err)
	}
	v, err := d.vp.ParseBytes(image)
	if err != nil {
		return nil, fmt.Errorf("schemas: malformed JSON: %v", err)
	}
	if v.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("schemas: image is %s, want an object", jsonTypeName(v))
	}
	o, _ := v.Object()
	d.beginText()
	vals := make([]cdc.Value, o.Len())
	l, err := d.decodeLooseRow(o, vals)
	if err != nil {
		d.beginText()
		return nil, fmt.Errorf("schemas: %v", err)
	}
	d.finishText()
	return &cdc.Row{Cols: l.cols, Vals: vals}, nil
}

// DecodeImage decodes one schema-less row image with the given declared
// columns (nil: infer every column); see Decoder.DecodeImage.
func DecodeImage(image []byte, declared []cdc.Column) (*cdc.Row, error) {
	return NewDecoder(DecoderOptions{Columns: declared}).DecodeImage(image)
}
