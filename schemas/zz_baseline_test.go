package schemas

import (
	"testing"

	"github.com/valyala/fastjson"
)

func BenchmarkZZFastjsonParseOnly(b *testing.B) {
	var p fastjson.Parser
	v := []byte(benchPGUpdate)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.ParseBytes(v); err != nil {
			b.Fatal(err)
		}
	}
}
func BenchmarkZZValidateOnly(b *testing.B) {
	v := []byte(benchPGUpdate)
	for b.Loop() {
		if _, err := skipValue(v, 0, 1); err != nil {
			b.Fatal(err)
		}
	}
}
