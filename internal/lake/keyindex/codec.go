package keyindex

import (
	"encoding/binary"
	"errors"
	"io"
)

// Enc writes the fields of the state sidecar (docs/design.md, "State
// sidecar"), little-endian, every count and length an unsigned varint;
// the first error sticks in Err.
type Enc struct {
	W   io.Writer
	Err error
	buf []byte
}

// Raw writes b as it is.
func (e *Enc) Raw(b []byte) {
	if e.Err == nil {
		_, e.Err = e.W.Write(b)
	}
}

// Uv writes v as an unsigned varint.
func (e *Enc) Uv(v uint64) { e.Raw(binary.AppendUvarint(e.buf[:0], v)) }

// U32 writes v as 4 bytes.
func (e *Enc) U32(v uint32) { e.Raw(binary.LittleEndian.AppendUint32(e.buf[:0], v)) }

// U64 writes v as 8 bytes.
func (e *Enc) U64(v uint64) { e.Raw(binary.LittleEndian.AppendUint64(e.buf[:0], v)) }

// Bytes writes b's length, then b.
func (e *Enc) Bytes(b []byte) {
	e.Uv(uint64(len(b)))
	e.Raw(b)
}

// Strs writes the count, then each string as length and bytes.
func (e *Enc) Strs(ss []string) {
	e.Uv(uint64(len(ss)))
	for _, s := range ss {
		e.Bytes([]byte(s))
	}
}

// U32s writes the count, then each value as 4 bytes.
func (e *Enc) U32s(vs []uint32) {
	e.Uv(uint64(len(vs)))
	for _, v := range vs {
		e.U32(v)
	}
}

// U64s writes the count, then each value as 8 bytes.
func (e *Enc) U64s(vs []uint64) {
	e.Uv(uint64(len(vs)))
	for _, v := range vs {
		e.U64(v)
	}
}

// Dec reads what Enc wrote from B, consuming it; the first error sticks
// in Err (ErrShort).
type Dec struct {
	B   []byte
	Err error
}

// ErrShort: the sidecar ends before a field does (torn, or not a
// sidecar).
var ErrShort = errors.New("lake: sidecar truncated")

// Raw returns the next n bytes (in place).
func (d *Dec) Raw(n int) []byte {
	if d.Err != nil || n < 0 || n > len(d.B) {
		d.Err = ErrShort
		return nil
	}
	out := d.B[:n]
	d.B = d.B[n:]
	return out
}

// Uv reads an unsigned varint.
func (d *Dec) Uv() uint64 {
	if d.Err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.B)
	if k <= 0 {
		d.Err = ErrShort
		return 0
	}
	d.B = d.B[k:]
	return v
}

// U32 reads 4 bytes.
func (d *Dec) U32() uint32 {
	b := d.Raw(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// U64 reads 8 bytes.
func (d *Dec) U64() uint64 {
	b := d.Raw(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// Bytes reads a length and that many bytes (a copy).
func (d *Dec) Bytes() []byte {
	n := d.Uv()
	if n > uint64(len(d.B)) {
		d.Err = ErrShort
		return nil
	}
	return append([]byte(nil), d.Raw(int(n))...)
}

// Strs reads a count and that many strings.
func (d *Dec) Strs() []string {
	n := d.Uv()
	if n > uint64(len(d.B)) {
		d.Err = ErrShort
		return nil
	}
	out := make([]string, 0, n)
	for i := uint64(0); i < n && d.Err == nil; i++ {
		out = append(out, string(d.Bytes()))
	}
	return out
}

// U32s reads a count and that many 4-byte values.
func (d *Dec) U32s() []uint32 {
	n := d.Uv()
	if n > uint64(len(d.B))/4 {
		d.Err = ErrShort
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = d.U32()
	}
	return out
}

// U64s reads a count and that many 8-byte values.
func (d *Dec) U64s() []uint64 {
	n := d.Uv()
	if n > uint64(len(d.B))/8 {
		d.Err = ErrShort
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = d.U64()
	}
	return out
}
