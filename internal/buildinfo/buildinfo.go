package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Release is the release line of this source tree, used when the build carries no module version.
const Release = "0.10.0-dev"

// Version is the version string printed by `servesim version` and recorded in JSON outputs and
// the report.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Release
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Release
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := Release + "+" + rev
	if dirty {
		v += ".dirty"
	}
	return strings.TrimSpace(v)
}
