package source

import (
	"fmt"
	"math/big"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Exact numeric conversions. A PostgreSQL numeric arrives as
// pgtype.Numeric (unscaled big integer Int and decimal exponent Exp: the
// value is Int × 10^Exp) and is never converted through a float.

var bigTen = big.NewInt(10)

// numericValue converts a numeric of column ci:
//
//   - numeric(p,s) (org.apache.kafka.connect.data.Decimal): the unscaled
//     value at scale s, cdc.BigDecimal; for p > 38 or s > p (a string
//     column, as the decoder types such a Decimal) the exact text at
//     scale s;
//   - numeric (io.debezium.data.VariableScaleDecimal): the exact text at
//     the value's minimal scale, as Debezium sends it (it strips trailing
//     zeros, with scale at least 0: 1.50 → "1.5", 100 → "100",
//     0.00 → "0").
//
// NaN and ±Infinity are errors: the precise decimal mode has no form for
// them (Debezium's connector fails on them too).
func numericValue(ci *ColumnInfo, n *pgtype.Numeric) (cdc.Value, error) {
	if !n.Valid {
		return cdc.Null(), nil
	}
	if n.NaN || n.InfinityModifier != pgtype.Finite || n.Int == nil {
		return cdc.Value{}, definition("numeric NaN or Infinity has no form in Debezium's precise decimal mode")
	}
	if ci.Logical == logicalVarDecimal {
		u, scale := minimalScale(n.Int, n.Exp)
		return cdc.String(cdc.BigDecimal(u.String(), int16(scale)).DecimalText()), nil
	}
	u, err := rescale(n.Int, n.Exp, ci.Scale)
	if err != nil {
		return cdc.Value{}, err
	}
	digits := u.String()
	if nd := len(digits) - boolInt(u.Sign() < 0); ci.Precision > 0 && nd > ci.Precision && u.Sign() != 0 {
		return cdc.Value{}, fmt.Errorf("numeric has %d digits, more than precision %d", nd, ci.Precision)
	}
	v := cdc.BigDecimal(digits, int16(ci.Scale))
	if ci.Type.Kind == cdc.KindString {
		return cdc.String(v.DecimalText()), nil
	}
	return v, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rescale returns the unscaled value of i × 10^exp at scale (i ×
// 10^(exp+scale)), or an error when that would drop non-zero digits.
func rescale(i *big.Int, exp int32, scale int) (*big.Int, error) {
	shift := int64(exp) + int64(scale)
	u := new(big.Int).Set(i)
	switch {
	case shift > 0:
		u.Mul(u, new(big.Int).Exp(bigTen, big.NewInt(shift), nil))
	case shift < 0:
		q, r := new(big.Int).QuoRem(u, new(big.Int).Exp(bigTen, big.NewInt(-shift), nil), new(big.Int))
		if r.Sign() != 0 {
			return nil, fmt.Errorf("numeric has more fraction digits than scale %d", scale)
		}
		u = q
	}
	return u, nil
}

// minimalScale returns i × 10^exp as an unscaled value and the smallest
// scale ≥ 0 that holds it exactly (Java's stripTrailingZeros, then scale
// 0 when negative).
func minimalScale(i *big.Int, exp int32) (*big.Int, int) {
	u := new(big.Int).Set(i)
	if u.Sign() == 0 {
		return u, 0
	}
	scale := -int64(exp)
	if scale <= 0 {
		u.Mul(u, new(big.Int).Exp(bigTen, big.NewInt(-scale), nil))
		return u, 0
	}
	q, r := new(big.Int), new(big.Int)
	for scale > 0 {
		q.QuoRem(u, bigTen, r)
		if r.Sign() != 0 {
			break
		}
		u.Set(q)
		scale--
	}
	return u, int(scale)
}

// parseDecimalText reads plain decimal text ("-12.340", "7", ".5" is not
// accepted) into its unscaled value and scale (fraction digits).
func parseDecimalText(s string) (*big.Int, int, error) {
	digits := make([]byte, 0, len(s))
	scale, seenPoint, n := 0, false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' && i == 0:
			digits = append(digits, c)
		case c == '.' && !seenPoint && n > 0:
			seenPoint = true
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			n++
			if seenPoint {
				scale++
			}
		default:
			return nil, 0, fmt.Errorf("%q is not a plain decimal number", s)
		}
	}
	if n == 0 || (seenPoint && scale == 0) {
		return nil, 0, fmt.Errorf("%q is not a plain decimal number", s)
	}
	u, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		return nil, 0, fmt.Errorf("%q is not a plain decimal number", s)
	}
	return u, scale, nil
}

// unscaledOf returns the unscaled value of a decimal cdc.Value.
func unscaledOf(v cdc.Value) (*big.Int, error) {
	u, ok := new(big.Int).SetString(v.UnscaledText(), 10)
	if !ok {
		return nil, fmt.Errorf("decimal with unscaled value %q", v.UnscaledText())
	}
	return u, nil
}

// twosComplement returns x as big-endian two's-complement bytes of
// minimal length (Java's BigInteger.toByteArray, the encoding of a Kafka
// Connect Decimal and of a VariableScaleDecimal's value): 0 → [0x00],
// 128 → [0x00 0x80], -1 → [0xff], -129 → [0xff 0x7f].
func twosComplement(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	m := new(big.Int).Neg(x)
	m.Sub(m, big.NewInt(1)) // -x-1 ≥ 0
	n := m.BitLen()/8 + 1
	y := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	y.Add(y, x) // 2^(8n) + x
	b := y.Bytes()
	for len(b) < n {
		b = append([]byte{0}, b...)
	}
	return b
}
