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
// prior, bounds, a physical meaning and a level (see Defs). Calibration moves these and nothing else.
const (
	// Memory model (vLLM vllm/v1/worker/gpu_worker.py, determine_available_memory).
	ActivationBuffers      ID = iota // activation peak of the profile run, in hidden-size bf16 buffers per batched token
	NonTorchGiB                      // NCCL buffers, workspaces, CUDA context, indexer logits workspace
	CUDAGraphGiB                     // vLLM's CUDA-graph memory estimate
	StatePageScale                   // vLLM's recurrent-state page relative to the state tensors we count
	SparseWorkspaceEntries           // sparse-MLA long-context workspace, in MLA head entries per token of max_model_len

	// Kernels on the GPU: memory and tensor-core efficiencies (level gpu).
	MemBWEff              // achieved fraction of peak memory bandwidth for streaming weights and KV
	GEMMEffBF16           // achieved fraction of the bf16/fp16 dense tensor-core peak for large GEMMs
	GEMMEffFP8            // achieved fraction of the fp8 dense peak for large GEMMs
	GEMMEffFP4            // achieved fraction of the fp4 dense peak for large GEMMs
	GEMMHalfM             // rows per GEMM (tokens per expert) at which a GEMM reaches half its large-M efficiency
	KernelFixedUS         // fixed time of one GEMM or attention kernel (ramp-up and tail), us
	ElementwiseFixedRatio // fixed time of one small elementwise kernel relative to kernel_fixed_us
	DequantEff            // weight-only quantized GEMMs (Marlin, triton): math rate relative to a bf16 GEMM
	ElementwiseEff        // achieved fraction of memory bandwidth for elementwise kernels (norms, activations)
	AttnPrefillEff        // achieved fraction of the roofline for prefill attention (FlashAttention class)
	AttnDecodeEff         // achieved fraction of the roofline for decode attention (paged KV)
	IndexerEff            // achieved fraction of fp8 peak for the sparse-attention indexer's scoring
	LinearAttnEff         // achieved fraction of bf16 peak for the linear-attention chunked scan
	GEMMBWEffFP8          // weight bandwidth of block-scaled fp8 GEMMs relative to the streaming bandwidth
	SparseDecodeEff       // achieved fraction of bf16 peak for the sparse-MLA decode kernel when compute-bound
	ComputePowerRatio     // compute peaks a card sustains at its board power, relative to the catalog's

	// Collectives (level gpu: the GPU and its links).
	NCCLLatencyUS      // fixed time of an NCCL all-reduce of a large message (bandwidth protocols), us
	NCCLBWEff          // achieved fraction of the link bandwidth for NCCL's ring payload
	NCCLSmallLatencyUS // fixed time of an NCCL all-reduce of a small message (low-latency protocol), us
	CustomARLatencyUS  // latency of one small all-reduce with vLLM's custom kernel, us
	CustomARBWEff      // achieved fraction of the link bandwidth for the custom all-reduce's payload

	// Overheads (level engine).
	StepOverheadUS   // fixed GPU-side cost per step: graph launch, sampling, synchronisation
	CPUStepUS        // CPU scheduling and input preparation per step
	CPUPerReqUS      // additional CPU work per scheduled request per step
	FrontendUSPerTok // API-server cost per prompt token before the engine sees a request (tokenisation)
	FrontendMSPerReq // API-server cost per request, independent of its length

	// The model and the text it produces (level model).
	ActPasses // elementwise traffic per layer beyond the norms, activations and residuals the architecture counts

	// Speculative decoding acceptance (vLLM vllm/v1/spec_decode/metrics.py reports the mean
	// acceptance length and the per-position rates).
	AcceptTau          // mean acceptance length (tokens emitted per verify step) with 7 drafts, early in an output
	AcceptDecay        // multiplicative decay of the conditional acceptance per further draft position
	AcceptLateRatio    // mean acceptance length late in an output, relative to AcceptTau
	AcceptSwitchTokens // output position from which the late acceptance applies
	AcceptOpenRatio    // mean acceptance length in an output's opening, relative to AcceptTau
	AcceptOpenTokens   // output position where the opening's acceptance ends
	MTPAcceptTau       // mean acceptance length of the checkpoint's MTP layer with 3 drafts
	AcceptCodeRatio    // mean acceptance length on a code-writing prompt, relative to prose

	// MoE routing.
	RoutingAlpha     // concentration of expert popularity (gamma shape) for requests with different prompts
	RoutingAlphaSame // the same when every request of a batch has one prompt

	// The workload.
	SamePrompt // share of a batch's requests that carry one and the same prompt (0: all different)
	CodePrompt // share of the requests whose prompt asks for code

	// Speculative decoding's CPU drafter.
	NgramNsPerToken // ngram prompt lookup: CPU time per token of a request's context scanned per step

	// Count is the number of parameters.
	Count
)

// Level is what a parameter belongs to: a fit transfers to another deployment only the
// parameters of the levels the two share.
type Level string

const (
	// LevelGPU: the GPU (or GPU generation) and its links: kernel efficiencies, collectives.
	// Priors per GPU generation (model/hardware); a calibration applies to the GPU it was
	// fitted on, and transfers to GPUs of the same generation.
	LevelGPU Level = "gpu"
	// LevelEngine: the serving engine and its version (memory reserves, overheads, API server).
	// A calibration applies to the same engine version only.
	LevelEngine Level = "engine"
	// LevelModel: the model and the text it produces (elementwise work per layer, speculative
	// acceptance, expert routing). A calibration applies to the same model only.
	LevelModel Level = "model"
	// LevelWorkload: the requests, not the server (one prompt for all, or each its own); set by
	// the benchmark or workload that runs, never fitted.
	LevelWorkload Level = "workload"
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
// Prior is the generic prior; GPU-level parameters take their GPU generation's prior instead
// (model/hardware, GenerationPriors), engine-level ones their engine version's and the elementwise
// passes the model's (model/priors, Of).
func defs() [Count]Def {
	return [Count]Def{
		{ActivationBuffers, "activation_buffers", "buffers/token", 24, 4, 96,
			"peak live activations of vLLM's profile run, counted in hidden-size bf16 vectors per batched token", "memory: non-KV reserve", true, LevelEngine, false},
		{NonTorchGiB, "non_torch_gib", "GiB", 2.0, 0.3, 8,
			"memory outside PyTorch's allocator: CUDA context, NCCL buffers, attention and indexer workspaces", "memory: non-KV reserve", true, LevelEngine, false},
		{CUDAGraphGiB, "cudagraph_gib", "GiB", 1.0, 0.1, 12,
			"vLLM's estimate of CUDA-graph pool memory for its full default list of capture sizes (51 sizes, 1 to 512 tokens), subtracted before sizing the KV cache; a deployment pays it in proportion to the sizes it captures (more with speculative decoding, whose decode batches are 1 + k tokens a request)", "memory: non-KV reserve", true, LevelEngine, false},
		{StatePageScale, "state_page_scale", "x", 1.0, 0.5, 2.5,
			"size of vLLM's per-layer recurrent-state page relative to the state and conv tensors servesim counts (layouts, extra buffers); it sets the hybrid block size and so the prefix-cache granularity", "memory: KV layout (hybrid block size)", true, LevelEngine, true},
		{SparseWorkspaceEntries, "sparse_workspace_entries", "entries/token", 5, 0.5, 12,
			"sparse-MLA attention's long-context workspace: the bf16 buffer the sparse prefill gathers a request's cached latent into (and the indexer's key buffer sized to fit in it), in 576-wide MLA head entries per token of max_model_len; a rank with decode context parallel holds its share of the context (prior: vLLM's FlashMLA-sparse backend, 5 x max_model_len entries)", "memory: non-KV reserve", true, LevelEngine, false},

		{MemBWEff, "mem_bw_eff", "fraction", 0.80, 0.5, 0.98,
			"achieved fraction of peak device-memory bandwidth when streaming weights, KV and state", "weights read, KV/state traffic", false, LevelGPU, false},
		{GEMMEffBF16, "gemm_eff_bf16", "fraction", 0.70, 0.2, 0.95,
			"achieved fraction of the bf16/fp16 dense tensor-core peak for large GEMMs (many rows)", "compute", false, LevelGPU, false},
		{GEMMEffFP8, "gemm_eff_fp8", "fraction", 0.60, 0.15, 0.95,
			"achieved fraction of the fp8 dense tensor-core peak for large GEMMs (block-scaled fp8 included)", "compute", false, LevelGPU, false},
		{GEMMEffFP4, "gemm_eff_fp4", "fraction", 0.50, 0.1, 0.95,
			"achieved fraction of the fp4 (NVFP4/MXFP4) dense tensor-core peak for large GEMMs", "compute", false, LevelGPU, false},
		{GEMMHalfM, "gemm_half_m", "rows", 128, 4, 1024,
			"GEMM rows (tokens per expert or per batch) at which efficiency reaches half of the large-M efficiency; small-M GEMMs run far below peak", "compute", true, LevelGPU, false},
		{KernelFixedUS, "kernel_fixed_us", "us", 6, 0.5, 30,
			"fixed time of one GEMM or attention kernel beyond its roofline time (ramp-up, tail, the last wave), paid per kernel per layer and step", "compute (kernel fixed time)", true, LevelGPU, false},
		{ElementwiseFixedRatio, "elementwise_fixed_ratio", "x", 0.6, 0.1, 2,
			"fixed time of one small elementwise kernel (a norm, rotary embedding, cache write, activation quantisation, routing top-k or permutation) whatever its size, relative to a GEMM's (kernel_fixed_us): paid per kernel per layer and step (arch.Arch.ElementwiseKernels counts them); its bytes are priced by elementwise_eff", "compute (kernel fixed time)", true, LevelGPU, false},
		{DequantEff, "dequant_eff", "fraction", 0.75, 0.2, 1.0,
			"math rate of a weight-only quantized GEMM (Marlin or triton kernels dequantising 4- or 8-bit weights to bf16 on a GPU without tensor cores for the format) relative to a bf16 GEMM of the same shape", "compute (weight-only formats)", false, LevelGPU, false},
		{ElementwiseEff, "elementwise_eff", "fraction", 0.6, 0.1, 1.0,
			"achieved fraction of the achieved streaming bandwidth for elementwise kernels (RMSNorm, SiLU-and-mul, rotary embedding, residual add)", "compute (memory-bound elementwise)", false, LevelGPU, false},
		{AttnPrefillEff, "attn_prefill_eff", "fraction", 0.55, 0.05, 0.95,
			"achieved fraction of the roofline (max of KV bytes / bandwidth and FLOPs / bf16 peak) for prefill attention: FlashAttention-class kernels over new tokens", "attention/indexer", false, LevelGPU, false},
		{AttnDecodeEff, "attn_decode_eff", "fraction", 0.8, 0.05, 1.0,
			"achieved fraction of the roofline for decode attention: paged-KV kernels reading each request's cache (dense, MLA, and sparse MLA gathering its top-k tokens)", "attention/indexer", false, LevelGPU, false},
		{IndexerEff, "indexer_eff", "fraction", 0.5, 0.05, 0.95,
			"achieved fraction of fp8 peak for the DSA lightning indexer (fp8 logits GEMM over all earlier compressed keys)", "attention/indexer", false, LevelGPU, false},
		{LinearAttnEff, "linear_attn_eff", "fraction", 0.03, 0.002, 0.6,
			"achieved fraction of bf16 peak for the chunked linear-attention (KDA/GDN) scan in prefill", "state traffic / linear attention", false, LevelGPU, false},
		{GEMMBWEffFP8, "gemm_bw_eff_fp8", "fraction", 1, 0.3, 1,
			"weight bandwidth a memory-bound GEMM with fine-grained (per-128-block) scaled fp8 weights reaches, relative to the streaming bandwidth (mem_bw_eff): on a GPU without block-scaled tensor-core instructions the kernel loads the scales and promotes its partial sums on the CUDA cores every 128 values of K, and a decode-sized GEMM fills few of the SMs (dense projections and the routed experts' grouped GEMMs alike); 1 where the tensor cores scale blocks natively", "weights read (fp8)", false, LevelGPU, false},
		{SparseDecodeEff, "sparse_decode_eff", "fraction", 0.41, 0.1, 0.95,
			"achieved fraction of the bf16 tensor-core peak for the sparse-MLA (DSA) decode kernel when compute-bound: the fp8 cache is dequantised to bf16 for the MMA and every query row of the kernel's head tile is computed", "attention/indexer", false, LevelGPU, false},

		{ComputePowerRatio, "compute_power_ratio", "x", 1, 0.6, 1.05,
			"the tensor-core and CUDA-core rate a card sustains at the board power it runs at, relative to the catalog's peaks (its boost clock): a power-limited edition or cap (RTX PRO 6000 Max-Q at 300 W) lowers the core clock under sustained compute-bound work, while memory-bound work keeps the memory clock and its bandwidth; every compute term (GEMMs, attention and indexer math, the linear-attention scan) is scaled by it, the bandwidth terms are not", "compute (clock under the power limit)", false, LevelGPU, false},
		{NCCLLatencyUS, "nccl_latency_us", "us", 25, 2, 200,
			"fixed time of an NCCL all-reduce among the TP ranks of a message of 640 KiB or more (NCCL's bandwidth protocols; the intercept of time against size), without CUDA graphs' launch savings", "all-reduce", true, LevelGPU, false},
		{NCCLBWEff, "nccl_bw_eff", "fraction", 0.75, 0.2, 0.98,
			"achieved fraction of the GPU-GPU link bandwidth per direction for NCCL's all-reduce payload (bus bandwidth: 2(n-1)/n of the message per rank)", "all-reduce", false, LevelGPU, false},
		{NCCLSmallLatencyUS, "nccl_small_latency_us", "us", 25, 2, 200,
			"fixed time of an NCCL all-reduce of a message under 640 KiB (NCCL's low-latency protocol, which it picks for small messages; across PCIe it starts well below the large messages' intercept), without CUDA graphs' launch savings", "all-reduce", true, LevelGPU, false},
		{CustomARLatencyUS, "custom_ar_latency_us", "us", 10, 2, 100,
			"time of one small all-reduce with vLLM's custom kernel (one-shot: each rank reads its peers' buffers after a flag barrier), used for messages up to 8 MiB where vLLM enables it", "all-reduce", true, LevelGPU, false},
		{CustomARBWEff, "custom_ar_bw_eff", "fraction", 0.6, 0.1, 0.98,
			"achieved fraction of the link bandwidth for the custom all-reduce's payload (one-shot: every peer's whole buffer; two-shot: reduce-scatter plus all-gather)", "all-reduce", false, LevelGPU, false},

		{StepOverheadUS, "step_overhead_us", "us", 400, 50, 3000,
			"fixed GPU-side time per engine step: graph replay or launches, sampling, synchronisation", "overhead", true, LevelEngine, false},
		{CPUStepUS, "cpu_step_us", "us", 600, 100, 5000,
			"CPU time per step for scheduling and input preparation (overlapped with the GPU under async scheduling)", "overhead (CPU)", true, LevelEngine, false},
		{CPUPerReqUS, "cpu_per_req_us", "us", 12, 1, 100,
			"extra CPU time per scheduled request per step (block tables, detokenisation, output processing)", "overhead (CPU)", true, LevelEngine, false},
		{FrontendUSPerTok, "frontend_us_per_token", "us/token", 1.5, 0.1, 10,
			"API-server time per prompt token before the engine sees the request (tokenisation)", "frontend", true, LevelEngine, false},
		{FrontendMSPerReq, "frontend_ms_per_request", "ms", 5, 0.1, 300,
			"API-server time per request before the engine sees it (HTTP and JSON handling, chat template, request setup); one process serves requests one at a time", "frontend", true, LevelEngine, false},

		{ActPasses, "act_passes", "passes/layer", 0, 0, 48,
			"elementwise traffic per layer beyond the norms, activations, rotary embedding, residuals and MoE permutation the architecture counts (arch.Arch.ElementwisePasses), in reads+writes of a hidden-size bf16 vector per token: gates, hyper-connection mixers, routing, casts", "compute (memory-bound elementwise)", false, LevelModel, false},

		{AcceptTau, "accept_tau", "tokens/step", 2.45, 2.2, 2.8,
			"mean acceptance length with 7 drafts early in an output: tokens a request emits per verify step, 1 + accepted drafts, as vLLM's spec-decode metrics report it; public GLM-5.3-Flash + DFlash2 runs show about 2.4 on prose, and the band lets the benchmark's text differ by about 15 %", "speculative acceptance", false, LevelModel, false},
		{AcceptDecay, "accept_decay", "x/position", 0.90, 0.6, 1.0,
			"factor applied to the conditional acceptance probability for each later draft position (the shape of the per-position rates; accept_tau sets their level)", "speculative acceptance", false, LevelModel, false},
		{AcceptLateRatio, "accept_late_ratio", "x", 1.0, 0.7, 1.1,
			"mean acceptance length from output position accept_switch_tokens on, relative to accept_tau: a reasoning model's answer after its reasoning part drafts differently (content, so a property of the model and the prompt)", "speculative acceptance", false, LevelModel, false},
		{AcceptSwitchTokens, "accept_switch_tokens", "tokens", 2048, 256, 8192,
			"output position (tokens generated) from which accept_late_ratio applies: where a typical output passes from reasoning to its answer", "speculative acceptance", true, LevelModel, false},
		{AcceptOpenRatio, "accept_open_ratio", "x", 1.0, 0.8, 1.5,
			"mean acceptance length in the first accept_open_tokens tokens of an output, relative to accept_tau: a reasoning model opens by restating the task, text the drafter predicts from the prompt (content, so a property of the model and the prompt)", "speculative acceptance", false, LevelModel, false},
		{AcceptOpenTokens, "accept_open_tokens", "tokens", 256, 16, 2048,
			"output position (tokens generated) where the opening's acceptance (accept_open_ratio) ends", "speculative acceptance", false, LevelModel, false},

		{MTPAcceptTau, "mtp_accept_tau", "tokens/step", 2.742432, 1.3, 3.9,
			"mean acceptance length of the checkpoint's own multi-token-prediction layer with 3 drafts (1 + accepted drafts per verify step, as vLLM reports it), early in an output on prose; other draft counts keep the per-position shape of the mtp prior (decay 0.8); the prior is that prior's length at 3 drafts (DeepSeek-V3 report: the MTP token accepted 85-90 % of the time)", "speculative acceptance", false, LevelModel, false},
		{AcceptCodeRatio, "accept_code_ratio", "x", 1.25, 1, 2.2,
			"mean acceptance length when the prompt asks for code, relative to the model's level on prose (every method): code is more predictable for a drafter (EAGLE and EAGLE-3 report about 1.2-1.3 x MT-bench's accepted length on HumanEval); applies to the share code_prompt of the requests", "speculative acceptance", false, LevelModel, false},
		{RoutingAlpha, "routing_alpha", "x", 4, 0.2, 1000,
			"concentration of expert routing for requests with different prompts: per-expert popularity is gamma-distributed with this shape (coefficient of variation 1/sqrt(alpha)), so a batch of T tokens touches E (1 - (1 + T topk / (E alpha))^-alpha) distinct experts per layer instead of E (1 - (1 - topk/E)^T) (uniform, alpha -> infinity); the prior, a coefficient of variation of 0.5, is a moderate imbalance for load-balanced trained routers (no batch-level routing statistics were available; the interval is wide)", "weights read (MoE expert coverage)", true, LevelModel, false},
		{RoutingAlphaSame, "routing_alpha_same_prompt", "x", 1, 0.2, 1000,
			"routing_alpha when the requests of a batch share one prompt (the llm-inference-bench cells): similar tokens route to fewer experts", "weights read (MoE expert coverage)", true, LevelModel, false},

		{SamePrompt, "same_prompt", "fraction", 0, 0, 1,
			"share of the batch's requests that carry one and the same prompt: the routing concentration is exp((1 - s) ln routing_alpha + s ln routing_alpha_same_prompt); the llm-inference-bench matrix sends one prompt per cell (1), vllm bench's random and ShareGPT datasets different ones (0)", "weights read (MoE expert coverage)", false, LevelWorkload, false},

		{CodePrompt, "code_prompt", "fraction", 0, 0, 1,
			"share of the requests whose prompt asks for code (their speculative acceptance is accept_code_ratio x the level on prose); a benchmark that sends a coding prompt sets 1", "speculative acceptance", false, LevelWorkload, false},
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
	return FirstAcceptanceAt(tau, decay, ReferenceDrafts)
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

// OpeningAcceptanceCDF is AcceptanceCDF for the first accept_open_tokens positions of an output,
// where the mean acceptance length is accept_open_ratio x accept_tau.
func (p *Values) OpeningAcceptanceCDF(k int) []float64 {
	return cdf(FirstAcceptance(p[AcceptTau]*p[AcceptOpenRatio], p[AcceptDecay]), p[AcceptDecay], k)
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

// OriginKind is how a resolved parameter value was chosen.
type OriginKind string

const (
	// OriginPrior: a prior (the GPU generation's, the engine's, the model's or the generic one).
	OriginPrior OriginKind = "prior"
	// OriginCalibrated: fitted on this GPU (gpu level), this engine version (engine level) or
	// this model (model level).
	OriginCalibrated OriginKind = "calibrated"
	// OriginTransferred: fitted on another GPU of the same generation.
	OriginTransferred OriginKind = "transferred"
	// OriginFile: taken from a parameter file the user gave, whatever it was fitted on.
	OriginFile OriginKind = "file"
	// OriginSet: set by the scenario's [params] table.
	OriginSet OriginKind = "set"
	// OriginWorkload: set by the benchmark or workload that runs (workload-level parameters).
	OriginWorkload OriginKind = "workload"
)

// Origin says where one resolved value comes from: the kind, a description for people
// ("Hopper (H100, H200, H20) prior [0.65, 0.85]: Vidur H100 profiles ...", "calibrated for
// RTX-PRO-6000-Server"), and for priors the interval the prior is believed to lie in (0, 0 when
// none is given; the definition's bounds then apply).
type Origin struct {
	Kind   OriginKind
	Detail string
	Lo, Hi float64
	// Match, for a value from a parameter file (OriginFile), is how the file's calibration key
	// matches the deployment at the parameter's level: OriginCalibrated, OriginTransferred, or ""
	// (fitted on something else). It sets the value's class (Origin.ClassOf).
	Match OriginKind
}

// Provenance is the origin of every value of a resolved parameter set, indexed by ID.
type Provenance [Count]Origin

// RoutingConcentration is the gamma shape of expert popularity the step model uses: routing_alpha
// for different prompts and routing_alpha_same_prompt for one prompt, interpolated in log space by
// same_prompt, exp((1 - s) ln routing_alpha + s ln routing_alpha_same_prompt).
func (p *Values) RoutingConcentration() float64 {
	s := math.Min(math.Max(p[SamePrompt], 0), 1)
	return math.Exp((1-s)*math.Log(p[RoutingAlpha]) + s*math.Log(p[RoutingAlphaSame]))
}
