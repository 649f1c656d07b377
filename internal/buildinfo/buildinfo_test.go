package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install with a tag", debug.BuildInfo{Main: debug.Module{Version: "v0.10.1"}}, "v0.10.1"},
		{"no vcs stamp", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Release},
		{"clean checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "30a266c0123456789abcdef"}, {Key: "vcs.modified", Value: "false"}}}, Release + "+30a266c01234"},
		{"modified checkout", debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}}, Release + "+abc.dirty"},
	} {
		if got := fromBuildInfo(&c.bi); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
