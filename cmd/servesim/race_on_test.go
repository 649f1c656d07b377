//go:build race

package main

// raceEnabled skips the whole-corpus run under the race detector, where it would take minutes;
// the run without it checks the page.
const raceEnabled = true
