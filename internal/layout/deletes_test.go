package layout

import (
	"errors"
	"testing"
)

func TestParseDeleteFormat(t *testing.T) {
	for in, want := range map[string]DeleteFormat{
		"": DeletePosition, "position": DeletePosition, " Position ": DeletePosition, "v2": DeletePosition,
		"dv": DeleteVector, "DV": DeleteVector, "deletion-vectors": DeleteVector, "v3": DeleteVector,
	} {
		if got, err := ParseDeleteFormat(in); err != nil || got != want {
			t.Errorf("ParseDeleteFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParseDeleteFormat("equality")
	if !errors.Is(err, ErrSyntax) || err.Error() != `layout: invalid field "equality": want a delete format, position (v2 position deletes) or dv (v3 deletion vectors)` {
		t.Errorf("ParseDeleteFormat(equality): %v", err)
	}
	if err := DeleteFormat("v4").Validate(); err == nil {
		t.Error("Validate(v4) = nil")
	}
	for f, want := range map[DeleteFormat]struct {
		version int
		text    string
	}{"": {2, "position"}, DeletePosition: {2, "position"}, DeleteVector: {3, "dv"}} {
		if f.FormatVersion() != want.version || f.String() != want.text || f.Validate() != nil {
			t.Errorf("%q: format version %d, text %q, valid %v", f, f.FormatVersion(), f.String(), f.Validate())
		}
	}
}
