package localstate

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
)

// Log is an append-only file of length-prefixed records on the
// worker's local disk, read back by reference with positioned reads (the
// page cache serves them; nothing is mapped into the process). A record's
// reference is its byte offset; offset 0 holds a magic header, so 0 means
// "no record". Appends are buffered and reach the file on flush; reads of
// records still in the buffer are served from it. Not safe for concurrent
// use.
type Log struct {
	f       *os.File
	path    string
	flushed int64  // bytes in the file
	buf     []byte // appended, not yet written
}

// logMagic starts every log this code writes. Its records may use
// every form record.go decodes; a log starting with logMagicV1
// (written before the build wrote one record per key, openAtRow) has no
// openAtRow records and reads the same. Both have the same length, so
// record references are the same.
const (
	logMagic   = "LMSTATE2"
	logMagicV1 = "LMSTATE1"
)

// flushAt is the buffered size at which appends are written through.
const flushAt = 4 << 20

// keepBuf is the most append buffer a log keeps once flushed (a batch's
// appends are flushed at its end): a larger one goes back to bufPool, and
// the next batch takes one from there, so that a table idle between
// batches holds a few KiB here instead of the largest batch's buffer (up
// to flushAt, on every table of a worker that holds hundreds), while the
// buffers are reused by whichever tables are writing.
const keepBuf = 8 << 10

// growTo is the capacity up to which an append buffer grows by itself
// (a small batch's); past it, appends take a buffer from bufPool.
const growTo = 64 << 10

// bufPool holds append buffers of flushAt bytes and more (*[]byte),
// shared by every log of the process.
var bufPool sync.Pool

// readAhead is how many bytes a read of one record asks for at first: a
// chain record of a row with its history is usually 0.2 to 0.6 KiB (each
// row stored once, see record.go), and a second positioned read costs a
// system call.
const readAhead = 1 << 10

// OpenLog creates (or truncates) the log file path.
func OpenLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lake: local state log: %w", err)
	}
	l := &Log{f: f, path: path, buf: append(make([]byte, 0, keepBuf), logMagic...)}
	return l, nil
}

// Size is the log's length in bytes, buffered appends included.
func (l *Log) Size() int64 { return l.flushed + int64(len(l.buf)) }

// Append adds one record and returns its reference. The payload is
// copied.
func (l *Log) Append(payload []byte) (uint64, error) {
	ref := uint64(l.Size())
	if need := len(l.buf) + binary.MaxVarintLen64 + len(payload); need > cap(l.buf) && cap(l.buf) >= growTo && cap(l.buf) < flushAt {
		l.takeBuf() // past growTo: one buffer of flushAt, not doubling
	}
	l.buf = binary.AppendUvarint(l.buf, uint64(len(payload)))
	l.buf = append(l.buf, payload...)
	if len(l.buf) >= flushAt {
		if err := l.write(); err != nil {
			return 0, err
		}
		l.buf = l.buf[:0] // the batch goes on: keep the buffer
	}
	return ref, nil
}

// takeBuf moves the buffered bytes into a buffer of at least flushAt
// bytes from bufPool (a new one when it has none), and gives the old one
// back when it is one of those.
func (l *Log) takeBuf() {
	var nb []byte
	if p, ok := bufPool.Get().(*[]byte); ok {
		nb = (*p)[:0]
	} else {
		nb = make([]byte, 0, flushAt+(64<<10))
	}
	nb = append(nb, l.buf...)
	l.putBuf()
	l.buf = nb
}

// putBuf gives l.buf to bufPool when it is a pool-sized buffer.
func (l *Log) putBuf() {
	if cap(l.buf) >= flushAt {
		b := l.buf[:0]
		bufPool.Put(&b)
	}
}

// write writes the buffered appends to the file; l.buf then holds what
// was not written.
func (l *Log) write() error {
	n, err := l.f.WriteAt(l.buf, l.flushed)
	l.flushed += int64(n)
	if err != nil {
		l.buf = l.buf[n:]
		return fmt.Errorf("lake: write local state log %s: %w", l.path, err)
	}
	return nil
}

// Flush writes buffered appends to the file. A buffer larger than keepBuf
// goes back to bufPool.
func (l *Log) Flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	if err := l.write(); err != nil {
		return err
	}
	if cap(l.buf) > keepBuf {
		l.putBuf()
		l.buf = nil // the next append takes a buffer again
	} else {
		l.buf = l.buf[:0]
	}
	return nil
}

// Read returns the payload of the record at ref, read into buf's storage
// when it fits, and the buffer to pass to the next read (buf, or a larger
// one). The payload is valid until the next read into that buffer.
func (l *Log) Read(ref uint64, buf []byte) (payload, next []byte, err error) {
	dst := buf
	off := int64(ref)
	if off < int64(len(logMagic)) || off >= l.Size() {
		return nil, buf, fmt.Errorf("lake: local state log %s: bad record reference %d", l.path, ref)
	}
	if off >= l.flushed { // still buffered
		b := l.buf[off-l.flushed:]
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, buf, fmt.Errorf("lake: local state log %s: corrupt record at %d", l.path, ref)
		}
		dst = append(dst[:0], b[k:k+int(n)]...)
		return dst, dst[:0], nil
	}
	if cap(dst) < readAhead {
		dst = make([]byte, readAhead)
	}
	dst = dst[:cap(dst)]
	got, err := l.readAt(dst, off)
	if err != nil {
		return nil, dst[:0], err
	}
	n, k := binary.Uvarint(dst[:got])
	if k <= 0 {
		return nil, dst[:0], fmt.Errorf("lake: local state log %s: corrupt record at %d", l.path, ref)
	}
	end := k + int(n)
	if end <= got {
		return dst[k:end], dst[:0], nil
	}
	if end > cap(dst) {
		grown := make([]byte, end)
		copy(grown, dst[:got])
		dst = grown
	}
	dst = dst[:end]
	if _, err := l.readAt(dst[got:], off+int64(got)); err != nil {
		return nil, dst[:0], err
	}
	return dst[k:end], dst[:0], nil
}

// readAt reads into b from off, spanning the file and the buffer; it
// returns how many bytes it read (fewer than len(b) only at the end).
func (l *Log) readAt(b []byte, off int64) (int, error) {
	n := 0
	if off < l.flushed {
		want := min(int64(len(b)), l.flushed-off)
		m, err := l.f.ReadAt(b[:want], off)
		n += m
		if err != nil && err != io.EOF {
			return n, fmt.Errorf("lake: read local state log %s: %w", l.path, err)
		}
		if int64(m) < want {
			return n, fmt.Errorf("lake: local state log %s is shorter than recorded", l.path)
		}
		off += int64(m)
	}
	if n < len(b) && off >= l.flushed {
		n += copy(b[n:], l.buf[off-l.flushed:])
	}
	return n, nil
}

// Path is the log file's path.
func (l *Log) Path() string { return l.path }

// Flushed returns how many bytes of the log are in the file, and a reader
// of those bytes.
func (l *Log) Flushed() (int64, *io.SectionReader) {
	return l.flushed, io.NewSectionReader(l.f, 0, l.flushed)
}

// Load replaces the log's content with b, a whole log (its magic first,
// as a sidecar holds it): records keep their references.
func (l *Log) Load(b []byte) error {
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("lake: write local state log %s: %w", l.path, err)
	}
	l.buf, l.flushed = l.buf[:0], int64(len(b))
	return nil
}

// CloseFile closes the log's file and keeps the log, whose next read or
// write of the file then fails: tests break a log so.
func (l *Log) CloseFile() error { return l.f.Close() }

// Close closes and removes the file.
func (l *Log) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	os.Remove(l.path)
	l.f = nil
	return err
}
