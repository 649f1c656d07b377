//go:build race

package calibration

// raceEnabled skips the full seed refit under the race detector, where it would take minutes; the
// plain `go test ./...` run keeps it.
const raceEnabled = true
