//go:build !race

package calibration

const raceEnabled = false
