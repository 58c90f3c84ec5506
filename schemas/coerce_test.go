package schemas

import (
	"testing"

	"github.com/lakemirror/lakemirror/internal/cdc"
)

// Coerce is typing.Coerce with the package prefix on its errors (the rules
// themselves are tested in internal/cdc/typing).
func TestCoercePrefix(t *testing.T) {
	_, err := Coerce(cdc.Int(4294967295), cdc.TypeInt)
	if want := "schemas: cannot convert integer 4294967295 to int: out of int range"; err == nil || err.Error() != want {
		t.Errorf("Coerce(4294967295, int): %v, want %q", err, want)
	}
	if got, err := Coerce(cdc.Int(1), cdc.TypeDouble); err != nil || !got.Equal(cdc.Float(1)) {
		t.Errorf("Coerce(1, double) = %+v, %v", got, err)
	}
}
