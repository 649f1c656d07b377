// Package report writes one self-contained HTML page about a scenario's predictions: the
// scenario (hardware, model, engine flags, protocol, where the parameters come from), the
// capacity breakdown, the benchmark matrix as tables (predicted, measured and error, coloured by
// status and by error size), every figure of package plots as inline SVG, and, when a fit report
// is given, the fitted parameters with their uncertainties and the cross-validation errors.
//
// The page needs nothing but itself: CSS is inline, figures are inline SVG, there is no
// JavaScript and no link to another file or host. It is deterministic: the same Input gives the
// same bytes (there is no timestamp).
//
// Like plots, this package only presents: the caller simulates (llmbench.RunMatrix, llmbench.Explain,
// llmbench.WriteCapacity) and passes the results in Input.
//
// Reading order: report.go (Input, Write, the sections), tables.go (matrix tables), fit.go
// (the fit report: ReadFit and its tables), page.html.tmpl (the page).
package report
