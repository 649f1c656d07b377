package deploy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/servesim/servesim/model/arch"
)

// Speculative is vLLM's --speculative-config.
type Speculative struct {
	// Method is "" (off) or one of SpecMethods: dflash, eagle, eagle3, mtp, ngram, draft_model, ...
	// (model-specific MTP names such as deepseek_mtp are read as mtp, as vLLM does).
	Method string `toml:"method"`
	// Model is the draft model's name (a built-in description, a HF id or a path).
	Model string `toml:"model,omitempty"`
	// NumTokens is k, the draft tokens per step (0 in EngineArgs: not given).
	NumTokens int `toml:"num_speculative_tokens"`
	// KVCacheDType of the drafter's layers ("auto" = the drafter's weight dtype, bf16).
	KVCacheDType string `toml:"kv_cache_dtype,omitempty"`

	// Acceptance overrides the method's acceptance prior (not a vLLM key: the scenario's
	// [engine.speculative] table): the per-position rates P(accepted >= i) for i = 1..k, as vLLM's
	// spec-decode metrics report them (vllm:spec_decode_num_accepted_tokens_per_pos over
	// num_drafts), non-increasing, in [0, 1].
	Acceptance []float64 `toml:"acceptance,omitempty" json:",omitempty"`
	// MeanAcceptanceLength overrides the prior's level instead: 1 + accepted drafts per step with
	// k drafts, as vLLM reports it (in [1, 1 + k]); the per-position shape stays the prior's.
	MeanAcceptanceLength float64 `toml:"mean_acceptance_length,omitempty" json:",omitempty"`
}

// Equal reports whether s and o are the same configuration.
func (s *Speculative) Equal(o *Speculative) bool {
	return s.Method == o.Method && s.Model == o.Model && s.NumTokens == o.NumTokens && s.KVCacheDType == o.KVCacheDType &&
		slices.Equal(s.Acceptance, o.Acceptance) && s.MeanAcceptanceLength == o.MeanAcceptanceLength
}

// Clone returns a copy that shares no storage with s.
func (s Speculative) Clone() Speculative {
	s.Acceptance = slices.Clone(s.Acceptance)
	return s
}

// SpecMethods are the methods vLLM's SpeculativeConfig accepts (vllm/config/speculative.py,
// late 2026).
func SpecMethods() []string {
	return []string{"ngram", "ngram_gpu", "medusa", "mlp_speculator", "draft_model", "suffix", "eagle", "eagle3",
		"extract_hidden_states", "mtp", "dflash", "dspark", "custom_class"}
}

// SimulatedSpecMethods are the methods the simulator runs: mtp (the target checkpoint's
// multi-token-prediction layers), those with a draft model description (DFlash, the EAGLE heads,
// draft_model) and ngram (prompt lookup on the CPU, no drafter weights).
func SimulatedSpecMethods() []string {
	return []string{"dflash", "eagle", "eagle3", "mtp", "draft_model", "ngram"}
}

// NeedsDrafter reports whether the method runs a separate draft model whose description the
// simulation needs: the EAGLE heads, DFlash and draft_model (mtp runs the target's own layers,
// ngram no model).
func NeedsDrafter(method string) bool {
	switch method {
	case "dflash", "eagle", "eagle3", "draft_model":
		return true
	}
	return false
}

// CanonicalSpecMethod spells a method the way vLLM does after reading it: the model-specific MTP
// names (deepseek_mtp, glm4_moe_mtp, qwen3_next_mtp, ... any name ending in "_mtp") are mtp.
// renamed reports a rewrite (vLLM warns that the old name is deprecated).
func CanonicalSpecMethod(m string) (method string, renamed bool) {
	if strings.HasSuffix(m, "_mtp") {
		return "mtp", true
	}
	return m, false
}

// Enabled reports whether speculative decoding is on.
func (s *Speculative) Enabled() bool { return s.Method != "" && s.NumTokens > 0 }

// EagleFamily reports whether the method drops the last matched prefix-cache block: eagle, eagle3,
// mtp and dflash need the hidden states before the generation point (vLLM
// vllm/v1/core/single_type_kv_cache_manager.py, find_longest_cache_hit with use_eagle).
func (s *Speculative) EagleFamily() bool {
	switch s.Method {
	case "eagle", "eagle3", "mtp", "dflash", "deepseek_mtp":
		return true
	}
	return false
}

// Check checks the configuration as the scenario's [engine.speculative] table is checked (the
// method, k when given, and the measured acceptance against it).
func (s *Speculative) Check() error { return s.validate(false) }

// validate checks the method and k; resolved requires k (an EngineArgs may leave it to Resolve).
func (s *Speculative) validate(resolved bool) error {
	if s.Method == "" {
		return nil
	}
	m, _ := CanonicalSpecMethod(s.Method)
	if !slices.Contains(SpecMethods(), m) {
		return fmt.Errorf("engine.speculative.method = %q: want one of %s", s.Method, strings.Join(SpecMethods(), ", "))
	}
	if s.NumTokens < 0 || s.NumTokens > 32 || (resolved && s.NumTokens == 0) {
		return fmt.Errorf("engine.speculative.num_speculative_tokens = %d: must be in 1..32", s.NumTokens)
	}
	if len(s.Acceptance) > 0 && s.MeanAcceptanceLength != 0 {
		return fmt.Errorf("engine.speculative: acceptance and mean_acceptance_length are exclusive: give the per-position rates or the mean length")
	}
	if n := len(s.Acceptance); n > 0 {
		if s.NumTokens > 0 && n != s.NumTokens {
			return fmt.Errorf("engine.speculative.acceptance has %d rates for num_speculative_tokens = %d: want one per draft position, P(accepted >= i) as vLLM reports it", n, s.NumTokens)
		}
		for i, v := range s.Acceptance {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("engine.speculative.acceptance[%d] = %v: must be in [0, 1]", i, v)
			}
			if i > 0 && v > s.Acceptance[i-1] {
				return fmt.Errorf("engine.speculative.acceptance[%d] = %v exceeds acceptance[%d] = %v: the rates P(accepted >= i) cannot grow with i", i, v, i-1, s.Acceptance[i-1])
			}
		}
	}
	if v := s.MeanAcceptanceLength; v != 0 && !(v >= 1 && (s.NumTokens == 0 || v <= float64(1+s.NumTokens))) {
		return fmt.Errorf("engine.speculative.mean_acceptance_length = %v: must be in [1, 1 + num_speculative_tokens = %d]", v, 1+s.NumTokens)
	}
	return nil
}

// EngineConfig is the vLLM serving configuration: the flags of `vllm serve` that change what the
// simulation does. Defaults are vLLM's.
type EngineConfig struct {
	Name    string `toml:"name"`    // "vllm"
	Version string `toml:"version"` // informational; calibration is tied to it
	// Series is a build series of its own (EngineArgs.Series; "" for vLLM's releases).
	Series string `toml:"series,omitempty" json:",omitempty"`

	TensorParallel   int  `toml:"tensor_parallel_size"`
	DataParallel     int  `toml:"data_parallel_size"`
	PipelineParallel int  `toml:"pipeline_parallel_size"`
	ExpertParallel   bool `toml:"enable_expert_parallel"`
	// DecodeContextParallel is vLLM's decode context parallel size (DCP, 0 or 1: off): the
	// attention layers' KV cache is split token by token over DCP of the TP ranks (each rank
	// stores every DCP-th token), so a rank holds 1/DCP of each request's cache and the engine
	// DCP times the tokens; in a step each rank gathers the queries of every head of its DCP
	// group, attends over its share of the context, and the partial outputs are combined by
	// their log-sum-exp (vllm/v1/attention/backends/mla, DCP; vllm/config/parallel.py).
	DecodeContextParallel int `toml:"decode_context_parallel_size,omitempty" json:",omitempty"`

	MaxModelLen          int     `toml:"max_model_len"`
	GPUMemoryUtilization float64 `toml:"gpu_memory_utilization"`
	// KVCacheMemoryBytes is vLLM's kv_cache_memory_bytes (--kv-cache-memory-bytes): the KV cache's
	// size per GPU in bytes; when set (> 0) vLLM skips the memory profile's budget and
	// gpu_memory_utilization is not used (vllm/config/cache.py, CacheConfig; vllm/v1/worker/
	// gpu_worker.py, determine_available_memory). 0: the cache is what gpu_memory_utilization leaves.
	KVCacheMemoryBytes int `toml:"kv_cache_memory_bytes,omitempty" json:",omitempty"`
	// KVCacheDType: "auto" (the model dtype, bf16), "fp8", "fp8_e4m3", "fp8_e5m2".
	KVCacheDType        string `toml:"kv_cache_dtype"`
	MaxNumBatchedTokens int    `toml:"max_num_batched_tokens"`
	MaxNumSeqs          int    `toml:"max_num_seqs"`
	ChunkedPrefill      bool   `toml:"enable_chunked_prefill"`
	PrefixCaching       bool   `toml:"enable_prefix_caching"`
	// BlockSize is the attention block size in tokens; 0 lets the engine choose (16, or larger
	// for hybrid models whose state pages force a bigger block).
	BlockSize int `toml:"block_size"`
	// AsyncScheduling overlaps CPU scheduling of step n+1 with GPU execution of step n.
	AsyncScheduling bool `toml:"async_scheduling"`
	// EnforceEager disables CUDA graphs.
	EnforceEager bool `toml:"enforce_eager"`
	// MaxCaptureSize is the largest decode batch (in tokens) captured as a CUDA graph.
	MaxCaptureSize int `toml:"max_cudagraph_capture_size"`

	Speculative Speculative `toml:"speculative"`

	// AllowLongMaxModelLen is VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: max_model_len may exceed the
	// model's own limit.
	AllowLongMaxModelLen bool `toml:"allow_long_max_model_len,omitempty" json:"AllowLongMaxModelLen,omitempty"`
	// KVGroupsByTarget: the KV-cache layer groups are sized by the target model's layers (its
	// MTP module included) and a separate drafter's layers fill groups of that size, where
	// vLLM sizes them by the smallest layer count of any kind, the drafter's included
	// (kv_cache_utils.py). The community builds of the validation corpus do this: their cache
	// page is the target's and recurrent layers' ("cache_pages=2048-token target+recurrent"),
	// and their published KV capacities fit it (docs/rtx6kpro.md, "KV capacity").
	KVGroupsByTarget bool `toml:"kv_groups_by_target,omitempty" json:"KVGroupsByTarget,omitempty"`
	// DisableCustomAllReduce is --disable-custom-all-reduce: NCCL does every all-reduce
	// (Deployment.CustomAllReduce gives vLLM's rule otherwise).
	DisableCustomAllReduce bool `toml:"disable_custom_all_reduce,omitempty" json:"DisableCustomAllReduce,omitempty"`
	// All2AllBackend is the expert-parallel all-to-all of data-parallel MoE ranks ("" =
	// allgather_reducescatter, vLLM's default); recorded, not simulated (only DP 1 is).
	All2AllBackend string `toml:"all2all_backend,omitempty" json:"All2AllBackend,omitempty"`

	// Labels kept for the report. Quantization is --quantization as given, else the checkpoint's
	// weight format ("NVFP4", "FP8", "MXFP4"; "" for 16-bit weights).
	Quantization     string `toml:"quantization,omitempty"`
	AttentionBackend string `toml:"attention_backend,omitempty"`
	MoEBackend       string `toml:"moe_backend,omitempty"`
	ServedModel      string `toml:"served_model,omitempty"`
}

// DefaultEngineConfig is a fixed baseline configuration for one GPU (tests and examples start from
// it). vLLM's own defaults depend on the version, the GPU and the model: Resolve gives them.
func DefaultEngineConfig() EngineConfig {
	return EngineConfig{
		Name:                 "vllm",
		TensorParallel:       1,
		DataParallel:         1,
		PipelineParallel:     1,
		MaxModelLen:          0, // model's own limit; must be set for simulation
		GPUMemoryUtilization: 0.9,
		KVCacheDType:         "auto",
		MaxNumBatchedTokens:  8192,
		MaxNumSeqs:           256,
		ChunkedPrefill:       true,
		PrefixCaching:        true,
		AsyncScheduling:      true,
		MaxCaptureSize:       512,
	}
}

// Equal reports whether e and o are the same configuration (EngineConfig holds a slice, the
// acceptance override, so == does not compare it).
func (e *EngineConfig) Equal(o *EngineConfig) bool {
	a, b := *e, *o
	a.Speculative, b.Speculative = Speculative{}, Speculative{}
	return reflect.DeepEqual(a, b) && e.Speculative.Equal(&o.Speculative)
}

// KVDType is the KV-cache storage type.
func (e *EngineConfig) KVDType() arch.DType {
	switch strings.ToLower(e.KVCacheDType) {
	case "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla":
		return arch.FP8
	case "fp16", "float16":
		return arch.FP16
	case "nvfp4", "nvfp4_ds_mla":
		return arch.NVFP4
	}
	return arch.BF16
}

// SpecTokens is k, the number of speculative tokens (0 when off).
func (e *EngineConfig) SpecTokens() int {
	if !e.Speculative.Enabled() {
		return 0
	}
	return e.Speculative.NumTokens
}

// EPSize is the number of ranks the routed experts are split over (TP x DP with expert parallel,
// else 1: experts are then TP-sharded instead).
func (e *EngineConfig) EPSize() int {
	if !e.ExpertParallel {
		return 1
	}
	return e.TensorParallel * e.DataParallel
}

// DCP is the decode context parallel size (1: off).
func (e *EngineConfig) DCP() int { return max(e.DecodeContextParallel, 1) }

// GPUs is the number of GPUs the engine occupies.
func (e *EngineConfig) GPUs() int { return e.TensorParallel * e.DataParallel * e.PipelineParallel }

// Validate checks each field on its own; Deployment.Validate checks them against the model and
// hardware. Errors name the field in its TOML spelling.
func (e *EngineConfig) Validate() error {
	// Upper bounds keep products of sizes inside int64 (TP x DP must not wrap around to the GPU
	// count) and far above any real engine.
	const maxParallel, maxTokens, maxSeqs = 4096, 1 << 30, 1 << 20
	pos := func(name string, v, hi int) error {
		if v <= 0 {
			return fmt.Errorf("engine.%s = %d: must be a positive integer", name, v)
		}
		if v > hi {
			return fmt.Errorf("engine.%s = %d: must be at most %d", name, v, hi)
		}
		return nil
	}
	for _, c := range []struct {
		n     string
		v, hi int
	}{
		{"tensor_parallel_size", e.TensorParallel, maxParallel}, {"data_parallel_size", e.DataParallel, maxParallel},
		{"pipeline_parallel_size", e.PipelineParallel, maxParallel}, {"max_model_len", e.MaxModelLen, maxTokens},
		{"max_num_batched_tokens", e.MaxNumBatchedTokens, maxTokens}, {"max_num_seqs", e.MaxNumSeqs, maxSeqs},
	} {
		if err := pos(c.n, c.v, c.hi); err != nil {
			return err
		}
	}
	if e.KVCacheMemoryBytes < 0 {
		return fmt.Errorf("engine.kv_cache_memory_bytes = %d: must be a positive number of bytes (or absent)", e.KVCacheMemoryBytes)
	}
	if !(e.GPUMemoryUtilization > 0 && e.GPUMemoryUtilization <= 1) {
		return fmt.Errorf("engine.gpu_memory_utilization = %v: must be in (0, 1]", e.GPUMemoryUtilization)
	}
	if !validKVCacheDType(e.KVCacheDType) {
		return fmt.Errorf("engine.kv_cache_dtype = %q: want auto, bf16, fp16, fp8, fp8_e4m3 or fp8_e5m2", e.KVCacheDType)
	}
	if e.BlockSize < 0 || e.BlockSize > maxTokens || (e.BlockSize > 0 && e.BlockSize%16 != 0) {
		return fmt.Errorf("engine.block_size = %d: must be 0 (auto) or a positive multiple of 16", e.BlockSize)
	}
	if e.MaxCaptureSize < 0 || e.MaxCaptureSize > maxTokens {
		return fmt.Errorf("engine.max_cudagraph_capture_size = %d: must be in 0..%d", e.MaxCaptureSize, maxTokens)
	}
	if !e.ChunkedPrefill && e.MaxNumBatchedTokens < e.MaxModelLen {
		return fmt.Errorf("engine.max_num_batched_tokens = %d is below max_model_len = %d with chunked prefill off: vLLM refuses this", e.MaxNumBatchedTokens, e.MaxModelLen)
	}
	if err := CheckBatch(e.MaxNumBatchedTokens, e.MaxNumSeqs); err != nil {
		return err
	}
	return e.Speculative.validate(true)
}

// CheckBatch refuses max_num_batched_tokens below max_num_seqs, as vLLM's SchedulerConfig does
// (every running sequence must be able to take a token in one step).
func CheckBatch(maxNumBatchedTokens, maxNumSeqs int) error {
	if maxNumBatchedTokens < maxNumSeqs {
		return fmt.Errorf("engine.max_num_batched_tokens = %d is below max_num_seqs = %d: vLLM refuses this (max_num_batched_tokens must be at least max_num_seqs)", maxNumBatchedTokens, maxNumSeqs)
	}
	return nil
}
