package localstate

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"

	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
)

// The sidecar file (the lake package's sidecar.go writes and loads it; docs/design.md,
// "State sidecar").
//
// Format, little-endian, every count and length an unsigned varint:
//
//	magic "LMSIDE02"
//	u64 mirror snapshot id, u64 history snapshot id, u64 built-at batch seq
//	strings: the metadata locations of the mirror and (when the state owns
//	         it) the history it was written against ("" for none)
//	u8  flags (bit 0: the log holds every past change)
//	strings: key columns
//	index: entries, key width (0: variable), seq words, keys used, keys with a mirror row;
//	       bytes keys; u32s key ends; u64s seq words; bytes flags; i32s file ids;
//	       u32s positions; u64s chain heads; u32s free entries; strings mirror files
//	strings: history files
//	layouts: count, then each layout's column names as strings
//	strings: topics
//	log: u64 length, then the chain log's bytes (its magic first; records keep their offsets)
//	u32 CRC-32 (IEEE) of every byte before it
//
// strings = count, then each as length + bytes; u32s/u64s/i32s = count,
// then fixed-width values.
const sidecarMagic = "LMSIDE02"

// SidecarImage is a sidecar's content: what EncodeSidecar writes and
// ParseSidecar reads.
type SidecarImage struct {
	MirrorSnap, HistorySnap int64
	BuiltAt                 int64    // the batch seq the tables held when the state was built
	Locs                    []string // metadata locations of the mirror and the history ("" for none)
	Flags                   byte     // bit 0: the log holds every past change
	KeyCols                 []string
	Ix                      *keyindex.Index
	HFiles                  []string
	Layouts                 [][]string
	Topics                  []string
	LogLen                  int64
	Log                     io.Reader // encode: the log's logLen bytes
	LogBytes                []byte    // parse: the log's bytes
}

// EncodeSidecar writes img in the sidecar format (without the checksum).
// Errors stick in e.Err.
func EncodeSidecar(e *keyindex.Enc, img *SidecarImage) {
	e.Raw([]byte(sidecarMagic))
	e.U64(uint64(img.MirrorSnap))
	e.U64(uint64(img.HistorySnap))
	e.U64(uint64(img.BuiltAt))
	e.Strs(img.Locs)
	e.Raw([]byte{img.Flags})
	e.Strs(img.KeyCols)
	img.Ix.EncodeSidecar(e)
	e.Strs(img.HFiles)
	e.Uv(uint64(len(img.Layouts)))
	for _, l := range img.Layouts {
		e.Strs(l)
	}
	e.Strs(img.Topics)
	e.U64(uint64(img.LogLen))
	if e.Err == nil {
		_, e.Err = io.Copy(e.W, img.Log)
	}
}

// ParseSidecar reads a whole sidecar file b (checksum included).
// Errors: ErrStaleSidecar when it does not verify (checksum, magic, a
// field cut short or inconsistent).
func ParseSidecar(b []byte) (*SidecarImage, error) {
	if len(b) < len(sidecarMagic)+4 {
		return nil, ErrStaleSidecar
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[len(b)-4:]) || string(body[:len(sidecarMagic)]) != sidecarMagic {
		return nil, ErrStaleSidecar
	}
	d := &keyindex.Dec{B: body[len(sidecarMagic):]}
	img := &SidecarImage{MirrorSnap: int64(d.U64()), HistorySnap: int64(d.U64()), BuiltAt: int64(d.U64())}
	img.Locs = d.Strs()
	if fl := d.Raw(1); fl != nil {
		img.Flags = fl[0]
	}
	img.KeyCols = d.Strs()
	if d.Err != nil {
		return nil, ErrStaleSidecar
	}
	ix, err := keyindex.DecodeSidecar(d, img.MirrorSnap)
	if err != nil {
		return nil, ErrStaleSidecar
	}
	img.Ix = ix
	img.HFiles = d.Strs()
	nl := int(d.Uv())
	for i := 0; i < nl && d.Err == nil; i++ {
		img.Layouts = append(img.Layouts, d.Strs())
	}
	img.Topics = d.Strs()
	img.LogLen = int64(d.U64())
	img.LogBytes = d.Raw(int(min(uint64(img.LogLen), math.MaxInt32*4)))
	if d.Err != nil || len(d.B) != 0 || len(img.Locs) != 2 ||
		len(img.LogBytes) < len(logMagic) || !knownLogMagic(string(img.LogBytes[:len(logMagic)])) {
		return nil, ErrStaleSidecar
	}
	return img, nil
}

// ErrStaleSidecar: the sidecar is for other snapshots, or does not
// verify (a torn or concurrent write, another format).
var ErrStaleSidecar = errors.New("lake: the state sidecar is for other snapshots of the table, or does not verify")

// knownLogMagic reports whether a sidecar's log starts with a magic this
// code reads: its own (logMagic) or the older logMagicV1. A
// worker of older code finds a log of this code's magic unknown and
// builds the state from the tables (reason tablestate.BuildStaleSidecar).
func knownLogMagic(m string) bool { return m == logMagic || m == logMagicV1 }
