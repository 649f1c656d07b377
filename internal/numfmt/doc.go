// Package numfmt formats numbers for people: thousands separators in tables, figures and reports.
//
// Commas inserts comma separators into the integer part of a number already formatted by strconv
// or fmt ("-12345.67" -> "-12,345.67"), so every table, plan, workload summary, figure label and
// the report group digits the same way as the benchmark's published page ("8,174.0"). It is a
// pure function; the package has one file, numfmt.go.
package numfmt
