//go:build race

package fleet

// raceEnabled skips the runs of hundreds of thousands of requests under the race detector, where
// they would take minutes; the fleet is one goroutine, and the run without it checks them.
const raceEnabled = true
