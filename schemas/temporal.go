package schemas

import "errors"

// Text forms of temporal values: Debezium's io.debezium.time.ZonedTimestamp
// (ISO-8601 with an offset, written by DateTimeFormatter.ISO_OFFSET_DATE_TIME:
// "2020-07-17T18:00:22Z", "2020-07-17T18:00:22.123456+02:00") and, for
// declared columns only, plain ISO dates, times and local date-times.

var errBadTime = errors.New("not an ISO-8601 date/time")

// daysFromCivil returns days since 1970-01-01 of a proleptic Gregorian date
// (H. Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// digitsN reads exactly n ASCII digits at s[i:].
func digitsN(s []byte, i, n int) (int64, bool) {
	if i+n > len(s) {
		return 0, false
	}
	var v int64
	for _, c := range s[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// parseISODate reads [+-]YYYY[Y…]-MM-DD at s[0:] and returns days since
// the epoch and the index after it.
func parseISODate(s []byte) (days int64, i int, err error) {
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		i = 1
	}
	j := i
	var y int64
	for j < len(s) && s[j] >= '0' && s[j] <= '9' && j-i < 9 {
		y = y*10 + int64(s[j]-'0')
		j++
	}
	if j-i < 4 || j >= len(s) || s[j] != '-' {
		return 0, 0, errBadTime
	}
	if neg {
		y = -y
	}
	m, ok1 := digitsN(s, j+1, 2)
	if !ok1 || j+3 >= len(s) || s[j+3] != '-' {
		return 0, 0, errBadTime
	}
	d, ok2 := digitsN(s, j+4, 2)
	if !ok2 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
		return 0, 0, errBadTime
	}
	return daysFromCivil(y, m, d), j + 6, nil
}

// parseISOClock reads HH:MM[:SS[.f{1,9}]] at s[i:] and returns µs since
// midnight (fraction truncated below µs) and the index after it.
func parseISOClock(s []byte, i int) (micros int64, end int, err error) {
	h, ok1 := digitsN(s, i, 2)
	if !ok1 || i+2 >= len(s) || s[i+2] != ':' {
		return 0, 0, errBadTime
	}
	m, ok2 := digitsN(s, i+3, 2)
	if !ok2 || h > 23 || m > 59 {
		return 0, 0, errBadTime
	}
	i += 5
	var sec, frac int64
	if i < len(s) && s[i] == ':' {
		var ok bool
		if sec, ok = digitsN(s, i+1, 2); !ok || sec > 59 {
			return 0, 0, errBadTime
		}
		i += 3
		if i < len(s) && s[i] == '.' {
			i++
			n := 0
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				if n < 6 {
					frac = frac*10 + int64(s[i]-'0')
				} else if n >= 9 {
					return 0, 0, errBadTime
				}
				n++
				i++
			}
			if n == 0 {
				return 0, 0, errBadTime
			}
			for k := n; k < 6; k++ {
				frac *= 10
			}
		}
	}
	return ((h*60+m)*60+sec)*1_000_000 + frac, i, nil
}

// parseZonedTimestamp reads an ISO-8601 date-time with a "Z" or ±HH:MM
// offset into µs since the epoch (UTC).
func parseZonedTimestamp(s []byte) (int64, error) {
	days, i, err := parseISODate(s)
	if err != nil {
		return 0, err
	}
	if i >= len(s) || (s[i] != 'T' && s[i] != 't' && s[i] != ' ') {
		return 0, errBadTime
	}
	clock, i, err := parseISOClock(s, i+1)
	if err != nil {
		return 0, err
	}
	var off int64
	switch {
	case i < len(s) && (s[i] == 'Z' || s[i] == 'z'):
		i++
	case i < len(s) && (s[i] == '+' || s[i] == '-'):
		oh, ok1 := digitsN(s, i+1, 2)
		if !ok1 || i+3 >= len(s) || s[i+3] != ':' {
			return 0, errBadTime
		}
		om, ok2 := digitsN(s, i+4, 2)
		if !ok2 || oh > 18 || om > 59 {
			return 0, errBadTime
		}
		off = (oh*60 + om) * 60 * 1_000_000
		if s[i] == '-' {
			off = -off
		}
		i += 6
		if i+3 <= len(s) && s[i] == ':' { // seconds in the offset (+hh:mm:ss)
			os, ok := digitsN(s, i+1, 2)
			if !ok {
				return 0, errBadTime
			}
			if off < 0 {
				os = -os
			}
			off += os * 1_000_000
			i += 3
		}
	default:
		return 0, errBadTime
	}
	if i != len(s) {
		return 0, errBadTime
	}
	return days*86_400_000_000 + clock - off, nil
}

// parseLocalTimestamp reads an ISO-8601 date-time without offset ("T" or
// space between date and time) into µs since the epoch.
func parseLocalTimestamp(s []byte) (int64, error) {
	days, i, err := parseISODate(s)
	if err != nil {
		return 0, err
	}
	if i >= len(s) || (s[i] != 'T' && s[i] != ' ') {
		return 0, errBadTime
	}
	clock, i, err := parseISOClock(s, i+1)
	if err != nil || i != len(s) {
		return 0, errBadTime
	}
	return days*86_400_000_000 + clock, nil
}

// parseDateText reads YYYY-MM-DD into days since the epoch.
func parseDateText(s []byte) (int64, error) {
	days, i, err := parseISODate(s)
	if err != nil || i != len(s) {
		return 0, errBadTime
	}
	return days, nil
}

// parseTimeText reads HH:MM[:SS[.ffffff]] into µs since midnight.
func parseTimeText(s []byte) (int64, error) {
	t, i, err := parseISOClock(s, 0)
	if err != nil || i != len(s) {
		return 0, errBadTime
	}
	return t, nil
}

// parseZonedTime reads io.debezium.time.ZonedTime, an ISO-8601 time with
// a "Z" or ±HH:MM[:SS] offset ("18:00:22.123456Z", "10:15:30+01:00",
// DateTimeFormatter.ISO_OFFSET_TIME), into µs since midnight UTC: the
// clock minus the offset, modulo 24 hours (Iceberg has no time with zone;
// the offset itself is not kept).
func parseZonedTime(s []byte) (int64, error) {
	clock, i, err := parseISOClock(s, 0)
	if err != nil {
		return 0, err
	}
	off, j, err := parseOffset(s, i)
	if err != nil || j != len(s) {
		return 0, errBadTime
	}
	const day = 86_400_000_000
	us := (clock - off) % day
	if us < 0 {
		us += day
	}
	return us, nil
}

// parseOffset reads "Z" or ±HH:MM[:SS] at s[i:] and returns the offset in
// µs and the index after it.
func parseOffset(s []byte, i int) (int64, int, error) {
	switch {
	case i < len(s) && (s[i] == 'Z' || s[i] == 'z'):
		return 0, i + 1, nil
	case i < len(s) && (s[i] == '+' || s[i] == '-'):
		oh, ok1 := digitsN(s, i+1, 2)
		if !ok1 || i+3 >= len(s) || s[i+3] != ':' {
			return 0, 0, errBadTime
		}
		om, ok2 := digitsN(s, i+4, 2)
		if !ok2 || oh > 18 || om > 59 {
			return 0, 0, errBadTime
		}
		off := (oh*60 + om) * 60 * 1_000_000
		j := i + 6
		if j+3 <= len(s) && s[j] == ':' {
			os, ok := digitsN(s, j+1, 2)
			if !ok || os > 59 {
				return 0, 0, errBadTime
			}
			off += os * 1_000_000
			j += 3
		}
		if s[i] == '-' {
			off = -off
		}
		return off, j, nil
	}
	return 0, 0, errBadTime
}
