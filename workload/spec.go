package workload

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/tomlx"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/protocol"
)

// Kind is how requests are offered to the server.
type Kind string

const (
	// KindClosed is N requests at concurrency C: C clients each send a request and send the next
	// as soon as it completes (vllm bench serve --max-concurrency, InferenceX ISL/OSL runs).
	KindClosed Kind = "closed"
	// KindOpen is open-loop arrivals: a Poisson or gamma renewal process, optionally with a
	// piecewise-linear rate ramp. Requests arrive whether or not earlier ones finished.
	KindOpen Kind = "open"
	// KindTrace replays a CSV or JSONL trace of arrival times and lengths.
	KindTrace Kind = "trace"
	// KindLLMBenchCell is one llm-inference-bench decode cell (the rules are package protocol's): a hidden
	// warm-up, a cold scout prefill, then C streams of the identical prompt, closed loop, measured
	// over a fixed window after a readiness gate.
	KindLLMBenchCell Kind = "bench"
	// KindVLLMBench is vLLM's benchmark client, `vllm bench serve`: its random or ShareGPT
	// dataset, request rate and burstiness, max-concurrency semaphore, ready check and warm-ups
	// (see VLLMBench; package vllmbench imports the command line).
	KindVLLMBench Kind = "vllm-bench"
	// KindOffline is `vllm bench throughput`: the LLM class in-process, every request handed to
	// the engine at t = 0 with no API server; the metric is tokens / elapsed time.
	KindOffline Kind = "offline"
)

// Lengths draws prompt and output lengths, as vllm bench serve's random dataset does: each length
// is uniform on the integers [L*(1-range_ratio), L*(1+range_ratio)] (fixed when range_ratio is
// 0). Outputs always run to their drawn length (ignore-EOS semantics: the simulator has no EOS).
type Lengths struct {
	InputTokens  int     `toml:"input_tokens" json:"input_tokens"`
	OutputTokens int     `toml:"output_tokens" json:"output_tokens"`
	RangeRatio   float64 `toml:"range_ratio" json:"range_ratio"`
	// PrefixTokens is a leading part of every prompt shared within a prefix group (a system prompt,
	// a RAG document); it counts in InputTokens. PrefixGroups is the number of distinct prefixes
	// (request i uses group i mod PrefixGroups); 0 or 1 means one shared prefix.
	PrefixTokens int `toml:"prefix_tokens,omitempty" json:"prefix_tokens,omitempty"`
	PrefixGroups int `toml:"prefix_groups,omitempty" json:"prefix_groups,omitempty"`
	// SamePrompt makes every prompt identical (then the prefix cache serves all but the first).
	SamePrompt bool `toml:"same_prompt,omitempty" json:"same_prompt,omitempty"`
}

// Closed is a closed-loop run.
type Closed struct {
	Requests    int `toml:"requests" json:"requests"`
	Concurrency int `toml:"concurrency" json:"concurrency"`
}

// RampPoint is one corner of a piecewise-linear arrival-rate profile.
type RampPoint struct {
	AtS      float64 `toml:"at_s" json:"at_s"`
	RatePerS float64 `toml:"rate" json:"rate"`
}

// Open is an open-loop arrival process. The process is a renewal process in "operational time":
// inter-arrival gaps with mean 1 (exponential for poisson; gamma with shape 1/cv^2 for gamma) are
// mapped through the inverse of the cumulative rate, so a constant rate gives a plain Poisson or
// gamma process and a ramp changes the rate smoothly.
type Open struct {
	// Process is "poisson" or "gamma".
	Process string `toml:"process" json:"process"`
	// RatePerS is the constant rate, requests per second (ignored when Ramp is given).
	RatePerS float64 `toml:"rate,omitempty" json:"rate,omitempty"`
	// CV is the coefficient of variation of the gaps for gamma (1 = Poisson; > 1 bursty).
	CV float64 `toml:"cv,omitempty" json:"cv,omitempty"`
	// Requests stops the arrivals after this many; DurationS after this much time. At least one
	// is needed (a ramp's last point sets DurationS when neither is given).
	Requests  int     `toml:"requests,omitempty" json:"requests,omitempty"`
	DurationS float64 `toml:"duration_s,omitempty" json:"duration_s,omitempty"`
	// Ramp is a piecewise-linear rate profile; the rate after the last point stays at its value.
	Ramp []RampPoint `toml:"ramp,omitempty" json:"ramp,omitempty"`
}

// Trace replays a file of requests.
type Trace struct {
	File string `toml:"file" json:"file"`
	// Format is "csv" or "jsonl"; empty: from the file extension.
	Format string `toml:"format,omitempty" json:"format,omitempty"`
	// TimeUnit is the unit of a bare "timestamp" field: "s", "ms" or "us" (default: see
	// TraceOptions).
	TimeUnit string `toml:"time_unit,omitempty" json:"time_unit,omitempty"`
	// Speedup divides every arrival time (2 = twice the rate). Default 1.
	Speedup float64 `toml:"speedup,omitempty" json:"speedup,omitempty"`
	// MaxRequests keeps only the first N requests (0 = all).
	MaxRequests int `toml:"max_requests,omitempty" json:"max_requests,omitempty"`
	// rows is the parsed trace (set by Load/LoadTrace; not part of the TOML).
	rows []TraceRow
	// blocks holds the rows' prefix-block hash ids, by line (JSONL traces with hash_ids).
	blocks map[int][]uint64
}

// LLMBenchCell is one llm-inference-bench decode cell, run as the tool runs a matrix of that one cell
// (hidden warm-ups, then the cell with its cold scout). Absent fields take the seed protocol's
// values (protocol.Seed): 30 s window, 4,096 output tokens, 1 s polls, 3 s stable, the tool's
// readiness timeout by context, 64-token margin, 10 % trim slack. The fields that may be zero are
// pointers, so that zero is not absent.
type LLMBenchCell struct {
	// Context is the prompt length: tokens or KiB of tokens ("128K" = 131,072).
	Context      string   `toml:"context" json:"context"`
	Concurrency  int      `toml:"concurrency" json:"concurrency"`
	DurationS    float64  `toml:"duration_s,omitempty" json:"duration_s,omitempty"`
	MaxOutput    int      `toml:"max_output,omitempty" json:"max_output,omitempty"`
	PollS        float64  `toml:"poll_s,omitempty" json:"poll_s,omitempty"`
	StableS      *float64 `toml:"stable_s,omitempty" json:"stable_s,omitempty"`
	MarginTokens *int     `toml:"margin_tokens,omitempty" json:"margin_tokens,omitempty"`
	TrimSlack    *float64 `toml:"trim_slack,omitempty" json:"trim_slack,omitempty"`
	// ReadyTimeoutS replaces the tool's readiness timeout (0 or absent: its default by context).
	ReadyTimeoutS float64 `toml:"ready_timeout_s,omitempty" json:"ready_timeout_s,omitempty"`
	// ReadyLimitS bounds the simulated wait for the readiness gate, counted from the cell's
	// start: past it without a verdict the run fails ("streams never all run at once"). Absent:
	// no bound but the tool's readiness timeout. A planner sets less, to give up on thrashing
	// configurations quickly.
	ReadyLimitS float64 `toml:"ready_limit_s,omitempty" json:"ready_limit_s,omitempty"`
}

// SLO is a set of service-level objectives. Zero fields are not checked. A run meets an objective
// when the Quantile of the metric over requests is within the limit (per-user tok/s: the
// (1 - Quantile) quantile is at least the limit, i.e. Quantile of users get that rate or more).
// Goodput counts the requests that meet every limit individually.
type SLO struct {
	TTFTms   float64 `toml:"ttft_ms,omitempty" json:"ttft_ms,omitempty"`
	TPOTms   float64 `toml:"tpot_ms,omitempty" json:"tpot_ms,omitempty"`
	E2Ems    float64 `toml:"e2e_ms,omitempty" json:"e2e_ms,omitempty"`
	UserTokS float64 `toml:"user_tok_s,omitempty" json:"user_tok_s,omitempty"`
	// Quantile is the fraction of requests that must meet each limit (default 0.9: p90).
	Quantile float64 `toml:"quantile,omitempty" json:"quantile,omitempty"`
}

// Any reports whether any objective is set.
func (s SLO) Any() bool { return s.TTFTms > 0 || s.TPOTms > 0 || s.E2Ems > 0 || s.UserTokS > 0 }

// Q is the quantile, defaulted.
func (s SLO) Q() float64 {
	if s.Quantile == 0 {
		return 0.9
	}
	return s.Quantile
}

// Validate checks the limits.
func (s SLO) Validate() error {
	for _, c := range []struct {
		n string
		v float64
	}{{"ttft_ms", s.TTFTms}, {"tpot_ms", s.TPOTms}, {"e2e_ms", s.E2Ems}, {"user_tok_s", s.UserTokS}} {
		if c.v < 0 || math.IsNaN(c.v) || math.IsInf(c.v, 0) {
			return fmt.Errorf("slo.%s = %v: must be a positive number (or absent)", c.n, c.v)
		}
	}
	if s.Quantile != 0 && !(s.Quantile >= 0.5 && s.Quantile < 1) {
		return fmt.Errorf("slo.quantile = %v: must be in [0.5, 1) (0.9 = p90)", s.Quantile)
	}
	return nil
}

// Spec is a workload: how requests arrive and how long they are. Defaults, then TOML, then
// flags, then Validate.
type Spec struct {
	Name string `toml:"name" json:"name"`
	Kind Kind   `toml:"kind" json:"kind"`
	// Seed drives every random draw of the workload (lengths, arrivals) and the engine's
	// speculative acceptance. HasSeed is false when the file did not set one: the caller's seed
	// (the scenario's) is used.
	Seed    uint64 `toml:"seed,omitempty" json:"seed"`
	HasSeed bool   `toml:"-" json:"-"`

	Lengths Lengths      `toml:"lengths" json:"lengths"`
	Closed  Closed       `toml:"closed" json:"closed"`
	Open    Open         `toml:"open" json:"open"`
	Trace   Trace        `toml:"trace" json:"trace"`
	Cell    LLMBenchCell `toml:"bench" json:"bench"`
	// VLLM is the vllm-bench and offline kinds' run (nil for the others).
	VLLM *VLLMBench `toml:"vllm_bench,omitempty" json:"vllm_bench,omitempty"`
	SLO  SLO        `toml:"slo" json:"slo"`
	// SampleIntervalS is the KV-usage sampling period in simulated seconds (default 1).
	SampleIntervalS float64 `toml:"sample_interval_s,omitempty" json:"sample_interval_s,omitempty"`

	dir string // directory relative trace paths resolve against
}

// MaxRequests bounds the requests of one run (a workload, a trace, a vllm bench run): the
// simulator keeps a record of every request (under a kilobyte each), so a million requests run
// in under 1 GB of memory; a larger run is refused, never attempted.
const MaxRequests = 1_000_000

// MaxStreamRequests bounds a streamed open loop's requests (Spec.Stream, a fleet's traffic): a
// stream keeps nothing per finished request, so this bound only keeps counts and times finite.
const MaxStreamRequests = 1_000_000_000

// Sanity limits keep every product of counts inside int64 and runs finite.
const (
	maxTokens      = 1 << 24 // 16.7 M tokens per request
	maxConcurrency = 100_000
	maxRate        = 1e6
	maxDurationS   = 30 * 24 * 3600
)

// Parse reads a workload TOML strictly: an unknown key is an error naming it.
func Parse(data []byte, name string) (*Spec, error) {
	var s Spec
	md, err := tomlx.Decode(data, name, &s, "'servesim workload --example' prints every key")
	if err != nil {
		return nil, err
	}
	s.HasSeed = md.IsDefined("seed")
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	if err := s.Validate(); err != nil {
		return nil, tomlx.Locate(data, name, err)
	}
	return &s, nil
}

// Load reads a workload: a TOML file, or a trace (.csv, .jsonl, .json) replayed as it is. Trace
// files named by a TOML file are read relative to it.
func Load(path string) (*Spec, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".csv" || ext == ".jsonl" || ext == ".json" || ext == ".ndjson" {
		s := &Spec{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Kind: KindTrace, Trace: Trace{File: path}}
		if err := s.Validate(); err != nil {
			return nil, err
		}
		if err := s.LoadTrace(); err != nil {
			return nil, err
		}
		return s, nil
	}
	data, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	s.dir = filepath.Dir(path)
	if s.Kind == KindTrace {
		if err := s.LoadTrace(); err != nil {
			return nil, err
		}
	}
	if err := s.LoadDataset(); err != nil {
		return nil, err
	}
	return s, nil
}

// LoadTrace reads the trace file of a trace workload (once).
func (s *Spec) LoadTrace() error {
	if s.Kind != KindTrace || s.Trace.rows != nil {
		return nil
	}
	p := s.Trace.File
	if !filepath.IsAbs(p) && s.dir != "" {
		p = filepath.Join(s.dir, p)
	}
	f, err := fsutil.Open(p, fsutil.MaxTraceBytes)
	if err != nil {
		return fmt.Errorf("trace.file: %w", err)
	}
	defer f.Close()
	format := s.Trace.Format
	if format == "" {
		format = formatFromExt(p)
	}
	opt := TraceOptions{TimeUnit: s.Trace.TimeUnit}
	var rows []TraceRow
	switch format {
	case "csv":
		rows, err = ParseCSV(f, p, opt)
	case "jsonl":
		rows, s.Trace.blocks, err = ParseJSONLBlocks(f, p, opt)
	}
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("%s: the trace has no requests", p)
	}
	s.Trace.rows = rows
	return nil
}

// SetTrace gives a trace workload its rows directly (tests, generated traces).
func (s *Spec) SetTrace(rows []TraceRow) {
	s.Kind = KindTrace
	s.Trace.rows = rows
}

func formatFromExt(p string) string {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".csv":
		return "csv"
	}
	return "jsonl"
}

// Validate checks the workload, naming the first bad field.
func (s *Spec) Validate() error { return s.validate(MaxRequests) }

// validate is Validate with an open loop's request bound.
func (s *Spec) validate(maxOpen int) error {
	switch s.Kind {
	case KindClosed, KindOpen, KindTrace, KindLLMBenchCell, KindVLLMBench, KindOffline:
	case "":
		return fmt.Errorf("kind: missing: want closed, open, trace, bench, vllm-bench or offline")
	default:
		return fmt.Errorf("kind = %q: want closed, open, trace, bench, vllm-bench or offline", s.Kind)
	}
	if (s.Kind == KindVLLMBench || s.Kind == KindOffline) != (s.VLLM != nil) {
		if s.VLLM == nil {
			return fmt.Errorf("vllm_bench: missing: kind %q needs a [vllm_bench] table", s.Kind)
		}
		return fmt.Errorf("vllm_bench: only for kind vllm-bench or offline, not %q", s.Kind)
	}
	if err := s.SLO.Validate(); err != nil {
		return err
	}
	if v := s.SampleIntervalS; v < 0 || math.IsNaN(v) || v > 3600 {
		return fmt.Errorf("sample_interval_s = %v: must be in (0, 3600] (or absent: 1 s)", v)
	}
	if s.Kind == KindClosed || s.Kind == KindOpen {
		if err := s.Lengths.validate(); err != nil {
			return err
		}
	}
	switch s.Kind {
	case KindClosed:
		c := s.Closed
		if c.Requests <= 0 || c.Requests > MaxRequests {
			return fmt.Errorf("closed.requests = %d: must be in 1..%d", c.Requests, MaxRequests)
		}
		if c.Concurrency <= 0 || c.Concurrency > maxConcurrency {
			return fmt.Errorf("closed.concurrency = %d: must be in 1..%d", c.Concurrency, maxConcurrency)
		}
	case KindOpen:
		return s.Open.validate(maxOpen)
	case KindTrace:
		t := s.Trace
		if t.File == "" && t.rows == nil {
			return fmt.Errorf("trace.file: missing: want a .csv or .jsonl file")
		}
		switch t.Format {
		case "", "csv", "jsonl":
		default:
			return fmt.Errorf("trace.format = %q: %s", t.Format, wantFormat(t.Format))
		}
		if _, err := unitScale(t.TimeUnit); err != nil {
			return fmt.Errorf("trace.time_unit: %w", err)
		}
		if t.Speedup != 0 && !(t.Speedup >= 1e-6 && t.Speedup <= 1e6) {
			// Arrival times are divided by it: a tiny speedup would push them past int64 ns.
			return fmt.Errorf("trace.speedup = %v: must be in [1e-06, 1e+06] (or absent: 1)", t.Speedup)
		}
		if t.MaxRequests < 0 {
			return fmt.Errorf("trace.max_requests = %d: must be >= 0", t.MaxRequests)
		}
	case KindVLLMBench, KindOffline:
		return s.VLLM.validate(s.Kind)
	case KindLLMBenchCell:
		b := s.Cell
		n, err := matrix.ParseContext(b.Context)
		if err != nil {
			return fmt.Errorf("bench.context: %w", err)
		}
		if n > maxTokens {
			return fmt.Errorf("bench.context = %q: at most %d tokens", b.Context, maxTokens)
		}
		if b.Concurrency <= 0 || b.Concurrency > maxConcurrency {
			return fmt.Errorf("bench.concurrency = %d: must be in 1..%d", b.Concurrency, maxConcurrency)
		}
		if b.ReadyLimitS < 0 || math.IsNaN(b.ReadyLimitS) || b.ReadyLimitS > maxDurationS {
			return fmt.Errorf("bench.ready_limit_s = %v: must be in (0, %d] (or absent: no limit but the readiness timeout)", b.ReadyLimitS, maxDurationS)
		}
		p := b.Protocol()
		if err := p.Validate(); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	return nil
}

func (l *Lengths) validate() error {
	switch {
	case l.InputTokens <= 0 || l.InputTokens > maxTokens:
		return fmt.Errorf("lengths.input_tokens = %d: must be in 1..%d", l.InputTokens, maxTokens)
	case l.OutputTokens <= 0 || l.OutputTokens > maxTokens:
		return fmt.Errorf("lengths.output_tokens = %d: must be in 1..%d", l.OutputTokens, maxTokens)
	case !(l.RangeRatio >= 0 && l.RangeRatio < 1):
		return fmt.Errorf("lengths.range_ratio = %v: must be in [0, 1)", l.RangeRatio)
	case l.PrefixTokens < 0 || l.PrefixTokens >= l.InputTokens:
		return fmt.Errorf("lengths.prefix_tokens = %d: must be in 0..input_tokens-1 (%d)", l.PrefixTokens, l.InputTokens-1)
	case l.PrefixGroups < 0 || l.PrefixGroups > MaxRequests:
		return fmt.Errorf("lengths.prefix_groups = %d: must be in 0..%d", l.PrefixGroups, MaxRequests)
	}
	return nil
}

func (o *Open) validate(maxRequests int) error {
	switch o.Process {
	case "poisson":
	case "gamma":
		if !(o.CV > 0 && o.CV <= 100) {
			return fmt.Errorf("open.cv = %v: gamma needs a coefficient of variation in (0, 100]", o.CV)
		}
	case "":
		return fmt.Errorf("open.process: missing: want poisson or gamma")
	default:
		return fmt.Errorf("open.process = %q: want poisson or gamma", o.Process)
	}
	if o.Process == "poisson" && o.CV != 0 && o.CV != 1 {
		return fmt.Errorf("open.cv = %v: a poisson process has cv 1 (use process = \"gamma\" for another cv)", o.CV)
	}
	if o.Requests < 0 || o.Requests > maxRequests {
		return fmt.Errorf("open.requests = %d: must be in 0..%d", o.Requests, maxRequests)
	}
	if o.DurationS < 0 || math.IsNaN(o.DurationS) || o.DurationS > maxDurationS {
		return fmt.Errorf("open.duration_s = %v: must be in [0, %d]", o.DurationS, maxDurationS)
	}
	if len(o.Ramp) == 0 {
		if !(o.RatePerS > 0 && o.RatePerS <= maxRate) {
			return fmt.Errorf("open.rate = %v: must be in (0, %g] requests/s (or give open.ramp)", o.RatePerS, maxRate)
		}
		if o.Requests == 0 && o.DurationS == 0 {
			return fmt.Errorf("open: give requests or duration_s (when to stop arriving)")
		}
		return nil
	}
	if o.RatePerS != 0 {
		return fmt.Errorf("open.rate and open.ramp are exclusive: the ramp sets the rate")
	}
	var positive bool
	for i, p := range o.Ramp {
		if p.AtS < 0 || math.IsNaN(p.AtS) || p.AtS > maxDurationS {
			return fmt.Errorf("open.ramp[%d].at_s = %v: must be in [0, %d]", i, p.AtS, maxDurationS)
		}
		if i > 0 && p.AtS <= o.Ramp[i-1].AtS {
			return fmt.Errorf("open.ramp[%d].at_s = %v: must be after ramp[%d].at_s = %v", i, p.AtS, i-1, o.Ramp[i-1].AtS)
		}
		if p.RatePerS < 0 || math.IsNaN(p.RatePerS) || p.RatePerS > maxRate {
			return fmt.Errorf("open.ramp[%d].rate = %v: must be in [0, %g]", i, p.RatePerS, maxRate)
		}
		positive = positive || p.RatePerS > 0
	}
	if !positive {
		return fmt.Errorf("open.ramp: every rate is 0: no request would arrive")
	}
	if o.Requests == 0 && o.DurationS == 0 && o.Ramp[len(o.Ramp)-1].AtS == 0 {
		return fmt.Errorf("open: give requests or duration_s (or a ramp whose last point is after 0 s)")
	}
	return nil
}

// endS is when arrivals stop (0 = only the request count stops them).
func (o *Open) endS() float64 {
	if o.DurationS > 0 {
		return o.DurationS
	}
	if o.Requests == 0 && len(o.Ramp) > 0 {
		return o.Ramp[len(o.Ramp)-1].AtS
	}
	return 0
}

// Protocol is the benchmark protocol of a bench cell, with defaults from protocol.Seed.
func (b LLMBenchCell) Protocol() protocol.Protocol {
	p := protocol.Seed()
	p.Contexts = []string{b.Context}
	p.PrefillOnly = nil
	p.Concurrency = []int{max(b.Concurrency, 1)}
	if b.DurationS != 0 {
		p.DurationS = b.DurationS
	}
	if b.MaxOutput != 0 {
		p.MaxOutput = b.MaxOutput
	}
	if b.PollS != 0 {
		p.PollS = b.PollS
	}
	if b.StableS != nil {
		p.StableS = *b.StableS
	}
	if b.MarginTokens != nil {
		p.MarginTokens = *b.MarginTokens
	}
	if b.TrimSlack != nil {
		p.TrimSlack = *b.TrimSlack
	}
	if b.ReadyTimeoutS != 0 {
		p.ReadyTimeoutS = b.ReadyTimeoutS
	}
	return p
}

// BenchFromProtocol is a bench cell at context x concurrency with every other setting from p (a
// scenario's protocol). The trim slack is set only when it is not the seed's (absent means the
// seed's).
func BenchFromProtocol(p *protocol.Protocol, context string, concurrency int) LLMBenchCell {
	stable, margin := p.StableS, p.MarginTokens
	b := LLMBenchCell{Context: context, Concurrency: concurrency, DurationS: p.DurationS, MaxOutput: p.MaxOutput,
		PollS: p.PollS, StableS: &stable, MarginTokens: &margin, ReadyTimeoutS: p.ReadyTimeoutS}
	if seed := protocol.Seed(); p.TrimSlack != seed.TrimSlack {
		trim := p.TrimSlack
		b.TrimSlack = &trim
	}
	return b
}

// MaxConcurrency bounds the requests the workload keeps in flight at once (0 = unbounded: open
// loop and traces).
func (s *Spec) MaxConcurrency() int {
	switch s.Kind {
	case KindClosed:
		return s.Closed.Concurrency
	case KindLLMBenchCell:
		return s.Cell.Concurrency
	case KindVLLMBench:
		return s.VLLM.MaxConcurrency
	}
	return 0
}

// MaxRequestTokens is the longest prompt + output the workload can send (the max_model_len it
// needs), or 0 when unknown before the trace is read.
func (s *Spec) MaxRequestTokens() int {
	switch s.Kind {
	case KindClosed, KindOpen:
		l := s.Lengths
		return hiLen(l.InputTokens, l.RangeRatio) + hiLen(l.OutputTokens, l.RangeRatio)
	case KindLLMBenchCell:
		p := s.Cell.Protocol()
		n, _ := matrix.ParseContext(s.Cell.Context)
		return p.NeedModelLen(n, p.MaxOutput)
	case KindTrace:
		m := 0
		for _, r := range s.Trace.rows {
			m = max(m, r.InputTokens+r.OutputTokens)
		}
		return m
	case KindVLLMBench, KindOffline:
		if s.LoadDataset() != nil {
			return 0
		}
		return s.VLLM.maxRequestTokens()
	}
	return 0
}

// Describe is a one-line summary of the workload.
func (s *Spec) Describe() string {
	l := s.Lengths
	lens := fmt.Sprintf("input %d, output %d tokens", l.InputTokens, l.OutputTokens)
	if l.RangeRatio > 0 {
		lens += fmt.Sprintf(" (uniform within ±%.0f%%)", 100*l.RangeRatio)
	}
	if l.PrefixTokens > 0 {
		lens += fmt.Sprintf(", %d-token shared prefix in %d group(s)", l.PrefixTokens, max(l.PrefixGroups, 1))
	}
	if l.SamePrompt {
		lens += ", identical prompts"
	}
	switch s.Kind {
	case KindClosed:
		return fmt.Sprintf("closed loop: %d requests at concurrency %d; %s", s.Closed.Requests, s.Closed.Concurrency, lens)
	case KindOpen:
		o := s.Open
		proc := o.Process
		if o.Process == "gamma" {
			proc = fmt.Sprintf("gamma (cv %.2g)", o.CV)
		}
		rate := fmt.Sprintf("%.3g req/s", o.RatePerS)
		if len(o.Ramp) > 0 {
			var parts []string
			for _, p := range o.Ramp {
				parts = append(parts, fmt.Sprintf("%.3g@%gs", p.RatePerS, p.AtS))
			}
			rate = "ramp " + strings.Join(parts, " -> ") + " req/s"
		}
		stop := ""
		if o.Requests > 0 {
			stop = fmt.Sprintf(", %d requests", o.Requests)
		}
		if o.DurationS > 0 {
			stop += fmt.Sprintf(", for %g s", o.DurationS)
		}
		return fmt.Sprintf("open loop: %s, %s%s; %s", proc, rate, stop, lens)
	case KindTrace:
		return fmt.Sprintf("trace replay: %s (%d requests)", s.Trace.File, len(s.Trace.rows))
	case KindLLMBenchCell:
		p := s.Cell.Protocol()
		streams := "streams"
		if s.Cell.Concurrency == 1 {
			streams = "stream"
		}
		return fmt.Sprintf("llm-inference-bench cell: context %s x %d %s, %g s window, max output %d", s.Cell.Context, s.Cell.Concurrency, streams, p.DurationS, p.MaxOutput)
	case KindVLLMBench, KindOffline:
		return s.VLLM.describe(s.Kind)
	}
	return string(s.Kind)
}

func hiLen(l int, r float64) int { return int(float64(l) * (1 + r)) }
func loLen(l int, r float64) int { return max(1, int(float64(l)*(1-r))) }

// SamePromptShare is the workload-level parameter same_prompt of the workload: 1 when every
// request carries one prompt (an llm-inference-bench cell, lengths.same_prompt), else 0
// (vLLM's random and ShareGPT datasets, traces, prompts drawn per request).
func (s *Spec) SamePromptShare() float64 {
	if s.Kind == KindLLMBenchCell || (s.Lengths.SamePrompt && s.Kind != KindVLLMBench && s.Kind != KindOffline && s.Kind != KindTrace) {
		return 1
	}
	return 0
}
