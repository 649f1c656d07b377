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

	// Speculative decoding acceptance (vLLM vllm/v1/spec_decode/metrics.py reports the per-position rates).
	AcceptP1    // conditional acceptance probability of the first draft position
	AcceptDecay // multiplicative decay of the conditional acceptance per further position

	// Benchmark protocol.
	ReadyTimeoutS // how long the benchmark waits for its readiness gate before starting the window anyway

	// Count is the number of parameters.
	Count
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
	Log bool
}

// defs lists every parameter, indexed by ID (a fresh table each call: no package-level state).
func defs() [Count]Def {
	return [Count]Def{
		{ActivationBuffers, "activation_buffers", "buffers/token", 24, 4, 96,
			"peak live activations of vLLM's profile run, counted in hidden-size bf16 vectors per batched token", "memory: non-KV reserve", true},
		{NonTorchGiB, "non_torch_gib", "GiB", 2.0, 0.3, 8,
			"memory outside PyTorch's allocator: CUDA context, NCCL buffers, attention and indexer workspaces", "memory: non-KV reserve", true},
		{CUDAGraphGiB, "cudagraph_gib", "GiB", 1.0, 0.1, 6,
			"vLLM's estimate of CUDA-graph pool memory, subtracted before sizing the KV cache", "memory: non-KV reserve", true},
		{StatePageScale, "state_page_scale", "x", 1.0, 0.5, 2.5,
			"size of vLLM's per-layer recurrent-state page relative to the state and conv tensors servesim counts (layouts, extra buffers); it sets the hybrid block size and so the prefix-cache granularity", "memory: KV layout (hybrid block size)", true},

		{MemBWEff, "mem_bw_eff", "fraction", 0.80, 0.5, 0.95,
			"achieved fraction of peak device-memory bandwidth when streaming weights, KV and state", "weights read, KV/state traffic", false},
		{GEMMEff, "gemm_eff", "fraction", 0.40, 0.2, 0.9,
			"achieved fraction of the dtype's dense tensor-core peak for large GEMMs", "compute", false},
		{GEMMHalfM, "gemm_half_m", "rows", 64, 4, 1024,
			"GEMM rows (tokens per expert or per batch) at which efficiency reaches half of gemm_eff; small-M GEMMs run far below peak", "compute", true},
		{AttnEff, "attn_eff", "fraction", 0.7, 0.05, 0.95,
			"achieved fraction of the roofline (max of KV bytes / bandwidth and FLOPs / peak) for attention kernels: dense, MLA, and sparse MLA gathering its top-k tokens", "attention/indexer", false},
		{IndexerEff, "indexer_eff", "fraction", 0.5, 0.05, 0.95,
			"achieved fraction of fp8 peak for the DSA lightning indexer (fp8 logits GEMM over all earlier compressed keys)", "attention/indexer", false},
		{LinearAttnEff, "linear_attn_eff", "fraction", 0.03, 0.002, 0.6,
			"achieved fraction of bf16 peak for the chunked linear-attention (KDA/GDN) scan in prefill", "state traffic / linear attention", false},
		{ActPasses, "act_passes", "passes/layer", 32, 2, 48,
			"elementwise traffic per layer (norms, activations, residuals, routing) in reads+writes of a hidden-size bf16 vector per token", "compute (memory-bound elementwise)", true},

		{ARLatencyMult, "ar_latency_mult", "x", 0.5, 0.2, 6,
			"all-reduce latency as a multiple of the ring's 2(n-1) peer hops of the link's latency", "all-reduce", true},
		{ARBWEff, "ar_bw_eff", "fraction", 0.70, 0.2, 0.95,
			"achieved fraction of the GPU-GPU link bandwidth for the all-reduce payload", "all-reduce", false},

		{StepOverheadUS, "step_overhead_us", "us", 400, 50, 3000,
			"fixed GPU-side time per engine step: kernel launches and graph replay, sampling, synchronisation", "overhead", true},
		{CPUStepUS, "cpu_step_us", "us", 600, 100, 5000,
			"CPU time per step for scheduling and input preparation (overlapped with the GPU under async scheduling)", "overhead (CPU)", true},
		{CPUPerReqUS, "cpu_per_req_us", "us", 12, 1, 100,
			"extra CPU time per scheduled request per step (block tables, detokenisation, output processing)", "overhead (CPU)", true},
		{FrontendUSPerTok, "frontend_us_per_token", "us/token", 1.5, 0.1, 10,
			"API-server time per prompt token before the engine sees the request (tokenisation)", "frontend", true},
		{FrontendMSPerReq, "frontend_ms_per_request", "ms", 5, 0.1, 300,
			"API-server time per request before the engine sees it (HTTP and JSON handling, chat template, request setup); one process serves requests one at a time", "frontend", true},

		{AcceptP1, "accept_p1", "probability", 0.75, 0.2, 0.98,
			"probability that the first draft token is accepted", "speculative acceptance", false},
		{AcceptDecay, "accept_decay", "x/position", 0.90, 0.5, 1.0,
			"factor applied to the conditional acceptance probability for each later draft position", "speculative acceptance", false},

		{ReadyTimeoutS, "ready_timeout_s", "s", 2.0, 0.1, 30,
			"llm-inference-bench's wait for its readiness gate (C running, none waiting) before it starts the window anyway; matters only when C > max_num_seqs", "protocol: window start of queued cells", true},
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

// AcceptanceCDF returns, for k draft positions, P(accepted >= i) for i = 1..k: the unconditional
// per-position rates vLLM reports. Conditional rate at position i is p1 x decay^(i-1).
func (p *Values) AcceptanceCDF(k int) []float64 {
	out := make([]float64, k)
	cond := p[AcceptP1]
	run := 1.0
	for i := 0; i < k; i++ {
		run *= math.Min(cond, 1)
		out[i] = run
		cond *= p[AcceptDecay]
	}
	return out
}

// MeanEmitted is tau, the expected tokens emitted per decode step with k drafts:
// 1 + sum_i P(accepted >= i).
func (p *Values) MeanEmitted(k int) float64 {
	t := 1.0
	for _, v := range p.AcceptanceCDF(k) {
		t += v
	}
	return t
}
