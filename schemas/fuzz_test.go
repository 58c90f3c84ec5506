package schemas

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// FuzzDecode asserts that Decode never panics (a recovered panic shows as
// an "internal error" reason) and that every error is a *DecodeError; on
// success the result is consistent.
func FuzzDecode(f *testing.F) {
	dir := filepath.Join("..", "testdata", "debezium")
	if _, err := os.Stat(dir); err == nil {
		files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
		for _, file := range files {
			if strings.HasSuffix(file, ".md") {
				continue
			}
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if vals, err := SplitValues(data); err == nil {
				for _, v := range vals {
					f.Add(v, []byte(nil))
				}
			}
			for _, line := range strings.Split(string(data), "\n") {
				if k, v, ok := strings.Cut(line, "^"); ok {
					f.Add([]byte(v), []byte(k))
				}
			}
		}
	}
	f.Add([]byte(pgUpdate), []byte(`{"id":1}`))
	f.Add([]byte(myCreate), []byte(`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}]},"payload":{"id":1}}`))
	f.Add([]byte(envelopeRecord(allTypeFields, "null", allTypeAfter, "c")), []byte(nil))
	f.Add([]byte(strings.Replace(pgUpdate, `"op":"u"`, `"op":"d"`, 1)), []byte(`{"id":1}`))
	f.Add([]byte(`{"schema":null,"payload":{"op":"t","source":{"connector":"postgresql","lsn":1,"ts_ms":1}}}`), []byte(nil))
	f.Add([]byte(ssCreate), []byte(`{"id":1005}`))
	f.Add([]byte(oraCreate), []byte(nil))
	f.Add([]byte(envelopeRecord(moreTypeFields, "null", `{"id":1,"zt":"23:30:00.25-01:00","vsd":{"scale":3,"value":"/gw="},"ints":[1,null],"decs":["AJY="],"geog":{"wkb":"AQ==","srid":1}}`, "c")), []byte(nil))
	f.Add([]byte(`{"id":1,"v":"a","__op":"d","__source_commit_lsn":"0000002b:00000588:0003","__source_change_lsn":"0000002b:00000580:0002","__source_event_serial_no":1,"__deleted":"true"}`), []byte(`{"id":1}`))

	seed := []byte(envelopeRecord(allTypeFields, "null", allTypeAfter, "c"))
	f.Fuzz(func(t *testing.T, value, key []byte) {
		rec := Record{Topic: "fuzz", Partition: 3, Offset: 77, Key: key, Value: value}
		d1 := NewDecoder(DecoderOptions{KeyColumns: []string{"id"}})
		fuzzCheck(t, d1, rec)
		fuzzCheck(t, d1, rec) // cached schema / layout paths
		d2 := NewDecoder(DecoderOptions{Columns: []cdc.Column{{Name: "id", Type: cdc.TypeInt}, {Name: "weight", Type: cdc.DecimalType(10, 3)}}})
		fuzzCheck(t, d2, Record{Value: seed})
		fuzzCheck(t, d2, rec)
		if _, err := DecodeImage(value, nil); err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatal(err)
		}
		_, _ = SplitValues(value)
	})
}
