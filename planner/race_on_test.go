//go:build race

package planner

// raceEnabled keeps one of the fast search's two sweeps under the race detector (the same worker
// pool runs both); the plain `go test ./...` run keeps both.
const raceEnabled = true
