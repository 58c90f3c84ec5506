package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/lakemirror/lakemirror", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "7593f21e0c1a5b6e0d4f3c2b1a09876543210fed"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}}}
	for _, c := range []struct {
		name          string
		bi            *debug.BuildInfo
		override      string
		want          Info
		str, shortStr string
	}{
		{"stamped", stamped, "", Info{Version: "v1.4.0", Revision: "7593f21e0c1a5b6e0d4f3c2b1a09876543210fed", Modified: true, Time: "2026-12-01T10:00:00Z", GoVersion: "go1.26.8"},
			"v1.4.0 (revision 7593f21e0c1a, modified, go1.26.8)", "v1.4.0+7593f21e0c1a-dirty"},
		{"ldflags override", stamped, "v2.0.0-rc1", Info{Version: "v2.0.0-rc1", Revision: "7593f21e0c1a5b6e0d4f3c2b1a09876543210fed", Modified: true, Time: "2026-12-01T10:00:00Z", GoVersion: "go1.26.8"},
			"v2.0.0-rc1 (revision 7593f21e0c1a, modified, go1.26.8)", "v2.0.0-rc1+7593f21e0c1a-dirty"},
		{"checkout without VCS stamping", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "",
			Info{Version: "(devel)", GoVersion: "go1.26.8"}, "(devel) (go1.26.8)", "(devel)"},
		{"clean revision", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}}, "",
			Info{Version: "(devel)", Revision: "abc123", GoVersion: "go1.26.8"}, "(devel) (revision abc123, go1.26.8)", "(devel)+abc123"},
		{"no build information", nil, "", Info{Version: "(devel)", GoVersion: runtime.Version()}, "(devel) (" + runtime.Version() + ")", "(devel)"},
	} {
		got := fromBuildInfo(c.bi, c.override)
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if s := got.String(); s != c.str {
			t.Errorf("%s: String() = %q, want %q", c.name, s, c.str)
		}
		if s := got.Short(); s != c.shortStr {
			t.Errorf("%s: Short() = %q, want %q", c.name, s, c.shortStr)
		}
	}
}

// The running test binary has build information: the Go version is the
// running one.
func TestGet(t *testing.T) {
	if got := Get(); got.GoVersion != runtime.Version() || got.Version == "" {
		t.Fatalf("Get() = %+v", got)
	}
}
