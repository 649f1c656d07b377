// Package leakcheck holds the test that keeps the repository speaking of itself only: no path of
// a development machine and no tracker reference in any tracked file (see TestNoLeaks). It has
// no code.
package leakcheck
