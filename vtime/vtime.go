package vtime

import (
	"fmt"
	"math"
)

// Time is a point on the virtual clock, in nanoseconds since the start of the simulation.
type Time int64

// Duration is a span of virtual time, in nanoseconds.
type Duration int64

// Common durations.
const (
	Nanosecond  Duration = 1
	Microsecond Duration = 1000
	Millisecond Duration = 1000 * Microsecond
	Second      Duration = 1000 * Millisecond
)

// Never is a time later than any event a run can schedule.
const Never Time = math.MaxInt64

// MaxDuration is the longest span: a duration that does not fit in int64 nanoseconds (about 292
// years) saturates to it.
const MaxDuration Duration = math.MaxInt64

// Add returns t + d, saturating at Never: a time past the clock's range is never, not a wrapped
// negative time.
func (t Time) Add(d Duration) Time {
	if d > 0 && t > Never-Time(d) {
		return Never
	}
	return t + Time(d)
}

// Sub returns t - u.
func (t Time) Sub(u Time) Duration { return Duration(t - u) }

// Seconds returns t as float seconds, for reporting only.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// Seconds returns d as float seconds, for reporting only.
func (d Duration) Seconds() float64 { return float64(d) / 1e9 }

// Milliseconds returns d as float milliseconds, for reporting only.
func (d Duration) Milliseconds() float64 { return float64(d) / 1e6 }

// FromSeconds converts float seconds (a cost-model result) to a Duration, rounding to the nearest
// nanosecond; a span of 2^63 ns (about 292 years) or more saturates to MaxDuration instead of
// wrapping around to a negative count. Negative, NaN and infinite inputs are invariant violations
// in the caller and panic.
func FromSeconds(s float64) Duration {
	if s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		panic(fmt.Sprintf("vtime: invalid duration %v s", s))
	}
	ns := math.Round(s * 1e9)
	if ns >= float64(MaxDuration) { // float64(MaxInt64) is 2^63, itself out of range
		return MaxDuration
	}
	return Duration(ns)
}

func (t Time) String() string     { return fmt.Sprintf("%.6fs", t.Seconds()) }
func (d Duration) String() string { return fmt.Sprintf("%.6fs", d.Seconds()) }
