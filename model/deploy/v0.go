package deploy

import (
	"fmt"
	"strings"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
)

// vLLM's V0 engine (releases before 0.8.0). V1 became the default engine in v0.8.0; the V0
// engine and scheduler ran every earlier release (the dstack rows of the validation corpus:
// 0.6.3 and 0.7.x). Its defaults differ from V1's and are kept here, read from the V0 files
// vllm/engine/arg_utils.py (EngineArgs, create_engine_config), vllm/config.py (SchedulerConfig,
// VllmConfig.__post_init__) and vllm/worker/model_runner.py (_BATCH_SIZES_TO_CAPTURE) of the
// v0.6.x and v0.7.x tags, as remembered from public vLLM history; what is not verified is said:
//
//	enable_chunked_prefill   off, except max_model_len > 32K on a GPU without sliding window,
//	                         speculative decoding, LoRA or prompt adapters, where
//	                         create_engine_config turns it on "to avoid OOM errors in the
//	                         initial memory profiling phase". In 0.6.x create_engine_config took
//	                         no usage context, so the rule is taken for the API server and the
//	                         LLM class alike (remembered, not verified against the tag).
//	enable_prefix_caching    off (EngineArgs.enable_prefix_caching = False)
//	max_num_seqs             256 (EngineArgs.max_num_seqs)
//	max_num_batched_tokens   without chunked prefill max(max_model_len, 2048) (prefill-first
//	                         steps take whole prompts); with it 512 in 0.6.x and 2048 later
//	                         (_DEFAULT_MAX_NUM_BATCHED_TOKENS; the release that raised it is not
//	                         verified, taken as 0.7.0); no usage-context batch tiers in V0
//	MLA models               VllmConfig.__post_init__ forced chunked prefill and prefix caching
//	                         off, and max_num_batched_tokens to max(max_model_len, 2048), until
//	                         MLA chunked prefill landed (PR "MLA chunked prefill", early 2025;
//	                         taken as 0.7.4 here: 0.7.4.dev builds have it, 0.7.3.dev builds do
//	                         not); after it still on non-CUDA platforms (ROCm)
//	CUDA graphs              decode batches 1, 2, 4 and every 8 up to 256, capped by
//	                         max_num_seqs (sequences longer than max_seq_len_to_capture, 8192,
//	                         run eagerly: not modelled)
//	gpu_memory_utilization   0.9; asynchronous scheduling: none; block size 16
//
// Multi-step scheduling (--num-scheduler-steps) and V0's prefill-first step order (a step with
// waiting prompts runs prefills only when chunked prefill is off) are not expressible by the V1
// step policy that package scheduler models; package validate notes them per row.

const (
	// UsageAPIServer is the usage context of `vllm serve`.
	UsageAPIServer = "api_server"
	// UsageLLMClass is the usage context of the in-process LLM class (offline benchmarks).
	UsageLLMClass = "llm_class"
)

const (
	v0ArgsSrc  = "vllm/engine/arg_utils.py (V0, v0.6-v0.7), EngineArgs.create_engine_config"
	v0SchedSrc = "vllm/config.py (V0, v0.6-v0.7), SchedulerConfig"
	v0MLASrc   = "vllm/config.py (V0, v0.7), VllmConfig.__post_init__"
	v0GraphSrc = "vllm/worker/model_runner.py (V0), _BATCH_SIZES_TO_CAPTURE"
)

// v1Engine is the first release whose default engine is V1.
func v1Engine() Version { return Version{0, 8, 0} }

// v0Batch2048 is the first release taken to default chunked prefill's budget to 2048 tokens.
func v0Batch2048() Version { return Version{0, 7, 0} }

// v0MLAChunked is the first release taken to run MLA with chunked prefill on CUDA.
func v0MLAChunked() Version { return Version{0, 7, 4} }

// IsV0 reports whether version v (as Resolve reads it; "" is DefaultVersion) ran vLLM's V0
// engine by default.
func IsV0(v string) bool {
	if v == "" {
		v = DefaultVersion
	}
	p, err := ParseVersion(v)
	return err == nil && !p.AtLeast(v1Engine())
}

// RunsVLLMV0 reports whether d serves with vLLM's V0 engine (vLLM before 0.8), which servesim
// approximates (V1's scheduler with V0's CPU costs) rather than expresses.
func (d *Deployment) RunsVLLMV0() bool {
	e := d.Engine.Name
	return (e == "" || strings.EqualFold(e, "vllm")) && IsV0(d.Engine.Version)
}

// v0ChunkedPrefill is V0's default for enable_chunked_prefill.
func v0ChunkedPrefill(maxModelLen int, llm bool) (bool, string) {
	const longCtx = 32 * 1024
	who := "API server"
	if llm {
		who = "LLM class"
	}
	if maxModelLen > longCtx {
		return true, fmt.Sprintf("on in V0 (%s) because max_model_len %d > 32K (long-context rule of create_engine_config, which has no usage context in 0.6.x)", who, maxModelLen)
	}
	return false, fmt.Sprintf("off in V0 (%s) for max_model_len %d <= 32K", who, maxModelLen)
}

// v0ForceMLA applies V0's override for MLA models: chunked prefill and prefix caching off.
func (r *resolver) v0ForceMLA(e *EngineConfig, m *arch.Arch, g *hardware.GPU) {
	if !m.HasKind(arch.AttnMLA) {
		return
	}
	why := ""
	switch {
	case !r.ver.AtLeast(v0MLAChunked()):
		why = fmt.Sprintf("MLA in V0 before MLA chunked prefill (taken as before 0.7.4; this is %s)", r.ver)
	case g.Vendor != "nvidia":
		why = fmt.Sprintf("MLA in V0 on a non-CUDA platform (%s)", g.Vendor)
	default:
		return
	}
	if e.ChunkedPrefill {
		e.ChunkedPrefill = false
		r.add("enable_chunked_prefill", false, "forced off: "+why, v0MLASrc)
	}
	if e.PrefixCaching {
		e.PrefixCaching = false
		r.add("enable_prefix_caching", false, "forced off: "+why, v0MLASrc)
	}
}

// v0Batch sets V0's max_num_seqs and max_num_batched_tokens.
func (r *resolver) v0Batch(e *EngineConfig, a *EngineArgs) {
	e.MaxNumSeqs = r.intOr(a.MaxNumSeqs, "max_num_seqs", 256, "V0 default (EngineArgs.max_num_seqs = 256)", v0ArgsSrc)
	tokens, rule := max(e.MaxModelLen, 2048), fmt.Sprintf("V0 without chunked prefill: max(max_model_len %d, 2048)", e.MaxModelLen)
	if e.ChunkedPrefill {
		tokens, rule = 2048, "V0 chunked prefill budget (_DEFAULT_MAX_NUM_BATCHED_TOKENS, taken from 0.7.0)"
		if !r.ver.AtLeast(v0Batch2048()) {
			tokens, rule = 512, "V0 chunked prefill budget of 0.6.x (512, \"the best balance between ITL and TTFT on A100\")"
		}
	}
	e.MaxNumBatchedTokens = r.intOr(a.MaxNumBatchedTokens, "max_num_batched_tokens", tokens, rule, v0SchedSrc)
}
