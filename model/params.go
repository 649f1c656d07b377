package model

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// ParamID names one calibratable constant of the memory or step-time model.
type ParamID int

// The parameter table. Every performance constant that is not a published fact is here, with a
// unit, a prior, bounds and a physical meaning (see Table). Calibration moves these and nothing else.
const (
	// Memory model (reference/vllm-engine.md section 1).
	PActivationBuffers ParamID = iota // activation peak of the profile run, in hidden-size bf16 buffers per batched token
	PNonTorchGiB                      // NCCL buffers, workspaces, CUDA context, indexer logits workspace
	PCUDAGraphGiB                     // vLLM's CUDA-graph memory estimate
	PStatePageScale                   // vLLM's recurrent-state page relative to the state tensors we count

	// Step time: memory and compute efficiency.
	PMemBWEff      // achieved fraction of peak memory bandwidth for streaming weights and KV
	PGEMMEff       // achieved fraction of dense tensor-core peak for large GEMMs
	PGEMMHalfM     // rows per GEMM (tokens per expert) at which a grouped GEMM reaches half its large-M efficiency
	PAttnEff       // achieved fraction of peak for attention math
	PIndexerEff    // achieved fraction of fp8 peak for the sparse-attention indexer's scoring
	PLinearAttnEff // achieved fraction of bf16 peak for the linear-attention chunked scan
	PActPasses     // elementwise activation traffic per layer, in reads+writes of the hidden state

	// Collectives.
	PARLatencyMult // multiplier on the ring all-reduce latency 2(n-1) x link hop latency
	PARBWEff       // achieved fraction of link bandwidth for all-reduce payload

	// Overheads.
	PStepOverheadUS   // fixed GPU-side cost per step: launches, sampling, synchronisation
	PCPUStepUS        // CPU scheduling and input preparation per step
	PCPUPerReqUS      // additional CPU work per scheduled request per step
	PFrontendUSPerTok // API-server cost per prompt token before the engine sees a request (tokenisation)
	PFrontendMSPerReq // API-server cost per request, independent of its length

	// Speculative decoding acceptance (reference/vllm-engine.md section 5).
	PAcceptP1    // conditional acceptance probability of the first draft position
	PAcceptDecay // multiplicative decay of the conditional acceptance per further position

	// Benchmark protocol.
	PReadyTimeoutS // how long the benchmark waits for its readiness gate before starting the window anyway

	NumParams
)

// ParamDef documents one parameter.
type ParamDef struct {
	ID      ParamID
	Name    string // TOML key
	Unit    string
	Prior   float64
	Lo, Hi  float64
	Meaning string
	Term    string // which cost or memory term uses it
	// Log: calibrate in log space (positive scale parameters); otherwise logit on [Lo, Hi].
	Log bool
}

// Table lists every parameter, indexed by ParamID.
var Table = [NumParams]ParamDef{
	{PActivationBuffers, "activation_buffers", "buffers/token", 24, 4, 96,
		"peak live activations of vLLM's profile run, counted in hidden-size bf16 vectors per batched token", "memory: non-KV reserve", true},
	{PNonTorchGiB, "non_torch_gib", "GiB", 2.0, 0.3, 8,
		"memory outside PyTorch's allocator: CUDA context, NCCL buffers, attention and indexer workspaces", "memory: non-KV reserve", true},
	{PCUDAGraphGiB, "cudagraph_gib", "GiB", 1.0, 0.1, 6,
		"vLLM's estimate of CUDA-graph pool memory, subtracted before sizing the KV cache", "memory: non-KV reserve", true},
	{PStatePageScale, "state_page_scale", "x", 1.0, 0.5, 2.5,
		"size of vLLM's per-layer recurrent-state page relative to the state and conv tensors servesim counts (layouts, extra buffers); it sets the hybrid block size and so the prefix-cache granularity", "memory: KV layout (hybrid block size)", true},

	{PMemBWEff, "mem_bw_eff", "fraction", 0.80, 0.5, 0.95,
		"achieved fraction of peak device-memory bandwidth when streaming weights, KV and state", "weights read, KV/state traffic", false},
	{PGEMMEff, "gemm_eff", "fraction", 0.40, 0.2, 0.9,
		"achieved fraction of the dtype's dense tensor-core peak for large GEMMs", "compute", false},
	{PGEMMHalfM, "gemm_half_m", "rows", 64, 4, 1024,
		"GEMM rows (tokens per expert or per batch) at which efficiency reaches half of gemm_eff; small-M GEMMs run far below peak", "compute", true},
	{PAttnEff, "attn_eff", "fraction", 0.7, 0.05, 0.95,
		"achieved fraction of the roofline (max of KV bytes / bandwidth and FLOPs / peak) for attention kernels: dense, MLA, and sparse MLA gathering its top-k tokens", "attention/indexer", false},
	{PIndexerEff, "indexer_eff", "fraction", 0.5, 0.05, 0.95,
		"achieved fraction of fp8 peak for the DSA lightning indexer (fp8 logits GEMM over all earlier compressed keys)", "attention/indexer", false},
	{PLinearAttnEff, "linear_attn_eff", "fraction", 0.03, 0.002, 0.6,
		"achieved fraction of bf16 peak for the chunked linear-attention (KDA/GDN) scan in prefill", "state traffic / linear attention", false},
	{PActPasses, "act_passes", "passes/layer", 32, 2, 48,
		"elementwise traffic per layer (norms, activations, residuals, routing) in reads+writes of a hidden-size bf16 vector per token", "compute (memory-bound elementwise)", true},

	{PARLatencyMult, "ar_latency_mult", "x", 0.5, 0.2, 6,
		"all-reduce latency as a multiple of the ring's 2(n-1) peer hops of the link's latency", "all-reduce", true},
	{PARBWEff, "ar_bw_eff", "fraction", 0.70, 0.2, 0.95,
		"achieved fraction of the GPU-GPU link bandwidth for the all-reduce payload", "all-reduce", false},

	{PStepOverheadUS, "step_overhead_us", "us", 400, 50, 3000,
		"fixed GPU-side time per engine step: kernel launches and graph replay, sampling, synchronisation", "overhead", true},
	{PCPUStepUS, "cpu_step_us", "us", 600, 100, 5000,
		"CPU time per step for scheduling and input preparation (overlapped with the GPU under async scheduling)", "overhead (CPU)", true},
	{PCPUPerReqUS, "cpu_per_req_us", "us", 12, 1, 100,
		"extra CPU time per scheduled request per step (block tables, detokenisation, output processing)", "overhead (CPU)", true},
	{PFrontendUSPerTok, "frontend_us_per_token", "us/token", 1.5, 0.1, 10,
		"API-server time per prompt token before the engine sees the request (tokenisation)", "frontend", true},
	{PFrontendMSPerReq, "frontend_ms_per_request", "ms", 5, 0.1, 300,
		"API-server time per request before the engine sees it (HTTP and JSON handling, chat template, request setup); one process serves requests one at a time", "frontend", true},

	{PAcceptP1, "accept_p1", "probability", 0.75, 0.2, 0.98,
		"probability that the first draft token is accepted", "speculative acceptance", false},
	{PAcceptDecay, "accept_decay", "x/position", 0.90, 0.5, 1.0,
		"factor applied to the conditional acceptance probability for each later draft position", "speculative acceptance", false},

	{PReadyTimeoutS, "ready_timeout_s", "s", 2.0, 0.1, 30,
		"llm-inference-bench's wait for its readiness gate (C running, none waiting) before it starts the window anyway; matters only when C > max_num_seqs", "protocol: window start of queued cells", true},
}

// Params holds one value per parameter, indexed by ParamID.
type Params [NumParams]float64

// Priors returns every parameter at its prior.
func Priors() Params {
	var p Params
	for i := range Table {
		p[i] = Table[i].Prior
	}
	return p
}

// ByName finds a parameter by its TOML key.
func ByName(name string) (ParamID, bool) {
	for i := range Table {
		if Table[i].Name == name {
			return Table[i].ID, true
		}
	}
	return 0, false
}

// Names lists the parameter keys in table order.
func Names() []string {
	out := make([]string, NumParams)
	for i := range Table {
		out[i] = Table[i].Name
	}
	return out
}

// Validate checks every value is finite and within its bounds.
func (p *Params) Validate() error {
	for i := range Table {
		d := &Table[i]
		v := p[i]
		if math.IsNaN(v) || math.IsInf(v, 0) || v < d.Lo || v > d.Hi {
			return fmt.Errorf("params.%s = %v %s: must be within [%v, %v]", d.Name, v, d.Unit, d.Lo, d.Hi)
		}
	}
	return nil
}

// Set assigns values from a name->value map, rejecting unknown names.
func (p *Params) Set(m map[string]float64) error {
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
func (p *Params) Map() map[string]float64 {
	m := make(map[string]float64, NumParams)
	for i := range Table {
		m[Table[i].Name] = p[i]
	}
	return m
}

// AcceptanceCDF returns, for k draft positions, P(accepted >= i) for i = 1..k: the unconditional
// per-position rates vLLM reports. Conditional rate at position i is p1 x decay^(i-1).
func (p *Params) AcceptanceCDF(k int) []float64 {
	out := make([]float64, k)
	cond := p[PAcceptP1]
	run := 1.0
	for i := 0; i < k; i++ {
		run *= math.Min(cond, 1)
		out[i] = run
		cond *= p[PAcceptDecay]
	}
	return out
}

// MeanEmitted is tau, the expected tokens emitted per decode step with k drafts:
// 1 + sum_i P(accepted >= i).
func (p *Params) MeanEmitted(k int) float64 {
	t := 1.0
	for _, v := range p.AcceptanceCDF(k) {
		t += v
	}
	return t
}
