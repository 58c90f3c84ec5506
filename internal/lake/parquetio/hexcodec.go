package parquetio

import "encoding/binary"

// Hex text of the write path: every `_seq`, `_valid_to_seq` and `_key`
// value the three tables store is lowercase hex of raw bytes (about
// 180 MB of digits per million changes with history), and every row hash
// the local state records is decoded from it. encoding/hex works a byte
// at a time; these work on four bytes at a time in a 64-bit word (SWAR)
// and give exactly its text (docs/design.md, "Write path").

// EncodeHex writes the lowercase hex digits of src to dst, which must
// hold 2·len(src) bytes: the same bytes as hex.Encode(dst, src).
func EncodeHex(dst []byte, src string) {
	_ = dst[:2*len(src)] // one bounds check for the whole output
	i := 0
	for ; i+4 <= len(src); i += 4 {
		binary.BigEndian.PutUint64(dst[2*i:], hexWord(uint64(src[i])<<24|uint64(src[i+1])<<16|uint64(src[i+2])<<8|uint64(src[i+3])))
	}
	for ; i < len(src); i++ {
		dst[2*i], dst[2*i+1] = hexDigits[src[i]>>4], hexDigits[src[i]&0x0f]
	}
}

const hexDigits = "0123456789abcdef"

// hexWord returns the eight ASCII hex digits of the four bytes in the low
// half of x, the first byte's high nibble in the word's highest byte.
func hexWord(x uint64) uint64 {
	// spread the four bytes to 16-bit lanes, then each lane's two nibbles
	// to its two bytes: lane = high nibble << 8 | low nibble
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x<<4 | x) & 0x0f0f0f0f0f0f0f0f
	// '0'+n for n < 10, 'a'+n-10 = '0'+n+39 above: (n+6)>>4 is 1 exactly
	// when n >= 10
	above9 := ((x + 0x0606060606060606) >> 4) & 0x0101010101010101
	return x + 0x3030303030303030 + above9*39
}

// DecodeLowerHex decodes the lowercase hex text s into dst, which must
// hold len(s)/2 bytes; it reports false (dst then undefined) when len(s)
// is odd or s holds anything but 0-9 and a-f, the digits EncodeHex and
// hex.EncodeToString write, so that encoding dst again gives s back.
func DecodeLowerHex(dst []byte, s string) bool {
	if len(s)%2 != 0 || len(dst) < len(s)/2 {
		return false
	}
	for i := 0; i < len(s); i += 2 {
		hi, lo := hexValue[s[i]], hexValue[s[i+1]]
		if hi|lo > 0x0f {
			return false
		}
		dst[i/2] = hi<<4 | lo
	}
	return true
}

// hexValue maps the lowercase hex digits to their values and every other
// byte to 0xff.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < 16; i++ {
		t[hexDigits[i]] = byte(i)
	}
	return t
}()
