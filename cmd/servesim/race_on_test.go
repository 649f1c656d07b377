//go:build race

package main

// raceEnabled skips the whole-corpus run and the written-scenario round trip under the race
// detector, where they would take minutes, and runs the cross-validated fit once instead of
// twice; the run without it checks all three.
const raceEnabled = true
