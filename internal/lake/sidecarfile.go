package lake

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"

	"github.com/lakemirror/lakemirror/internal/lake/keyindex"
)

// The sidecar file (sidecar.go writes and loads it; docs/design.md,
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

// sidecarImage is a sidecar's content: what encodeSidecar writes and
// parseSidecar reads.
type sidecarImage struct {
	mirrorSnap, historySnap int64
	builtAt                 int64    // the batch seq the tables held when the state was built
	locs                    []string // metadata locations of the mirror and the history ("" for none)
	flags                   byte     // bit 0: the log holds every past change
	keyCols                 []string
	ix                      *keyindex.Index
	hfiles                  []string
	layouts                 [][]string
	topics                  []string
	logLen                  int64
	log                     io.Reader // encode: the log's logLen bytes
	logBytes                []byte    // parse: the log's bytes
}

// encodeSidecar writes img in the sidecar format (without the checksum).
// Errors stick in e.Err.
func encodeSidecar(e *keyindex.Enc, img *sidecarImage) {
	e.Raw([]byte(sidecarMagic))
	e.U64(uint64(img.mirrorSnap))
	e.U64(uint64(img.historySnap))
	e.U64(uint64(img.builtAt))
	e.Strs(img.locs)
	e.Raw([]byte{img.flags})
	e.Strs(img.keyCols)
	img.ix.EncodeSidecar(e)
	e.Strs(img.hfiles)
	e.Uv(uint64(len(img.layouts)))
	for _, l := range img.layouts {
		e.Strs(l)
	}
	e.Strs(img.topics)
	e.U64(uint64(img.logLen))
	if e.Err == nil {
		_, e.Err = io.Copy(e.W, img.log)
	}
}

// parseSidecar reads a whole sidecar file b (checksum included).
// Errors: errStaleSidecar when it does not verify (checksum, magic, a
// field cut short or inconsistent).
func parseSidecar(b []byte) (*sidecarImage, error) {
	if len(b) < len(sidecarMagic)+4 {
		return nil, errStaleSidecar
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[len(b)-4:]) || string(body[:len(sidecarMagic)]) != sidecarMagic {
		return nil, errStaleSidecar
	}
	d := &keyindex.Dec{B: body[len(sidecarMagic):]}
	img := &sidecarImage{mirrorSnap: int64(d.U64()), historySnap: int64(d.U64()), builtAt: int64(d.U64())}
	img.locs = d.Strs()
	if fl := d.Raw(1); fl != nil {
		img.flags = fl[0]
	}
	img.keyCols = d.Strs()
	if d.Err != nil {
		return nil, errStaleSidecar
	}
	ix, err := keyindex.DecodeSidecar(d, img.mirrorSnap)
	if err != nil {
		return nil, errStaleSidecar
	}
	img.ix = ix
	img.hfiles = d.Strs()
	nl := int(d.Uv())
	for i := 0; i < nl && d.Err == nil; i++ {
		img.layouts = append(img.layouts, d.Strs())
	}
	img.topics = d.Strs()
	img.logLen = int64(d.U64())
	img.logBytes = d.Raw(int(min(uint64(img.logLen), math.MaxInt32*4)))
	if d.Err != nil || len(d.B) != 0 || len(img.locs) != 2 ||
		len(img.logBytes) < len(stateLogMagic) || !knownLogMagic(string(img.logBytes[:len(stateLogMagic)])) {
		return nil, errStaleSidecar
	}
	return img, nil
}

// errStaleSidecar: the sidecar is for other snapshots, or does not
// verify (a torn or concurrent write, another format).
var errStaleSidecar = errors.New("lake: the state sidecar is for other snapshots of the table, or does not verify")

// knownLogMagic reports whether a sidecar's log starts with a magic this
// code reads: its own (stateLogMagic) or the older stateLogMagicV1. A
// worker of older code finds a log of this code's magic unknown and
// builds the state from the tables (reason BuildStaleSidecar).
func knownLogMagic(m string) bool { return m == stateLogMagic || m == stateLogMagicV1 }
