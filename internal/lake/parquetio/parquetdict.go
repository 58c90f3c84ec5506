package parquetio

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
)

// Dictionary encoding of text columns, decided per file from the data.
// The Parquet writer hashes every value of a dictionary-encoded column
// and, once the dictionary outgrows its page limit, abandons it and
// re-encodes the column plainly: for free text (a note, an address) that
// is all cost. writerProps keeps dictionaries on for text by default
// (CDC text is often categorical: a status, a country); distinctTextProps
// turns them off for the text columns of one file whose sampled values
// are (almost) all distinct. The bar is high on purpose: a column of a
// few thousand distinct values repeated over 50,000 rows samples as
// 80-90 % distinct yet compresses four times smaller with its
// dictionary; only a column with at least 97 % distinct values in 4,096
// samples (tens of thousands of distinct values, beyond what a
// dictionary page holds) loses it.

const (
	// dictSample is how many values of a column are sampled, evenly
	// spaced over the file's rows.
	dictSample = 4096
	// dictDistinctPct is the share of distinct sampled values (percent)
	// above which a column is written without a dictionary.
	dictDistinctPct = 97
	// dictMinRows: smaller files keep the default (a dictionary of a few
	// rows costs nothing). Files of a few thousand rows are common: a
	// partitioned batch writes one file per partition (a 50,000-record
	// batch into bucket(16, key) gives mirror files of about 3,000 rows),
	// and a free-text column hashed into a dictionary there was a fifth
	// of the mirror's write; from 256 rows on, every row is sampled, which
	// decides as reliably as the sample of a large file.
	dictMinRows = 256
)

// distinctTextProps returns a writer property turning dictionary
// encoding off for each top-level string or binary column of rec in
// which more than dictDistinctPct % of the sampled non-null values
// (dictSample rows evenly spaced, or every row of a smaller file) are
// distinct. Files of fewer than dictMinRows rows get none.
func distinctTextProps(rec arrow.RecordBatch) []parquet.WriterProperty {
	n := int(rec.NumRows())
	if n < dictMinRows {
		return nil
	}
	var out []parquet.WriterProperty
	seen := make(map[string]struct{}, dictSample)
	for i, f := range rec.Schema().Fields() {
		var value func(int) string
		switch a := rec.Column(i).(type) {
		case *array.String:
			value = a.Value
		case *array.Binary:
			value = a.ValueString
		default:
			continue
		}
		col := rec.Column(i)
		clear(seen)
		sampled := 0
		samples := min(n, dictSample)
		for j := 0; j < samples; j++ {
			row := j * n / samples
			if col.IsNull(row) {
				continue
			}
			sampled++
			seen[value(row)] = struct{}{}
		}
		if sampled > 0 && 100*len(seen) > dictDistinctPct*sampled {
			out = append(out, parquet.WithDictionaryFor(f.Name, false))
		}
	}
	return out
}
