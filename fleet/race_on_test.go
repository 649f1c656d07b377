//go:build race

package fleet

// raceEnabled skips the runs of hundreds of thousands of requests under the race detector, where
// they would take minutes; the tests of routing ahead run its workers under it.
const raceEnabled = true
