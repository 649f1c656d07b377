// Package matrix holds the benchmark matrix as data: the cells the llm-inference-bench protocol
// produces (prefill rows and decode cells), parsers for the formats measured runs come in (the
// benchmark's published text page, servesim's CSV, JSON), writers, and the comparison of a
// predicted matrix against a measured one.
//
// Reading order: matrix.go (Matrix, Info, Cell, Key, Phase, Status), validate.go (invariants), parse_text.go (the published
// page), numbers.go (the page's numbers: "12K", "8,174.0", "682 ms", "—"), context.go (context
// labels to tokens), csv.go, json.go, load.go (format sniffing), compare.go (errors and status
// matches), render.go and render_compare.go (tables).
//
// Absent values: float fields are NaN and integer fields -1 where the benchmark prints "—". CSV
// writes them blank, JSON as null; non-finite floats are written as absent too.
//
// Formats:
//   - ParseText reads the published page as it is; its "All measurements" table is authoritative
//     and the lossy Prefill section and decode matrix above it are skipped. Errors read
//     "name:LINE:column: found: want ...".
//   - CSV (WriteCSV, ParseCSV) has the columns of CSVHeader, one row per prefill cell then per
//     decode cell; tok/s and ms are written with 1 decimal, avg_active and measured_s with 2.
//   - JSON (WriteJSON, ParseJSON) is the Matrix with its Info, indented, nulls for absent values.
//   - Load and LoadBytes choose by content: "{" is JSON, "phase," is CSV, anything else the page.
//
// Context tokens (LabelTokens): a label is KiB of tokens, "8K" = 8,192. The benchmark trims a
// context to room = max_model_len - max_output - 64 (decode) or max_model_len - 1 - 64
// (prefill-only rows) and labels it by what it became, so with --max-model-len 1,048,576 and
// max output 4,096 the "1019K" rows are 1,044,416 tokens and the prefill-only "1024K" row is
// 1,048,511.
//
// Comparison (Compare): cells are matched by key (prefill rows by context). APE = |pred - meas| /
// meas * 100, per metric, on cells where both statuses ran (Valid or Requests queued); MAPE is
// their mean, MdAPE their median (the mean of the middle two for an even count). Statuses are
// counted over the decode cells present in both matrices.
//
// Source: the page format, the context labels and trimming, the statuses and the Over-capacity
// rule are llm-inference-bench's (local-inference-lab/llm-inference-bench, llm_decode_bench.py);
// package llmbench documents how the cells are measured.
//
// Everything here is pure and deterministic: the same matrices give byte-identical output. There
// is no simulation in this package.
package matrix
