// Package buildinfo says which build of lakemirror is running, for
// `worker --version`, `starter --version`, the worker's Temporal identity
// and `starter doctor`: the module version and the VCS revision that
// runtime/debug.ReadBuildInfo records, and the Go version.
//
// Version, set at link time, overrides the module version (a build from a
// checkout has none: "(devel)"):
//
//	go build -ldflags "-X github.com/lakemirror/lakemirror/internal/buildinfo.Version=v1.4.0" ./worker ./starter
//
// The revision is recorded by `go build` in a git checkout unless VCS
// stamping is off (-buildvcs=false, as CI sets it, or `go run`).
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version overrides the module version when set (-ldflags "-X ...").
var Version = ""

// Info describes a build.
type Info struct {
	Version   string `json:"version"`            // Version, else the main module's version ("(devel)" from a checkout)
	Revision  string `json:"revision,omitempty"` // VCS revision (vcs.revision); "" when not stamped
	Modified  bool   `json:"modified,omitempty"` // the working tree had uncommitted changes (vcs.modified)
	Time      string `json:"time,omitempty"`     // commit time of Revision, RFC 3339 (vcs.time)
	GoVersion string `json:"go_version"`         // the Go release that built the binary, e.g. go1.26.8
}

// Get returns the running binary's build.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi, Version)
}

// fromBuildInfo builds Info from bi (nil: no build information) with
// override as the version when not empty.
func fromBuildInfo(bi *debug.BuildInfo, override string) Info {
	info := Info{Version: "(devel)", GoVersion: runtime.Version()}
	if bi != nil {
		if bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			case "vcs.time":
				info.Time = s.Value
			}
		}
	}
	if override != "" {
		info.Version = override
	}
	return info
}

// String is the build for people: "v1.4.0 (revision 7593f21e0c1a,
// modified, go1.26.8)"; the revision is shortened to 12 digits and left
// out when unknown: "(devel) (go1.26.8)".
func (i Info) String() string {
	var parts []string
	if i.Revision != "" {
		parts = append(parts, "revision "+short(i.Revision))
		if i.Modified {
			parts = append(parts, "modified")
		}
	}
	parts = append(parts, i.GoVersion)
	return i.Version + " (" + strings.Join(parts, ", ") + ")"
}

// Short is the build as one token without spaces, for worker identities:
// the version, "+<12-digit revision>" when known and "-dirty" when
// modified, e.g. "v1.4.0+7593f21e0c1a-dirty" or "(devel)".
func (i Info) Short() string {
	s := i.Version
	if i.Revision != "" {
		s += "+" + short(i.Revision)
		if i.Modified {
			s += "-dirty"
		}
	}
	return strings.ReplaceAll(s, " ", "_")
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
