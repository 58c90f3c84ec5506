package parquetio

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestEncodeHexMatchesEncodingHex: EncodeHex gives exactly
// hex.EncodeToString's text for every length 0-40 and random bytes
// (all 256 byte values appear), and DecodeLowerHex gives the bytes back.
func TestEncodeHexMatchesEncodingHex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 40; n++ {
		for range 200 {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(r.IntN(256))
			}
			want := hex.EncodeToString(src)
			dst := make([]byte, 2*n)
			EncodeHex(dst, string(src))
			if string(dst) != want {
				t.Fatalf("EncodeHex(%x) = %s, want %s", src, dst, want)
			}
			back := make([]byte, n)
			if !DecodeLowerHex(back, want) || !bytes.Equal(back, src) {
				t.Fatalf("DecodeLowerHex(%s) = %x, want %x", want, back, src)
			}
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	dst := make([]byte, 512)
	EncodeHex(dst, string(all))
	if want := hex.EncodeToString(all); string(dst) != want {
		t.Fatalf("EncodeHex(0..255) = %s, want %s", dst, want)
	}
}

// TestDecodeLowerHexRejects: only even-length text of the digits 0-9 and
// a-f decodes (upper case does not: encoding it again would not give the
// text back).
func TestDecodeLowerHexRejects(t *testing.T) {
	dst := make([]byte, 16)
	for _, s := range []string{"0", "abc", "0A", "FF", "0g", "zz", " 1", "1\x00", "-1"} {
		if DecodeLowerHex(dst, s) {
			t.Errorf("DecodeLowerHex(%q) = true, want false", s)
		}
	}
	if !DecodeLowerHex(dst, "") {
		t.Errorf("DecodeLowerHex(\"\") = false, want true")
	}
	if !DecodeLowerHex(dst[:2], "0aff") || dst[0] != 0x0a || dst[1] != 0xff {
		t.Errorf("DecodeLowerHex(0aff) = %x", dst[:2])
	}
	if DecodeLowerHex(dst[:1], "0aff") {
		t.Errorf("DecodeLowerHex into a short buffer = true, want false")
	}
}

func BenchmarkEncodeHex(b *testing.B) {
	src := string(bytes.Repeat([]byte{0x12, 0xab, 0xff, 0x00, 0x7e, 0x91}, 4)) // a 24-byte position
	dst := make([]byte, 2*len(src))
	b.SetBytes(int64(len(src)))
	b.Run("EncodeHex", func(b *testing.B) {
		for b.Loop() {
			EncodeHex(dst, src)
		}
	})
	b.Run("encoding/hex", func(b *testing.B) {
		for b.Loop() {
			hex.Encode(dst, []byte(src))
		}
	})
}
