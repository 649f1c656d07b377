// Package matrix holds the benchmark matrix as data: the cells the llm-inference-bench protocol
// produces (prefill rows and decode cells), parsers for the formats measured runs come in (the
// benchmark's published text page, servesim's CSV, JSON), writers, and the comparison of a
// predicted matrix against a measured one.
//
// Reading order: matrix.go (types), parse_text.go (the published page), csv.go, json.go,
// compare.go (errors and status matches), render.go (tables).
//
// Absent values: float fields are NaN and integer fields -1 where the benchmark prints "—".
// Everything here is pure and deterministic; there is no simulation in this package.
package matrix
