package vllmbench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/workload"
)

// Class groups the metrics of a comparison for the fit's weights.
type Class string

const (
	ClassCount      Class = "count"
	ClassDuration   Class = "duration"
	ClassThroughput Class = "throughput"
	ClassGoodput    Class = "goodput"
	ClassTTFT       Class = "ttft"
	ClassTPOT       Class = "tpot"
	ClassITL        Class = "itl"
	ClassE2E        Class = "e2e"
)

// Row is one metric, predicted and measured. NaN: not available.
type Row struct {
	// Key is the result file's field (output_throughput, median_ttft_ms, p99_itl_ms, ...).
	Key       string  `json:"key"`
	Label     string  `json:"label"`
	Class     Class   `json:"class"`
	Predicted float64 `json:"predicted"`
	Measured  float64 `json:"measured"`
	// Fit is the metric's share of its class's weight when parameters are fitted to the file
	// (0: shown, not fitted).
	Fit float64 `json:"-"`
}

// ErrPct is (predicted - measured) / measured in percent, NaN when either is missing or the
// measurement is 0.
func (r Row) ErrPct() float64 {
	if math.IsNaN(r.Predicted) || math.IsNaN(r.Measured) || r.Measured == 0 {
		return math.NaN()
	}
	return 100 * (r.Predicted - r.Measured) / r.Measured
}

// MarshalJSON writes NaN as null and adds the error.
func (r Row) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Key       string   `json:"key"`
		Label     string   `json:"label"`
		Class     Class    `json:"class"`
		Predicted *float64 `json:"predicted"`
		Measured  *float64 `json:"measured"`
		ErrPct    *float64 `json:"error_pct"`
	}{r.Key, r.Label, r.Class, finite(r.Predicted), finite(r.Measured), finite(r.ErrPct())})
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Comparison is a simulated run against a result file.
type Comparison struct {
	File string `json:"file"`
	Rows []Row  `json:"rows"`
}

// Compare puts a simulated workload's metrics beside a result file's. The rows depend only on
// what the file has (a metric the file lacks is left out; one the simulation lacks is NaN), so
// two comparisons with one file line up row by row. The metrics are defined as vLLM defines them
// (vllm/benchmarks/serve.py, calculate_metrics), which is how workload.Metrics measures them:
// TTFT from the send to the first token, TPOT = (E2EL - TTFT) / (output - 1) over requests with
// more than one output token, ITL every gap between streamed chunks, E2EL from the send to the
// last token, throughputs per duration. Simulated ITL percentiles come from a histogram with
// buckets under 1 % wide.
func Compare(pred *workload.Metrics, meas *Result) *Comparison {
	c := &Comparison{File: meas.Name}
	add := func(key, label string, cl Class, p, m, fit float64) {
		if math.IsNaN(m) {
			return
		}
		c.Rows = append(c.Rows, Row{Key: key, Label: label, Class: cl, Predicted: p, Measured: m, Fit: fit})
	}
	nan := math.NaN()
	add("completed", "completed requests", ClassCount, float64(pred.Completed), float64(meas.Completed), 0)
	if meas.Failed >= 0 {
		add("failed", "failed requests", ClassCount, float64(pred.Rejected), float64(meas.Failed), 0)
	}
	add("total_input_tokens", "input tokens", ClassCount, float64(pred.InputTokens), float64(meas.TotalInputTokens), 0)
	add("total_output_tokens", "output tokens", ClassCount, float64(pred.OutputTokens), float64(meas.TotalOutputTokens), 0)
	add("duration", "duration (s)", ClassDuration, pred.DurationS, meas.DurationS, 0)
	add("request_throughput", "request throughput (req/s)", ClassThroughput, pred.RequestsPerS, meas.RequestThroughput, 0)
	good := nan
	if pred.Goodput != nil {
		good = pred.Goodput.RequestsPerS
	}
	add("request_goodput", "request goodput (req/s)", ClassGoodput, good, meas.RequestGoodput, 0)
	add("output_throughput", "output throughput (tok/s)", ClassThroughput, pred.OutputTokS, meas.OutputThroughput, 1)
	add("total_token_throughput", "total token throughput (tok/s)", ClassThroughput, pred.TotalTokS, meas.TotalTokenThroughput, 0)
	for _, m := range []struct {
		key, label string
		cl         Class
		d          workload.Dist
		l          *Latency
		fitMean    float64
		fitMedian  float64
	}{
		{"ttft", "TTFT", ClassTTFT, pred.TTFT, &meas.TTFT, 0.5, 0.5},
		{"tpot", "TPOT", ClassTPOT, pred.TPOT, &meas.TPOT, 0.5, 0.5},
		{"itl", "ITL", ClassITL, pred.ITL, &meas.ITL, 1, 0},
		{"e2el", "E2EL", ClassE2E, pred.E2E, &meas.E2EL, 0, 0},
	} {
		if !m.l.Present() {
			continue
		}
		d := m.d
		at := func(v float64) float64 {
			if d.N == 0 {
				return nan
			}
			return v
		}
		add("mean_"+m.key+"_ms", m.label+" mean (ms)", m.cl, at(d.Mean), m.l.Mean, m.fitMean)
		add("median_"+m.key+"_ms", m.label+" median (ms)", m.cl, at(d.P50), m.l.Median, m.fitMedian)
		for _, q := range m.l.Percentiles {
			p := nan
			switch q.P {
			case 50:
				p = d.P50
			case 90:
				p = d.P90
			case 99:
				p = d.P99
			case 100:
				p = d.Max
			}
			add("p"+strconv.FormatFloat(q.P, 'f', -1, 64)+"_"+m.key+"_ms", fmt.Sprintf("%s p%s (ms)", m.label, strconv.FormatFloat(q.P, 'f', -1, 64)), m.cl, at(p), q.MS, 0)
		}
	}
	return c
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func count(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", v)
}

// WriteTable prints the comparison as aligned columns: metric, predicted, measured, error.
func (c *Comparison) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "Predicted vs measured (%s)\n", c.File)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tpredicted\tmeasured\terror\t")
	for _, r := range c.Rows {
		f := num
		if r.Class == ClassCount {
			f = count
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", r.Label, f(r.Predicted), f(r.Measured), pct(r.ErrPct()))
	}
	return tw.Flush()
}

// WriteCSV writes key,predicted,measured,error_pct rows.
func (c *Comparison) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"key", "class", "predicted", "measured", "error_pct"})
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 10, 64)
	}
	for _, r := range c.Rows {
		cw.Write([]string{r.Key, string(r.Class), f(r.Predicted), f(r.Measured), f(r.ErrPct())})
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the simulated metrics and the comparison as one JSON object.
func WriteJSON(w io.Writer, pred *workload.Metrics, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Predicted  *workload.Metrics `json:"predicted"`
		Comparison *Comparison       `json:"comparison"`
	}{pred, c})
}

// Summary is a one-line description of the file's run.
func (r *Result) Summary() string {
	var parts []string
	if r.ModelID != "" {
		parts = append(parts, r.ModelID)
	}
	if r.hasNumPrompts {
		parts = append(parts, fmt.Sprintf("%d prompts", r.NumPrompts))
	}
	if r.hasRate {
		rate := "inf"
		if !math.IsInf(r.RequestRate, 1) {
			rate = fmt.Sprintf("%g req/s", r.RequestRate)
		}
		parts = append(parts, "rate "+rate)
	}
	if r.MaxConcurrency > 0 {
		parts = append(parts, fmt.Sprintf("max concurrency %d", r.MaxConcurrency))
	}
	parts = append(parts, fmt.Sprintf("%d completed in %.1f s", r.Completed, r.DurationS))
	if r.hasDetailed {
		parts = append(parts, "per-request detail")
	}
	return strings.Join(parts, ", ")
}

// Dists are a result file's per-request latency distributions in ms, from its --save-detailed
// arrays (ok false without them): TTFT per request, TPOT per request ((latency - TTFT) /
// (output - 1), with latency - TTFT the sum of its inter-token gaps, as vLLM's client computes
// it), every inter-token gap (ITL), and end to end (TTFT + the gaps). Failed requests are left out.
func (r *Result) Dists() (ttft, tpot, itl, e2e workload.Dist, ok bool) {
	if !r.hasDetailed || len(r.TTFTsS) == 0 {
		return ttft, tpot, itl, e2e, false
	}
	var a, b, c, d []float64
	for i, t := range r.TTFTsS {
		if i < len(r.Errors) && r.Errors[i] != "" {
			continue
		}
		a = append(a, 1000*t)
		var sum float64
		var gaps []float64
		if i < len(r.ITLsS) {
			gaps = r.ITLsS[i]
		}
		for _, g := range gaps {
			sum += g
			c = append(c, 1000*g)
		}
		d = append(d, 1000*(t+sum))
		out := len(gaps) + 1
		if i < len(r.OutputLens) && r.OutputLens[i] > 0 {
			out = r.OutputLens[i]
		}
		if out > 1 {
			b = append(b, 1000*sum/float64(out-1))
		}
	}
	return workload.DistOf(a), workload.DistOf(b), workload.DistOf(c), workload.DistOf(d), len(a) > 0
}
