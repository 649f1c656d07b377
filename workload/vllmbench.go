package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/vtime"
)

// VLLMBench is a run of vLLM's own benchmark client: `vllm bench serve` (kind vllm-bench: an
// OpenAI-compatible API server, streamed requests) or `vllm bench throughput` (kind offline: the
// LLM class in-process, every request handed to the engine at t = 0, no API server). Package
// vllmbench turns the command lines and result files into this.
//
// Zero values of RequestRate, Burstiness, NumPrompts, SpecialTokens and CharsPerToken mean vLLM's
// defaults (inf, 1, 1000, 1 and 4); InputLen, OutputLen and the others are taken as given (vLLM
// accepts a zero output length and makes it 1).
type VLLMBench struct {
	// Dataset is "random" (vLLM's RandomDataset), "sharegpt" (DatasetPath, a ShareGPT JSON file)
	// or "list" (prompts given by a program with SetPrompts: the lengths a result file recorded).
	Dataset     string `toml:"dataset" json:"dataset"`
	DatasetPath string `toml:"dataset_path,omitempty" json:"dataset_path,omitempty"`
	// NumPrompts is --num-prompts (default 1000).
	NumPrompts int `toml:"num_prompts,omitempty" json:"num_prompts,omitempty"`
	// InputLen, OutputLen, RangeRatio and PrefixLen are --random-input-len, --random-output-len,
	// --random-range-ratio and --random-prefix-len. For sharegpt, OutputLen > 0 is
	// --sharegpt-output-len (a fixed output length) and the others are unused. A list's prompts
	// share PrefixLen leading tokens (counted in their lengths) when it is set.
	InputLen   int     `toml:"input_len,omitempty" json:"input_len,omitempty"`
	OutputLen  int     `toml:"output_len,omitempty" json:"output_len,omitempty"`
	RangeRatio float64 `toml:"range_ratio,omitempty" json:"range_ratio,omitempty"`
	PrefixLen  int     `toml:"prefix_len,omitempty" json:"prefix_len,omitempty"`
	// SpecialTokens is the number of special tokens the model's tokenizer adds to a prompt
	// (tokenizer.num_special_tokens_to_add(): 1 for a BOS token, the default; 0 for tokenizers
	// without one). servesim has no tokenizer, so this is an assumption the user can change.
	SpecialTokens *int `toml:"special_tokens,omitempty" json:"special_tokens,omitempty"`
	// CharsPerToken estimates a ShareGPT turn's tokens from its characters when the file gives no
	// count (default 4).
	CharsPerToken float64 `toml:"chars_per_token,omitempty" json:"chars_per_token,omitempty"`
	// DisableShuffle and NoOversample are --disable-shuffle and --no-oversample (sharegpt).
	DisableShuffle bool `toml:"disable_shuffle,omitempty" json:"disable_shuffle,omitempty"`
	NoOversample   bool `toml:"no_oversample,omitempty" json:"no_oversample,omitempty"`

	// RequestRate is --request-rate in requests/s; 0 means inf (every request sent at t = 0).
	RequestRate float64 `toml:"request_rate,omitempty" json:"request_rate,omitempty"`
	// Burstiness is --burstiness, the gamma shape of the gaps (default 1: Poisson). ConstantGaps
	// is --burstiness inf: every gap is 1 / rate.
	Burstiness   float64 `toml:"burstiness,omitempty" json:"burstiness,omitempty"`
	ConstantGaps bool    `toml:"constant_gaps,omitempty" json:"constant_gaps,omitempty"`
	// MaxConcurrency is --max-concurrency: a semaphore on requests in flight (0: none).
	MaxConcurrency int `toml:"max_concurrency,omitempty" json:"max_concurrency,omitempty"`
	// NumWarmups is --num-warmups; NoReadyCheck is --ready-check-timeout-sec 0. Both send
	// request 0's prompt before the measured run.
	NumWarmups   int  `toml:"num_warmups,omitempty" json:"num_warmups,omitempty"`
	NoReadyCheck bool `toml:"no_ready_check,omitempty" json:"no_ready_check,omitempty"`
	// Seed is the benchmark's --seed (default 0): the lengths, the ShareGPT shuffle and the
	// arrival gaps. The engine's own randomness takes the scenario's seed.
	Seed uint64 `toml:"seed,omitempty" json:"seed,omitempty"`

	prompts  []BenchPrompt  // dataset "list"
	shareGPT []ShareGPTPair // dataset "sharegpt", once read
}

// BenchPrompt is one prompt of a dataset given as a list.
type BenchPrompt struct {
	// Tokens is the prompt length the benchmark counts (its prompt_len, summed into
	// total_input_tokens and listed in input_lens).
	Tokens int `json:"tokens"`
	// EngineTokens is the prompt the engine sees: Tokens plus the special tokens the server's
	// tokenizer adds when the benchmark's count leaves them out (the random dataset). 0: Tokens.
	EngineTokens int `json:"engine_tokens,omitempty"`
	OutputTokens int `json:"output_tokens"`
	// Group > 0 marks identical prompts: prompts with equal Group have the same content (ShareGPT's
	// top-up duplicates hit the prefix cache).
	Group int `json:"group,omitempty"`
}

// SetPrompts gives a vllm-bench or offline workload an explicit prompt list (dataset "list").
func (b *VLLMBench) SetPrompts(p []BenchPrompt) {
	b.Dataset = "list"
	b.prompts = p
	if b.NumPrompts == 0 {
		b.NumPrompts = len(p)
	}
}

// Prompts is the explicit prompt list (dataset "list"), or nil.
func (b *VLLMBench) Prompts() []BenchPrompt { return b.prompts }

// Special is SpecialTokens, defaulted.
func (b *VLLMBench) Special() int {
	if b.SpecialTokens == nil {
		return 1
	}
	return *b.SpecialTokens
}

// N is NumPrompts, defaulted.
func (b *VLLMBench) N() int {
	if b.NumPrompts == 0 {
		return 1000
	}
	return b.NumPrompts
}

func (b *VLLMBench) burst() float64 {
	if b.Burstiness == 0 {
		return 1
	}
	return b.Burstiness
}

func (b *VLLMBench) charsPerToken() float64 {
	if b.CharsPerToken == 0 {
		return DefaultCharsPerToken
	}
	return b.CharsPerToken
}

// RandomRanges are the inclusive ranges the random dataset draws from, as vLLM computes them
// (RandomDataset.get_sampling_params): I' = max(0, input_len - special tokens), input uniform on
// [floor(I'(1-r)), ceil(I'(1+r))], output on [max(1, floor(O(1-r))), max(1, ceil(O(1+r)))].
func (b *VLLMBench) RandomRanges() (inLo, inHi, outLo, outHi int) {
	real := float64(max(0, b.InputLen-b.Special()))
	r := b.RangeRatio
	inLo = int(math.Floor(real * (1 - r)))
	inHi = int(math.Ceil(real * (1 + r)))
	o := float64(b.OutputLen)
	outLo = max(1, int(math.Floor(o*(1-r))))
	outHi = max(1, int(math.Ceil(o*(1+r))))
	return
}

func (b *VLLMBench) validate(k Kind) error {
	switch b.Dataset {
	case "random":
		if b.InputLen < 0 || b.InputLen > maxTokens {
			return fmt.Errorf("vllm_bench.input_len = %d: must be in 0..%d", b.InputLen, maxTokens)
		}
		if b.OutputLen < 0 || b.OutputLen > maxTokens {
			return fmt.Errorf("vllm_bench.output_len = %d: must be in 0..%d", b.OutputLen, maxTokens)
		}
		if !(b.RangeRatio >= 0 && b.RangeRatio < 1) {
			return fmt.Errorf("vllm_bench.range_ratio = %v: must be in [0, 1) (vLLM's rule)", b.RangeRatio)
		}
		if b.PrefixLen < 0 || b.PrefixLen > maxTokens {
			return fmt.Errorf("vllm_bench.prefix_len = %d: must be in 0..%d", b.PrefixLen, maxTokens)
		}
		if lo, _, _, _ := b.RandomRanges(); b.PrefixLen+lo < 1 {
			return fmt.Errorf("vllm_bench: the shortest prompt has %d tokens (prefix %d + floor((input_len %d - %d special) x (1 - %g))): vLLM needs at least 1",
				b.PrefixLen+lo, b.PrefixLen, b.InputLen, b.Special(), b.RangeRatio)
		}
	case "sharegpt":
		if b.DatasetPath == "" && b.shareGPT == nil {
			return fmt.Errorf("vllm_bench.dataset_path: missing: the sharegpt dataset needs its JSON file")
		}
		if b.OutputLen < 0 || b.OutputLen > maxTokens {
			return fmt.Errorf("vllm_bench.output_len = %d: must be in 0..%d (0: the reply's length)", b.OutputLen, maxTokens)
		}
	case "list":
		if len(b.prompts) == 0 {
			return fmt.Errorf("vllm_bench: dataset \"list\" has no prompts (it is set by a program, not in a file)")
		}
		for i, p := range b.prompts {
			if p.Tokens < 0 || p.Tokens > maxTokens || p.OutputTokens < 1 || p.OutputTokens > maxTokens || p.EngineTokens < 0 || p.EngineTokens > maxTokens || max(p.Tokens, p.EngineTokens) < 1 {
				return fmt.Errorf("vllm_bench: prompt %d: %d prompt tokens (engine %d), %d output: want 1..%d each", i, p.Tokens, p.EngineTokens, p.OutputTokens, maxTokens)
			}
		}
	case "":
		return fmt.Errorf("vllm_bench.dataset: missing: want random or sharegpt")
	default:
		return fmt.Errorf("vllm_bench.dataset = %q: want random or sharegpt (servesim reads no other vllm bench dataset)", b.Dataset)
	}
	if b.NumPrompts < 0 || b.NumPrompts > MaxRequests {
		return fmt.Errorf("vllm_bench.num_prompts = %d: must be in 1..%d", b.NumPrompts, MaxRequests)
	}
	if s := b.Special(); s < 0 || s > 64 {
		return fmt.Errorf("vllm_bench.special_tokens = %d: must be in 0..64", s)
	}
	if c := b.CharsPerToken; c < 0 || math.IsNaN(c) || c > 100 || (c > 0 && c < 0.1) {
		return fmt.Errorf("vllm_bench.chars_per_token = %v: must be in [0.1, 100] (or absent: %g)", c, DefaultCharsPerToken)
	}
	if r := b.RequestRate; r < 0 || math.IsNaN(r) || math.IsInf(r, 0) || r > maxRate {
		return fmt.Errorf("vllm_bench.request_rate = %v: must be in (0, %g] requests/s (or absent: inf, all at once)", r, maxRate)
	}
	if x := b.Burstiness; x < 0 || math.IsNaN(x) || math.IsInf(x, 0) || (x > 0 && x < 1e-3) || x > 1e6 {
		return fmt.Errorf("vllm_bench.burstiness = %v: must be in [0.001, 1e6] (or absent: 1; constant_gaps for inf)", x)
	}
	if b.MaxConcurrency < 0 || b.MaxConcurrency > maxConcurrency {
		return fmt.Errorf("vllm_bench.max_concurrency = %d: must be in 1..%d (or absent: none)", b.MaxConcurrency, maxConcurrency)
	}
	if b.NumWarmups < 0 || b.NumWarmups > MaxRequests {
		return fmt.Errorf("vllm_bench.num_warmups = %d: must be in 0..%d", b.NumWarmups, MaxRequests)
	}
	if k == KindOffline {
		switch {
		case b.RequestRate != 0 || b.Burstiness != 0 || b.ConstantGaps:
			return fmt.Errorf("vllm_bench: an offline run (vllm bench throughput) hands every request to the engine at t = 0: request_rate and burstiness do not apply")
		case b.MaxConcurrency != 0:
			return fmt.Errorf("vllm_bench: an offline run has no client concurrency limit (max_concurrency); the engine's max_num_seqs bounds it")
		case b.NumWarmups != 0:
			return fmt.Errorf("vllm_bench: an offline run has no warm-up requests (num_warmups)")
		}
	}
	return nil
}

// LoadDataset reads the ShareGPT file of a vllm-bench or offline workload (once). Relative paths
// resolve against the workload file's directory.
func (s *Spec) LoadDataset() error {
	b := s.VLLM
	if b == nil || b.Dataset != "sharegpt" || b.shareGPT != nil {
		return nil
	}
	p := b.DatasetPath
	if !filepath.IsAbs(p) && s.dir != "" {
		p = filepath.Join(s.dir, p)
	}
	f, err := fsutil.Open(p, MaxShareGPTBytes)
	if err != nil {
		return fmt.Errorf("vllm_bench.dataset_path: %w", err)
	}
	defer f.Close()
	pairs, err := ParseShareGPT(f, p, ShareGPTOptions{CharsPerToken: b.charsPerToken(), SpecialTokens: b.Special()})
	if err != nil {
		return err
	}
	b.shareGPT = pairs
	return nil
}

// DatasetNotes says what the dataset approximates (ShareGPT token estimates, top-up duplicates),
// for the user to read; nil for the other kinds.
func (s *Spec) DatasetNotes() ([]string, error) {
	if s.VLLM == nil {
		return nil, nil
	}
	if err := s.LoadDataset(); err != nil {
		return nil, err
	}
	_, notes, err := s.VLLM.dataset()
	return notes, err
}

// SetShareGPT gives a sharegpt workload its parsed file directly (tests, fuzzing).
func (b *VLLMBench) SetShareGPT(p []ShareGPTPair) { b.shareGPT = p }

// benchReq is one request of a vLLM benchmark run: the engine's view (Request: At is the offset
// from the measured run's start) and the prompt tokens the benchmark counts.
type benchReq struct {
	Request
	counted int
}

// dataset draws the run's prompts, in send order, and the dataset's notes.
func (b *VLLMBench) dataset() ([]BenchPrompt, []string, error) {
	n := b.N()
	switch b.Dataset {
	case "random":
		// vLLM draws every input length, then every output length, then the offsets, from one
		// numpy default_rng(seed); here one PCG stream in the same order.
		rng := rand.New(rand.NewPCG(b.Seed, streamLengths))
		inLo, inHi, outLo, outHi := b.RandomRanges()
		out := make([]BenchPrompt, n)
		sp := b.Special()
		for i := range out {
			out[i].Tokens = b.PrefixLen + inLo + rng.IntN(inHi-inLo+1)
			out[i].EngineTokens = out[i].Tokens + sp
		}
		for i := range out {
			out[i].OutputTokens = outLo + rng.IntN(outHi-outLo+1)
		}
		return out, nil, nil
	case "sharegpt":
		if b.shareGPT == nil {
			return nil, nil, fmt.Errorf("vllm_bench: the ShareGPT file %s has not been read (LoadDataset)", b.DatasetPath)
		}
		return SampleShareGPT(b.shareGPT, ShareGPTSample{N: n, Seed: b.Seed, OutputLen: b.OutputLen, DisableShuffle: b.DisableShuffle, NoOversample: b.NoOversample})
	case "list":
		p := b.prompts
		if len(p) > n {
			p = p[:n]
		}
		return p, nil, nil
	}
	return nil, nil, fmt.Errorf("vllm_bench.dataset = %q: no prompts", b.Dataset)
}

// Group ids live above every generated prompt index.
const groupIDBase = promptIDBase | 1<<40

// benchRequests turns the dataset into engine requests with arrival offsets.
func (b *VLLMBench) benchRequests(k Kind) ([]benchReq, []string, error) {
	ps, notes, err := b.dataset()
	if err != nil {
		return nil, nil, err
	}
	at := make([]vtime.Duration, len(ps))
	if k == KindVLLMBench {
		at = b.sendOffsets(len(ps))
	}
	shared := 0
	if b.Dataset != "sharegpt" && b.PrefixLen > 0 {
		// The random prefix is drawn once and leads every prompt, after the tokenizer's special
		// tokens: the whole shared part is special + prefix tokens. (A list recorded from a random
		// run keeps its command's prefix.)
		shared = b.Special() + b.PrefixLen
	}
	out := make([]benchReq, len(ps))
	for i, p := range ps {
		q := &out[i]
		q.counted = p.Tokens
		q.InputTokens = p.EngineTokens
		if q.InputTokens == 0 {
			q.InputTokens = p.Tokens
		}
		q.OutputTokens = p.OutputTokens
		q.PromptID = promptIDBase | uint64(i+1)
		if p.Group > 0 {
			q.PromptID = groupIDBase | uint64(p.Group)
		}
		if shared > 0 {
			q.PrefixID = prefixIDBase | 1
			q.PrefixTokens = min(shared, q.InputTokens)
		}
		q.At = vtime.Time(at[i])
	}
	return out, notes, nil
}

// sendOffsets is vLLM's request schedule (vllm/benchmarks/serve.py, get_request): gaps drawn
// from Gamma(shape = burstiness, scale = 1 / (rate x burstiness)) (exponential at burstiness 1;
// 1 / rate each for burstiness inf), summed, then scaled so the last request is sent at N / rate.
// The first request waits its own gap too. Rate inf: every offset is 0.
func (b *VLLMBench) sendOffsets(n int) []vtime.Duration {
	out := make([]vtime.Duration, n)
	if b.RequestRate == 0 || n == 0 {
		return out
	}
	rate := b.RequestRate
	rng := rand.New(rand.NewPCG(b.Seed, streamArrivals))
	shape := b.burst()
	theta := 1 / (rate * shape)
	cum := make([]float64, n)
	var t float64
	for i := range cum {
		if b.ConstantGaps {
			t += 1 / rate
		} else {
			t += gammaSample(rng, shape) * theta
		}
		cum[i] = t
	}
	scale := 1.0
	if t > 0 {
		scale = float64(n) / rate / t
	}
	for i, c := range cum {
		out[i] = vtime.FromSeconds(c * scale)
	}
	return out
}

// maxRequestTokens is the longest prompt + output the run sends (the engine's view).
func (b *VLLMBench) maxRequestTokens() int {
	switch b.Dataset {
	case "random":
		_, inHi, _, outHi := b.RandomRanges()
		return b.Special() + b.PrefixLen + inHi + outHi
	}
	ps, _, err := b.dataset()
	if err != nil {
		return 0
	}
	m := 0
	for _, p := range ps {
		m = max(m, max(p.Tokens, p.EngineTokens)+p.OutputTokens)
	}
	return m
}

// describe is the one-line summary of a vLLM benchmark run.
func (b *VLLMBench) describe(k Kind) string {
	var ds string
	switch b.Dataset {
	case "random":
		inLo, inHi, outLo, outHi := b.RandomRanges()
		ds = fmt.Sprintf("random dataset, input %s + %d special, output %s tokens", span(b.PrefixLen+inLo, b.PrefixLen+inHi), b.Special(), span(outLo, outHi))
		if b.PrefixLen > 0 {
			ds += fmt.Sprintf(", %d-token shared prefix", b.PrefixLen)
		}
	case "sharegpt":
		ds = "ShareGPT " + filepath.Base(b.DatasetPath)
		if b.OutputLen > 0 {
			ds += fmt.Sprintf(", output %d tokens", b.OutputLen)
		}
	case "list":
		inLo, inHi, outLo, outHi := math.MaxInt, 0, math.MaxInt, 0
		for _, p := range b.prompts {
			inLo, inHi = min(inLo, p.Tokens), max(inHi, p.Tokens)
			outLo, outHi = min(outLo, p.OutputTokens), max(outHi, p.OutputTokens)
		}
		ds = fmt.Sprintf("recorded lengths, input %s, output %s tokens", span(inLo, inHi), span(outLo, outHi))
		if b.PrefixLen > 0 {
			ds += fmt.Sprintf(", %d-token shared prefix", b.PrefixLen)
		}
	}
	parts := []string{fmt.Sprintf("%d prompts, %s", b.N(), ds)}
	if k == KindOffline {
		return "vllm bench throughput (offline: all requests at t = 0, no API server): " + strings.Join(parts, "; ") + fmt.Sprintf("; --seed %d", b.Seed)
	}
	rate := "rate inf (all at t = 0)"
	if b.RequestRate > 0 {
		proc := "Poisson"
		switch {
		case b.ConstantGaps:
			proc = "constant gaps"
		case b.burst() != 1:
			proc = fmt.Sprintf("gamma, burstiness %g", b.burst())
		}
		rate = fmt.Sprintf("rate %g req/s (%s)", b.RequestRate, proc)
	}
	parts = append(parts, rate)
	if b.MaxConcurrency > 0 {
		parts = append(parts, fmt.Sprintf("max concurrency %d", b.MaxConcurrency))
	}
	warm := fmt.Sprintf("%d warm-ups", b.NumWarmups)
	if !b.NoReadyCheck {
		warm = "ready check + " + warm
	}
	parts = append(parts, warm, fmt.Sprintf("--seed %d", b.Seed))
	return "vllm bench serve: " + strings.Join(parts, "; ")
}

func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}
