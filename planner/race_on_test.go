//go:build race

package planner

// raceEnabled keeps, under the race detector, one of the fast search's two sweeps and the first of
// the shard merge's splits (in two, not also in five): the same worker pool runs them all; the
// plain `go test ./...` run keeps every one.
const raceEnabled = true
