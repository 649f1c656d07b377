package param

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// ID names one calibratable constant of the memory or step-time model.
type ID int

// The parameters. Every performance constant that is not a published fact is here, with a unit, a
// prior, bounds and a physical meaning (see Defs). Calibration moves these and nothing else.
const (
	// Memory model (vLLM vllm/v1/worker/gpu_worker.py, determine_available_memory).
	ActivationBuffers ID = iota // activation peak of the profile run, in hidden-size bf16 buffers per batched token
	NonTorchGiB                 // NCCL buffers, workspaces, CUDA context, indexer logits workspace
	CUDAGraphGiB                // vLLM's CUDA-graph memory estimate
	StatePageScale              // vLLM's recurrent-state page relative to the state tensors we count

	// Step time: memory and compute efficiency.
	MemBWEff      // achieved fraction of peak memory bandwidth for streaming weights and KV
	GEMMEff       // achieved fraction of dense tensor-core peak for large GEMMs
	GEMMHalfM     // rows per GEMM (tokens per expert) at which a grouped GEMM reaches half its large-M efficiency
	AttnEff       // achieved fraction of peak for attention math
	IndexerEff    // achieved fraction of fp8 peak for the sparse-attention indexer's scoring
	LinearAttnEff // achieved fraction of bf16 peak for the linear-attention chunked scan
	ActPasses     // elementwise activation traffic per layer, in reads+writes of the hidden state

	// Collectives.
	ARLatencyMult // multiplier on the ring all-reduce latency 2(n-1) x link hop latency
	ARBWEff       // achieved fraction of link bandwidth for all-reduce payload

	// Overheads.
	StepOverheadUS   // fixed GPU-side cost per step: launches, sampling, synchronisation
	CPUStepUS        // CPU scheduling and input preparation per step
	CPUPerReqUS      // additional CPU work per scheduled request per step
	FrontendUSPerTok // API-server cost per prompt token before the engine sees a request (tokenisation)
	FrontendMSPerReq // API-server cost per request, independent of its length

	// Speculative decoding acceptance (vLLM vllm/v1/spec_decode/metrics.py reports the mean
	// acceptance length and the per-position rates).
	AcceptTau          // mean acceptance length (tokens emitted per verify step) with 7 drafts, early in an output
	AcceptDecay        // multiplicative decay of the conditional acceptance per further draft position
	AcceptLateRatio    // mean acceptance length late in an output, relative to AcceptTau
	AcceptSwitchTokens // output position from which the late acceptance applies

	// MoE routing.
	RoutingAlpha // concentration of expert popularity (gamma shape); infinity is uniform routing

	// Speculative decoding's CPU drafter.
	NgramNsPerToken // ngram prompt lookup: CPU time per token of a request's context scanned per step

	// Count is the number of parameters.
	Count
)

// Level is what a parameter belongs to: a fit transfers to another deployment only the
// parameters of the levels the two share.
type Level string

const (
	// LevelGPU: the GPU or GPU generation and its links (bandwidth and GEMM efficiencies,
	// collectives).
	LevelGPU Level = "gpu"
	// LevelEngine: the serving engine and its version (memory reserves, kernels, overheads, API
	// server).
	LevelEngine Level = "engine"
	// LevelModel: the model and the text it produces (elementwise work per layer, speculative
	// acceptance, expert routing).
	LevelModel Level = "model"
)

// Def documents one parameter.
type Def struct {
	ID      ID
	Name    string // TOML key
	Unit    string
	Prior   float64
	Lo, Hi  float64
	Meaning string
	Term    string // which cost or memory term uses it
	// Log: calibrate in log space (positive scale parameters); otherwise logit on [Lo, Hi].
	Log   bool
	Level Level
	// Scan: the parameter sets an integer (a block size), so the model's outputs are piecewise
	// constant in it; a fit chooses it on a grid instead of by finite differences.
	Scan bool
}

// defs lists every parameter, indexed by ID (a fresh table each call: no package-level state).
func defs() [Count]Def {
	return [Count]Def{
		{ActivationBuffers, "activation_buffers", "buffers/token", 24, 4, 96,
			"peak live activations of vLLM's profile run, counted in hidden-size bf16 vectors per batched token", "memory: non-KV reserve", true, LevelEngine, false},
		{NonTorchGiB, "non_torch_gib", "GiB", 2.0, 0.3, 8,
			"memory outside PyTorch's allocator: CUDA context, NCCL buffers, attention and indexer workspaces", "memory: non-KV reserve", true, LevelEngine, false},
		{CUDAGraphGiB, "cudagraph_gib", "GiB", 1.0, 0.1, 6,
			"vLLM's estimate of CUDA-graph pool memory, subtracted before sizing the KV cache", "memory: non-KV reserve", true, LevelEngine, false},
		{StatePageScale, "state_page_scale", "x", 1.0, 0.5, 2.5,
			"size of vLLM's per-layer recurrent-state page relative to the state and conv tensors servesim counts (layouts, extra buffers); it sets the hybrid block size and so the prefix-cache granularity", "memory: KV layout (hybrid block size)", true, LevelEngine, true},

		{MemBWEff, "mem_bw_eff", "fraction", 0.80, 0.5, 0.95,
			"achieved fraction of peak device-memory bandwidth when streaming weights, KV and state", "weights read, KV/state traffic", false, LevelGPU, false},
		{GEMMEff, "gemm_eff", "fraction", 0.40, 0.2, 0.9,
			"achieved fraction of the dtype's dense tensor-core peak for large GEMMs", "compute", false, LevelGPU, false},
		{GEMMHalfM, "gemm_half_m", "rows", 64, 4, 1024,
			"GEMM rows (tokens per expert or per batch) at which efficiency reaches half of gemm_eff; small-M GEMMs run far below peak", "compute", true, LevelGPU, false},
		{AttnEff, "attn_eff", "fraction", 0.7, 0.05, 0.95,
			"achieved fraction of the roofline (max of KV bytes / bandwidth and FLOPs / peak) for attention kernels: dense, MLA, and sparse MLA gathering its top-k tokens", "attention/indexer", false, LevelEngine, false},
		{IndexerEff, "indexer_eff", "fraction", 0.5, 0.05, 0.95,
			"achieved fraction of fp8 peak for the DSA lightning indexer (fp8 logits GEMM over all earlier compressed keys)", "attention/indexer", false, LevelEngine, false},
		{LinearAttnEff, "linear_attn_eff", "fraction", 0.03, 0.002, 0.6,
			"achieved fraction of bf16 peak for the chunked linear-attention (KDA/GDN) scan in prefill", "state traffic / linear attention", false, LevelEngine, false},
		{ActPasses, "act_passes", "passes/layer", 32, 2, 48,
			"elementwise traffic per layer (norms, activations, residuals, routing) in reads+writes of a hidden-size bf16 vector per token", "compute (memory-bound elementwise)", true, LevelModel, false},

		{ARLatencyMult, "ar_latency_mult", "x", 0.25, 0.1, 1.5,
			"latency of one small all-reduce as a multiple of a ring's 2(n-1) peer hops of the link's latency; vLLM's custom one-shot all-reduce (each rank reads its peers' buffers in one step) makes it about a quarter of the ring's, about 15 us on 4 PCIe GPUs", "all-reduce", true, LevelGPU, false},
		{ARBWEff, "ar_bw_eff", "fraction", 0.70, 0.2, 0.95,
			"achieved fraction of the GPU-GPU link bandwidth for the all-reduce payload", "all-reduce", false, LevelGPU, false},

		{StepOverheadUS, "step_overhead_us", "us", 400, 50, 3000,
			"fixed GPU-side time per engine step: kernel launches and graph replay, sampling, synchronisation", "overhead", true, LevelEngine, false},
		{CPUStepUS, "cpu_step_us", "us", 600, 100, 5000,
			"CPU time per step for scheduling and input preparation (overlapped with the GPU under async scheduling)", "overhead (CPU)", true, LevelEngine, false},
		{CPUPerReqUS, "cpu_per_req_us", "us", 12, 1, 100,
			"extra CPU time per scheduled request per step (block tables, detokenisation, output processing)", "overhead (CPU)", true, LevelEngine, false},
		{FrontendUSPerTok, "frontend_us_per_token", "us/token", 1.5, 0.1, 10,
			"API-server time per prompt token before the engine sees the request (tokenisation)", "frontend", true, LevelEngine, false},
		{FrontendMSPerReq, "frontend_ms_per_request", "ms", 5, 0.1, 300,
			"API-server time per request before the engine sees it (HTTP and JSON handling, chat template, request setup); one process serves requests one at a time", "frontend", true, LevelEngine, false},

		{AcceptTau, "accept_tau", "tokens/step", 2.45, 2.2, 2.8,
			"mean acceptance length with 7 drafts early in an output: tokens a request emits per verify step, 1 + accepted drafts, as vLLM's spec-decode metrics report it; public GLM-5.3-Flash + DFlash2 runs show about 2.4 on prose, and the band lets the benchmark's text differ by about 15 %", "speculative acceptance", false, LevelModel, false},
		{AcceptDecay, "accept_decay", "x/position", 0.90, 0.6, 1.0,
			"factor applied to the conditional acceptance probability for each later draft position (the shape of the per-position rates; accept_tau sets their level)", "speculative acceptance", false, LevelModel, false},
		{AcceptLateRatio, "accept_late_ratio", "x", 1.0, 0.7, 1.1,
			"mean acceptance length from output position accept_switch_tokens on, relative to accept_tau: a reasoning model's answer after its reasoning part drafts differently (content, so a property of the model and the prompt)", "speculative acceptance", false, LevelModel, false},
		{AcceptSwitchTokens, "accept_switch_tokens", "tokens", 2048, 256, 8192,
			"output position (tokens generated) from which accept_late_ratio applies: where a typical output passes from reasoning to its answer", "speculative acceptance", true, LevelModel, false},

		{RoutingAlpha, "routing_alpha", "x", 1.0, 0.2, 1000,
			"concentration of expert routing: per-expert popularity is gamma-distributed with this shape (coefficient of variation 1/sqrt(alpha)), so a batch of T tokens touches E (1 - (1 + T topk / (E alpha))^-alpha) distinct experts per layer instead of E (1 - (1 - topk/E)^T) (uniform, alpha -> infinity); similar tokens, such as requests with one prompt, route to fewer experts", "weights read (MoE expert coverage)", true, LevelModel, false},

		{NgramNsPerToken, "ngram_ns_per_token", "ns/token", 2, 0.1, 50,
			"CPU time of vLLM's ngram proposer (a compiled KMP search for the last prompt_lookup tokens) per token of a request's context, per request and step; it runs between steps with asynchronous scheduling off", "drafter (ngram, CPU)", true, LevelEngine, false},
	}
}

// Def returns the parameter's definition (a copy). It panics on an ID outside 0..Count-1.
func (id ID) Def() Def {
	t := defs()
	return t[id]
}

// Defs returns every definition in ID order (a fresh copy the caller may change).
func Defs() []Def {
	t := defs()
	return t[:]
}

// Values holds one value per parameter, indexed by ID.
type Values [Count]float64

// Priors returns every parameter at its prior.
func Priors() Values {
	var p Values
	for i, d := range defs() {
		p[i] = d.Prior
	}
	return p
}

// ByName finds a parameter by its TOML key.
func ByName(name string) (ID, bool) {
	for _, d := range defs() {
		if d.Name == name {
			return d.ID, true
		}
	}
	return 0, false
}

// Names lists the parameter keys in ID order.
func Names() []string {
	out := make([]string, Count)
	for i, d := range defs() {
		out[i] = d.Name
	}
	return out
}

// Validate checks every value is finite and within its bounds.
func (p *Values) Validate() error {
	for i, d := range defs() {
		v := p[i]
		if math.IsNaN(v) || math.IsInf(v, 0) || v < d.Lo || v > d.Hi {
			return fmt.Errorf("params.%s = %v %s: must be within [%v, %v]", d.Name, v, d.Unit, d.Lo, d.Hi)
		}
	}
	return nil
}

// Set assigns values from a name->value map, rejecting unknown names.
func (p *Values) Set(m map[string]float64) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		id, ok := ByName(k)
		if !ok {
			return fmt.Errorf("params.%s: unknown parameter (known: %s)", k, strings.Join(Names(), ", "))
		}
		p[id] = m[k]
	}
	return nil
}

// Map returns the values keyed by name.
func (p *Values) Map() map[string]float64 {
	m := make(map[string]float64, Count)
	for i, d := range defs() {
		m[d.Name] = p[i]
	}
	return m
}

// ReferenceDrafts is the number of draft tokens at which AcceptTau is given (DFlash's 7, as the
// public figures for GLM-5.3-Flash report it).
const ReferenceDrafts = 7

// meanLength is 1 + sum over i = 1..k of prod_{j<=i} min(1, p1 decay^(j-1)).
func meanLength(p1, decay float64, k int) float64 {
	t, run, cond := 1.0, 1.0, p1
	for i := 0; i < k; i++ {
		run *= math.Min(cond, 1)
		t += run
		cond *= decay
	}
	return t
}

// FirstAcceptance is the conditional acceptance probability of the first draft position that
// gives a mean acceptance length tau with ReferenceDrafts drafts and the decay (bisection: the
// length grows with p1). A tau beyond what p1 in [0, 1] reaches gives 0 or 1.
func FirstAcceptance(tau, decay float64) float64 {
	lo, hi := 0.0, 1.0
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if meanLength(mid, decay, ReferenceDrafts) < tau {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// cdf returns P(accepted >= i) for i = 1..k with conditional rates p1 x decay^(i-1).
func cdf(p1, decay float64, k int) []float64 {
	out := make([]float64, k)
	cond, run := p1, 1.0
	for i := 0; i < k; i++ {
		run *= math.Min(cond, 1)
		out[i] = run
		cond *= decay
	}
	return out
}

// AcceptanceCDF returns, for k draft positions, P(accepted >= i) for i = 1..k early in an output:
// the unconditional per-position rates vLLM reports. The conditional rate at position i is p1 x
// decay^(i-1), with p1 = FirstAcceptance(accept_tau, accept_decay).
func (p *Values) AcceptanceCDF(k int) []float64 {
	return cdf(FirstAcceptance(p[AcceptTau], p[AcceptDecay]), p[AcceptDecay], k)
}

// LateAcceptanceCDF is AcceptanceCDF from output position accept_switch_tokens on, where the mean
// acceptance length is accept_late_ratio x accept_tau.
func (p *Values) LateAcceptanceCDF(k int) []float64 {
	return cdf(FirstAcceptance(p[AcceptTau]*p[AcceptLateRatio], p[AcceptDecay]), p[AcceptDecay], k)
}

// MeanEmitted is tau, the expected tokens emitted per decode step with k drafts early in an
// output: 1 + sum_i P(accepted >= i).
func (p *Values) MeanEmitted(k int) float64 {
	t := 1.0
	for _, v := range p.AcceptanceCDF(k) {
		t += v
	}
	return t
}
