package vllmbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/workload"
)

// MaxResultBytes bounds a result file (256 MiB: --save-detailed files keep every inter-token gap
// and every generated text, about 60 MB for 10,000 requests of 500 tokens).
const MaxResultBytes = 256 << 20

// Largest counts a result file may give (requests and tokens per request): the workload's limits.
const (
	maxResultRequests = workload.MaxRequests
	maxResultTokens   = 1 << 24
)

// Percentile is one p<P>_<metric>_ms field (--metric-percentiles).
type Percentile struct {
	P  float64 // 99, 99.9, ...
	MS float64
}

// Latency is one metric's summary in a result file, in ms; NaN when absent (a metric left out of
// --percentile-metrics, or null).
type Latency struct {
	Mean, Median, Std float64
	Percentiles       []Percentile // sorted by P
}

// Present reports whether the file has the metric at all.
func (l *Latency) Present() bool {
	return !math.IsNaN(l.Mean) || !math.IsNaN(l.Median) || len(l.Percentiles) > 0
}

// At is the P percentile, if the file has it.
func (l *Latency) At(p float64) (float64, bool) {
	for _, q := range l.Percentiles {
		if q.P == p {
			return q.MS, true
		}
	}
	return math.NaN(), false
}

// Result is a `vllm bench serve --save-result` file (vllm/benchmarks/serve.py): the run's
// settings, counts, throughputs and latency summaries, and with --save-detailed the per-request
// lengths, TTFTs and inter-token gaps. Absent numbers are NaN (counts: -1).
type Result struct {
	Name string // the file, for messages

	Date, EndpointType, Backend, Label, ModelID, TokenizerID string
	NumPrompts                                               int
	// RequestRate is requests/s; +Inf for the string "inf".
	RequestRate    float64
	Burstiness     float64
	MaxConcurrency int // 0: null (no limit)
	DurationS      float64
	Completed      int
	Failed         int // -1: absent (older builds)

	TotalInputTokens, TotalOutputTokens    int64
	RequestThroughput                      float64
	RequestGoodput                         float64 // NaN: null (no --goodput)
	OutputThroughput, TotalTokenThroughput float64
	MaxOutputTokensPerS, MaxConcurrentReqs float64
	TTFT, TPOT, ITL, E2EL                  Latency
	InputLens, OutputLens                  []int       // --save-detailed
	TTFTsS                                 []float64   // --save-detailed, seconds
	ITLsS                                  [][]float64 // --save-detailed, seconds
	GeneratedTexts                         int         // how many (the texts are not kept)
	Errors                                 []string    // --save-detailed, "" for a success
	RampUp                                 bool        // ramp_up_strategy present
	Metadata                               []string    // other keys (--metadata pairs), key=value, sorted
	hasRate, hasBurstiness, hasNumPrompts  bool
	hasMaxConcurrency                      bool
	hasDetailed                            bool
}

// HasDetail reports whether the file has the per-request arrays (--save-detailed).
func (r *Result) HasDetail() bool { return r.hasDetailed }

// IsResult tells a vllm bench serve result file from a matrix file: a JSON object with a
// "request_throughput" key.
func IsResult(data []byte) bool {
	t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n")
	return bytes.HasPrefix(t, []byte("{")) && bytes.Contains(data, []byte(`"request_throughput"`))
}

// ReadResult reads a result file, refusing files larger than MaxResultBytes.
func ReadResult(path string) (*Result, error) {
	data, err := fsutil.ReadFile(path, MaxResultBytes)
	if err != nil {
		return nil, err
	}
	return ParseResult(data, path)
}

// sanitize replaces the bare NaN, Infinity and -Infinity that Python's json module writes (numpy
// statistics of an empty list) with null, outside strings. Lines are kept, so error line numbers
// are those of the file.
func sanitize(data []byte) []byte {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	var out bytes.Buffer
	out.Grow(len(data))
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			out.WriteByte(c)
			continue
		}
		if c == '"' {
			inStr = true
			out.WriteByte(c)
			continue
		}
		matched := false
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(data[i:], []byte(tok)) {
				out.WriteString("null")
				i += len(tok) - 1
				matched = true
				break
			}
		}
		if !matched {
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// lineOf is the line of a byte offset.
func lineOf(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

func clip(raw []byte) string {
	s := string(raw)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// ParseResult reads a result file's bytes. Every field of vLLM's layout is type-checked (an
// error names the field and what was expected); other keys (the --metadata pairs) are kept as
// Metadata. The fields a comparison needs (duration, completed, the token totals and the
// throughputs) must be present.
func ParseResult(data []byte, name string) (*Result, error) {
	if len(data) > MaxResultBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB: servesim refuses result files above that size", name, MaxResultBytes>>20)
	}
	clean := sanitize(bytes.TrimPrefix(data, []byte("\ufeff")))
	var top map[string]json.RawMessage
	if err := json.Unmarshal(clean, &top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s:%d: not JSON: %v", name, lineOf(clean, se.Offset), err)
		}
		return nil, fmt.Errorf("%s: want a JSON object (vllm bench serve --save-result): %v", name, err)
	}
	if top == nil {
		return nil, fmt.Errorf("%s: want a JSON object (vllm bench serve --save-result), got null", name)
	}
	r := &Result{Name: name, RequestRate: math.NaN(), Burstiness: math.NaN(), DurationS: math.NaN(), Failed: -1,
		RequestThroughput: math.NaN(), RequestGoodput: math.NaN(), OutputThroughput: math.NaN(), TotalTokenThroughput: math.NaN(),
		MaxOutputTokensPerS: math.NaN(), MaxConcurrentReqs: math.NaN()}
	for _, l := range []*Latency{&r.TTFT, &r.TPOT, &r.ITL, &r.E2EL} {
		l.Mean, l.Median, l.Std = math.NaN(), math.NaN(), math.NaN()
	}
	p := parser{name: name}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pctRe := regexp.MustCompile(`^p([0-9]+(?:\.[0-9]+)?)_(ttft|tpot|itl|e2el)_ms$`)
	statRe := regexp.MustCompile(`^(mean|median|std)_(ttft|tpot|itl|e2el)_ms$`)
	lat := map[string]*Latency{"ttft": &r.TTFT, "tpot": &r.TPOT, "itl": &r.ITL, "e2el": &r.E2EL}
	for _, k := range keys {
		v := top[k]
		switch k {
		case "date":
			r.Date = p.str(k, v)
		case "endpoint_type":
			r.EndpointType = p.str(k, v)
		case "backend":
			r.Backend = p.str(k, v)
		case "label":
			r.Label = p.str(k, v)
		case "model_id":
			r.ModelID = p.str(k, v)
		case "tokenizer_id":
			r.TokenizerID = p.str(k, v)
		case "num_prompts":
			r.NumPrompts = p.count(k, v, maxResultRequests)
			r.hasNumPrompts = true
		case "request_rate":
			var s string
			if json.Unmarshal(v, &s) == nil {
				if strings.ToLower(s) != "inf" {
					p.fail(k, v, `a number of requests/s or the string "inf"`)
				}
				r.RequestRate = math.Inf(1)
			} else {
				r.RequestRate = p.positive(k, v, `a number of requests/s or the string "inf"`)
			}
			r.hasRate = true
		case "burstiness":
			r.Burstiness = p.positive(k, v, "a positive gamma shape")
			r.hasBurstiness = true
		case "max_concurrency":
			if !isNull(v) {
				r.MaxConcurrency = p.count(k, v, maxResultRequests)
				if r.MaxConcurrency == 0 {
					p.fail(k, v, "a positive number of requests or null")
				}
			}
			r.hasMaxConcurrency = true
		case "duration":
			r.DurationS = p.nonneg(k, v)
		case "completed":
			r.Completed = p.count(k, v, maxResultRequests)
		case "failed":
			r.Failed = p.count(k, v, maxResultRequests)
		case "total_input_tokens":
			r.TotalInputTokens = int64(p.count(k, v, 1<<50))
		case "total_output_tokens":
			r.TotalOutputTokens = int64(p.count(k, v, 1<<50))
		case "request_throughput":
			r.RequestThroughput = p.nonneg(k, v)
		case "request_goodput":
			if !isNull(v) {
				r.RequestGoodput = p.nonneg(k, v)
			}
		case "output_throughput":
			r.OutputThroughput = p.nonneg(k, v)
		case "total_token_throughput":
			r.TotalTokenThroughput = p.nonneg(k, v)
		case "max_output_tokens_per_s":
			r.MaxOutputTokensPerS = p.nullableNonneg(k, v)
		case "max_concurrent_requests":
			r.MaxConcurrentReqs = p.nullableNonneg(k, v)
		case "input_lens":
			r.InputLens = p.ints(k, v)
			r.hasDetailed = true
		case "output_lens":
			r.OutputLens = p.ints(k, v)
			r.hasDetailed = true
		case "ttfts":
			r.TTFTsS = p.floats(k, v)
			r.hasDetailed = true
		case "itls":
			var raw []json.RawMessage
			if err := json.Unmarshal(v, &raw); err != nil {
				p.fail(k, v, "a list of lists of seconds")
				break
			}
			r.ITLsS = make([][]float64, len(raw))
			for i, x := range raw {
				r.ITLsS[i] = p.floats(fmt.Sprintf("%s[%d]", k, i), x)
			}
			r.hasDetailed = true
		case "generated_texts":
			var raw []json.RawMessage
			if err := json.Unmarshal(v, &raw); err != nil {
				p.fail(k, v, "a list of strings")
			}
			r.GeneratedTexts = len(raw)
		case "errors":
			var raw []*string
			if err := json.Unmarshal(v, &raw); err != nil {
				p.fail(k, v, "a list of strings")
			}
			r.Errors = make([]string, len(raw))
			for i, e := range raw {
				if e != nil {
					r.Errors[i] = *e
				}
			}
		case "ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps", "rps_change_events":
			if !isNull(v) {
				r.RampUp = true
			}
		default:
			if m := statRe.FindStringSubmatch(k); m != nil {
				x := p.nullableNonneg(k, v)
				l := lat[m[2]]
				switch m[1] {
				case "mean":
					l.Mean = x
				case "median":
					l.Median = x
				case "std":
					l.Std = x
				}
				continue
			}
			if m := pctRe.FindStringSubmatch(k); m != nil {
				pc, _ := strconv.ParseFloat(m[1], 64)
				if pc > 100 {
					p.fail(k, v, "a percentile key p0..p100")
					continue
				}
				x := p.nullableNonneg(k, v)
				if !math.IsNaN(x) {
					l := lat[m[2]]
					l.Percentiles = append(l.Percentiles, Percentile{P: pc, MS: x})
				}
				continue
			}
			r.Metadata = append(r.Metadata, k+"="+metaValue(v))
		}
		if p.err != nil {
			return nil, p.err
		}
	}
	for _, l := range lat {
		sort.Slice(l.Percentiles, func(a, b int) bool { return l.Percentiles[a].P < l.Percentiles[b].P })
	}
	var missing []string
	for _, k := range []string{"duration", "completed", "total_input_tokens", "total_output_tokens", "request_throughput", "output_throughput"} {
		if _, ok := top[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: missing %s: not a vllm bench serve --save-result file", name, strings.Join(missing, ", "))
	}
	if r.InputLens != nil || r.OutputLens != nil {
		if len(r.InputLens) != len(r.OutputLens) {
			return nil, fmt.Errorf("%s: input_lens has %d entries, output_lens %d: want one per request each", name, len(r.InputLens), len(r.OutputLens))
		}
	}
	for _, c := range []struct {
		k string
		n int
	}{{"ttfts", len(r.TTFTsS)}, {"itls", len(r.ITLsS)}, {"errors", len(r.Errors)}} {
		if c.n > 0 && r.InputLens != nil && c.n != len(r.InputLens) {
			return nil, fmt.Errorf("%s: %s has %d entries, input_lens %d: want one per request each", name, c.k, c.n, len(r.InputLens))
		}
	}
	if r.Completed > 0 && !(r.DurationS > 0) {
		return nil, fmt.Errorf("%s: duration %v with %d completed requests: want a positive duration", name, r.DurationS, r.Completed)
	}
	if err := r.plausible(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func metaValue(v json.RawMessage) string {
	if isNull(v) {
		return "null"
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, v) == nil {
		return clip(b.Bytes())
	}
	return clip(v)
}

// parser collects the first type error.
type parser struct {
	name string
	err  error
}

func (p *parser) fail(k string, v json.RawMessage, want string) {
	if p.err == nil {
		p.err = fmt.Errorf("%s: field %q: want %s, got %s", p.name, k, want, clip(bytes.TrimSpace(v)))
	}
}

func (p *parser) str(k string, v json.RawMessage) string {
	if isNull(v) {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		p.fail(k, v, "a string")
	}
	return s
}

func (p *parser) number(k string, v json.RawMessage, want string) float64 {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || isNull(v) {
		p.fail(k, v, want)
		return math.NaN()
	}
	return f
}

func (p *parser) nonneg(k string, v json.RawMessage) float64 {
	f := p.number(k, v, "a number >= 0")
	if f < 0 {
		p.fail(k, v, "a number >= 0")
	}
	return f
}

func (p *parser) positive(k string, v json.RawMessage, want string) float64 {
	f := p.number(k, v, want)
	if !(f > 0) {
		p.fail(k, v, want)
	}
	return f
}

func (p *parser) nullableNonneg(k string, v json.RawMessage) float64 {
	if isNull(v) {
		return math.NaN()
	}
	return p.nonneg(k, v)
}

func (p *parser) count(k string, v json.RawMessage, limit float64) int {
	f := p.number(k, v, "a whole number")
	if f != math.Trunc(f) || f < 0 || f > limit {
		p.fail(k, v, fmt.Sprintf("a whole number in 0..%g", limit))
		return 0
	}
	return int(f)
}

func (p *parser) ints(k string, v json.RawMessage) []int {
	var fs []float64
	if err := json.Unmarshal(v, &fs); err != nil {
		p.fail(k, v, "a list of token counts")
		return nil
	}
	if len(fs) > maxResultRequests {
		p.fail(k, v, fmt.Sprintf("at most %d entries", maxResultRequests))
		return nil
	}
	out := make([]int, len(fs))
	for i, f := range fs {
		if f != math.Trunc(f) || f < 0 || f > maxResultTokens {
			p.fail(fmt.Sprintf("%s[%d]", k, i), v, fmt.Sprintf("token counts in 0..%d (entry %d is %v)", maxResultTokens, i, f))
			return nil
		}
		out[i] = int(f)
	}
	return out
}

func (p *parser) floats(k string, v json.RawMessage) []float64 {
	var fs []*float64
	if err := json.Unmarshal(v, &fs); err != nil {
		p.fail(k, v, "a list of seconds")
		return nil
	}
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = math.NaN()
		if f != nil {
			out[i] = *f
		}
	}
	return out
}

// plausible checks the measured rates and latencies against the file's own totals: a rate is at
// most its tokens (or requests) over the duration, a latency at most the duration, each within
// 5 % (vLLM rounds nothing, but a run's clock and its duration differ slightly).
func (r *Result) plausible() error {
	if err := r.detailPlausible(); err != nil {
		return err
	}
	if !(r.DurationS > 0) {
		return nil
	}
	const slack = 1.05
	rates := []struct {
		field string
		v     float64
		total float64
	}{
		{"output_throughput", r.OutputThroughput, float64(r.TotalOutputTokens)},
		{"total_token_throughput", r.TotalTokenThroughput, float64(r.TotalInputTokens + r.TotalOutputTokens)},
		{"request_throughput", r.RequestThroughput, float64(r.Completed)},
	}
	for _, c := range rates {
		if max := slack * c.total / r.DurationS; c.v > max && c.v > 1e-9 {
			return fmt.Errorf("%s %g is implausible: the file's own totals give at most %.4g (%g over duration %g s)", c.field, c.v, max, c.total, r.DurationS)
		}
	}
	lat := []struct {
		field string
		l     Latency
	}{{"ttft", r.TTFT}, {"tpot", r.TPOT}, {"itl", r.ITL}, {"e2el", r.E2EL}}
	maxMS := slack * r.DurationS * 1e3
	for _, c := range lat {
		vals := map[string]float64{"mean_" + c.field + "_ms": c.l.Mean, "median_" + c.field + "_ms": c.l.Median}
		for _, pc := range c.l.Percentiles {
			vals[fmt.Sprintf("p%g_%s_ms", pc.P, c.field)] = pc.MS
		}
		keys := make([]string, 0, len(vals))
		for k := range vals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v := vals[k]; v > maxMS {
				return fmt.Errorf("%s %g ms is implausible: longer than the run's duration %g s", k, v, r.DurationS)
			}
		}
	}
	return nil
}
