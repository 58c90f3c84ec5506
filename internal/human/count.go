package human

import "strconv"

// Count renders n with the noun that fits it: "1 batch", "0 batches",
// "3 batches". plural is the noun's plural (English has no single rule:
// "batches", "keys", "entries").
func Count[N ~int | ~int32 | ~int64 | ~uint64](n N, singular, plural string) string {
	noun := plural
	if n == 1 {
		noun = singular
	}
	var s string
	if n < 0 {
		s = strconv.FormatInt(int64(n), 10)
	} else {
		s = strconv.FormatUint(uint64(n), 10)
	}
	return s + " " + noun
}
