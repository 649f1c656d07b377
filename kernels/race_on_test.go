//go:build race

package kernels

// raceEnabled skips the refit of every Vidur profile under the race detector: it checks the prior
// table against the profiles, not concurrency, and takes half a minute there; the plain
// `go test ./...` run keeps it.
const raceEnabled = true
