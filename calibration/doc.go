// Package calibration fits the named parameters of the memory and step-time model (package model/param)
// to a measured benchmark matrix, cross-validates the fit, and estimates uncertainties.
//
// Shape (gonum optimize style): Fit(problem, settings) (*Result, error); zero settings mean
// defaults; the optimiser and its seeded starts are explicit. Candidate simulations run on worker
// goroutines; each simulation is single-threaded and deterministic, so a fit is reproducible.
package calibration
