// Package leakcheck holds the tests that keep the repository's text true and its own: no path of
// a development machine and no tracker reference in any tracked file (TestNoLeaks), and
// ARCHITECTURE.md's package map complete and in import order (TestArchitecturePackageMap). It
// has no code.
package leakcheck
