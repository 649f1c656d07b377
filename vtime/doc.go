// Package vtime is the simulator's virtual clock unit.
//
// Simulated time is an integer count of nanoseconds since the start of a run: Time is a point,
// Duration a span, Never a time after every event (math.MaxInt64, about 292 years). Using an
// integer keeps the event order total and the output byte-identical across machines: there is no
// float rounding in comparisons and no wall clock anywhere in the core (kvcache, scheduler, sim,
// llmbench).
//
// The cost model computes step times in float seconds; FromSeconds converts such a value once,
// rounding to the nearest nanosecond, saturating at MaxDuration (2^63 ns, about 292 years) rather
// than wrapping, and panics on a negative, NaN or infinite input (a broken invariant in the
// caller, not bad input). Time.Add saturates at Never the same way. Seconds and Milliseconds convert back to floats for
// reporting only; String prints seconds with six decimals.
//
// The package has one file, vtime.go, and no state.
package vtime
