//go:build race

package main

// raceEnabled skips the whole-corpus run and the written-scenario round trip under the race
// detector, where they would take minutes; the run without it checks both.
const raceEnabled = true
