// Package noglobals holds the test that keeps mutable package-level state out of servesim's
// library packages (every package but cmd/...): see TestNoPackageLevelVars. It has no code.
package noglobals
