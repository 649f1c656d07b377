// Package plots turns servesim's results into figures: predicted and measured benchmark
// matrices (matrix.Matrix, matrix.Comparison) and step-time explanations (llmbench.Explanation)
// become gonum/plot plots, written as 300 dpi PNG or SVG. It only draws: there is no
// simulation here, and every function is a pure function of its inputs.
//
// Each figure is built in two stages, kept apart so that what is drawn can be tested without
// pixels:
//
//  1. data: a chart value (LineChart, ParityChart, StatusMap, StepTerms) holds exactly what the
//     figure shows: series, points, labels, axis ranges, titles. WriteData prints it as text; the
//     package's golden tests compare that text.
//  2. drawing: the chart's Figure method turns the data into *plot.Plot panels and a legend, laid
//     out by Figure.Draw with the legend outside the data area, on the right.
//
// Reading order: chart.go (Chart, Input, Charts: the figure set), colors.go (one colour per
// context in every figure), linechart.go (decode and prefill curves), parity.go, statusmap.go,
// terms.go (stacked step-time bars), figure.go (layout, legend, ticks, PNG/SVG writers),
// labels.go (point labels that avoid each other).
//
// The figures:
//
//   - decode-total-toks, decode-per-request-toks, decode-ttft: a decode metric against
//     concurrency (log2 axis), one line per context for the prediction and markers of the same
//     colour for the measurement; Over-capacity cells are absent, queued cells marked.
//   - prefill-toks, prefill-ttft: the prefill rows against context (log axis).
//   - parity-<metric>: predicted against measured on log-log axes with y = x and the ±10 % and
//     ±25 % bands; points outside ±25 % are labelled with their cell; MAPE in the title.
//   - status-map: the context × concurrency grid, predicted status as the cell colour, measured
//     status as a symbol, mismatches outlined.
//   - step-terms: for explained cells, stacked bars of the decode step and the prefill chunk
//     split into the cost model's terms (cost.Term).
//
// Determinism: the same inputs give the same chart data and byte-identical SVG and PNG output.
package plots
