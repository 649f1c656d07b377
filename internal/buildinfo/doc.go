// Package buildinfo says which servesim produced an output: the module version when the binary
// was built by `go install ...@version`, else the release line this source tree belongs to
// (Release) plus the VCS revision Go stamped into the binary (`go build` inside a git checkout,
// unless -buildvcs=false), marked dirty when the tree had changes.
//
// Version reads the binary's build information (runtime/debug.ReadBuildInfo), so it is the same
// for every run of one binary and outputs stay byte-identical between runs; JSON outputs and the
// HTML report carry it instead of a timestamp. The package has one file, buildinfo.go.
package buildinfo
