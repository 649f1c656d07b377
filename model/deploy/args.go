package deploy

import (
	"fmt"
	"reflect"
	"strings"
)

// EngineArgs are the `vllm serve` flags as the user gave them: a nil field (or an empty string)
// was not given, and Resolve gives it vLLM's default for the engine version, the GPU and the model.
// The TOML keys are those of EngineConfig (the scenario's [engine] table), so a scenario file
// that leaves a key out means "vLLM's default", never another scenario's value.
type EngineArgs struct {
	Name string `toml:"name,omitempty"`
	// Version is the vLLM release the defaults follow ("" = DefaultVersion).
	Version string `toml:"version,omitempty"`
	// Series names a build series of its own (a community fork's releases) whose engine-level
	// values are kept apart from vLLM's own releases (model/priors.Keys); "" for vLLM's releases.
	Series string `toml:"series,omitempty"`
	// Usage is vLLM's usage context, which some defaults depend on: "" or UsageAPIServer for
	// `vllm serve` (the OpenAI-compatible API server), UsageLLMClass for the in-process LLM class
	// (`vllm bench throughput`, benchmark_throughput.py).
	Usage string `toml:"usage_context,omitempty"`

	TensorParallel   *int  `toml:"tensor_parallel_size,omitempty"`
	DataParallel     *int  `toml:"data_parallel_size,omitempty"`
	PipelineParallel *int  `toml:"pipeline_parallel_size,omitempty"`
	ExpertParallel   *bool `toml:"enable_expert_parallel,omitempty"`
	// DecodeContextParallel is --decode-context-parallel-size (DCP): the KV cache split over that
	// many of the TP ranks (EngineConfig.DecodeContextParallel).
	DecodeContextParallel *int `toml:"decode_context_parallel_size,omitempty"`

	MaxModelLen          *int     `toml:"max_model_len,omitempty"`
	GPUMemoryUtilization *float64 `toml:"gpu_memory_utilization,omitempty"`
	// KVCacheMemoryBytes is --kv-cache-memory-bytes: the KV cache's size per GPU in bytes, in
	// place of what gpu_memory_utilization leaves (EngineConfig.KVCacheMemoryBytes).
	KVCacheMemoryBytes  *int    `toml:"kv_cache_memory_bytes,omitempty"`
	KVCacheDType        *string `toml:"kv_cache_dtype,omitempty"`
	MaxNumBatchedTokens *int    `toml:"max_num_batched_tokens,omitempty"`
	MaxNumSeqs          *int    `toml:"max_num_seqs,omitempty"`
	ChunkedPrefill      *bool   `toml:"enable_chunked_prefill,omitempty"`
	PrefixCaching       *bool   `toml:"enable_prefix_caching,omitempty"`
	BlockSize           *int    `toml:"block_size,omitempty"`
	AsyncScheduling     *bool   `toml:"async_scheduling,omitempty"`
	EnforceEager        *bool   `toml:"enforce_eager,omitempty"`
	MaxCaptureSize      *int    `toml:"max_cudagraph_capture_size,omitempty"`
	// PerformanceMode is --performance-mode ("throughput" doubles the batch defaults).
	PerformanceMode string `toml:"performance_mode,omitempty"`
	// All2AllBackend is --all2all-backend (or VLLM_ALL2ALL_BACKEND): the expert-parallel
	// all-to-all of data-parallel MoE ranks ("" = vLLM's allgather_reducescatter).
	All2AllBackend string `toml:"all2all_backend,omitempty"`
	// AllowLongMaxModelLen is VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 in the server's environment: a
	// max_model_len above the model's own limit is accepted.
	AllowLongMaxModelLen bool `toml:"allow_long_max_model_len,omitempty"`
	// KVGroupsByTarget: the engine sizes its KV-cache layer groups by the target model's layers
	// (its MTP module included) and puts a separate drafter's layers in groups of that size
	// (EngineConfig.KVGroupsByTarget). Not a vLLM flag: a property of a build.
	KVGroupsByTarget bool `toml:"kv_groups_by_target,omitempty"`
	// DisableCustomAllReduce is --disable-custom-all-reduce: NCCL does every all-reduce.
	DisableCustomAllReduce bool `toml:"disable_custom_all_reduce,omitempty"`

	// Speculative is --speculative-config; nil: speculative decoding off (vLLM's default).
	Speculative *Speculative `toml:"speculative,omitempty"`

	// Quantization is --quantization / -q as given ("" = from the checkpoint).
	Quantization     string `toml:"quantization,omitempty"`
	AttentionBackend string `toml:"attention_backend,omitempty"`
	MoEBackend       string `toml:"moe_backend,omitempty"`
	ServedModel      string `toml:"served_model,omitempty"`
}

// dcpArg is a decode context parallel size as a flag: nil when off (vLLM's default), so that
// files written from a configuration without it do not name it.
func dcpArg(n int) *int {
	if n <= 1 {
		return nil
	}
	return &n
}

// Ptr returns a pointer to v (for filling EngineArgs).
func Ptr[T any](v T) *T { return &v }

// ArgsOf returns e as flags that give every setting, so that Resolve returns e itself.
func ArgsOf(e EngineConfig) EngineArgs {
	spec := e.Speculative.Clone()
	return EngineArgs{
		Name: e.Name, Version: e.Version, Series: e.Series, DecodeContextParallel: dcpArg(e.DecodeContextParallel),
		TensorParallel: Ptr(e.TensorParallel), DataParallel: Ptr(e.DataParallel), PipelineParallel: Ptr(e.PipelineParallel),
		ExpertParallel: Ptr(e.ExpertParallel), MaxModelLen: Ptr(e.MaxModelLen), GPUMemoryUtilization: Ptr(e.GPUMemoryUtilization),
		KVCacheDType: Ptr(e.KVCacheDType), MaxNumBatchedTokens: Ptr(e.MaxNumBatchedTokens), MaxNumSeqs: Ptr(e.MaxNumSeqs),
		ChunkedPrefill: Ptr(e.ChunkedPrefill), PrefixCaching: Ptr(e.PrefixCaching), BlockSize: Ptr(e.BlockSize),
		AsyncScheduling: Ptr(e.AsyncScheduling), EnforceEager: Ptr(e.EnforceEager), MaxCaptureSize: Ptr(e.MaxCaptureSize),
		AllowLongMaxModelLen: e.AllowLongMaxModelLen, KVGroupsByTarget: e.KVGroupsByTarget, DisableCustomAllReduce: e.DisableCustomAllReduce, All2AllBackend: e.All2AllBackend, Speculative: &spec,
		Quantization: e.Quantization, AttentionBackend: e.AttentionBackend, MoEBackend: e.MoEBackend, ServedModel: e.ServedModel,
		KVCacheMemoryBytes: kvBytesArg(e.KVCacheMemoryBytes),
	}
}

// kvBytesArg is a KV-cache size as a flag: nil when not set (the cache is what
// gpu_memory_utilization leaves).
func kvBytesArg(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

// Complete reports whether every setting Resolve would otherwise default is given (the labels
// quantization, attention_backend, moe_backend and served_model aside).
func (a *EngineArgs) Complete() bool {
	return a.Version != "" && a.TensorParallel != nil && a.DataParallel != nil && a.PipelineParallel != nil &&
		a.ExpertParallel != nil && a.MaxModelLen != nil && a.GPUMemoryUtilization != nil && a.KVCacheDType != nil &&
		a.MaxNumBatchedTokens != nil && a.MaxNumSeqs != nil && a.ChunkedPrefill != nil && a.PrefixCaching != nil &&
		a.BlockSize != nil && a.AsyncScheduling != nil && a.EnforceEager != nil && a.MaxCaptureSize != nil &&
		a.Speculative != nil && (a.Speculative.Method == "" || a.Speculative.NumTokens > 0)
}

// Clone returns a deep copy (the pointers are not shared).
func (a EngineArgs) Clone() EngineArgs {
	c := a
	cp := func(p *int) *int {
		if p == nil {
			return nil
		}
		return Ptr(*p)
	}
	cb := func(p *bool) *bool {
		if p == nil {
			return nil
		}
		return Ptr(*p)
	}
	c.TensorParallel, c.DataParallel, c.PipelineParallel = cp(a.TensorParallel), cp(a.DataParallel), cp(a.PipelineParallel)
	c.DecodeContextParallel = cp(a.DecodeContextParallel)
	c.ExpertParallel, c.ChunkedPrefill, c.PrefixCaching = cb(a.ExpertParallel), cb(a.ChunkedPrefill), cb(a.PrefixCaching)
	c.AsyncScheduling, c.EnforceEager = cb(a.AsyncScheduling), cb(a.EnforceEager)
	c.MaxModelLen, c.MaxNumBatchedTokens, c.MaxNumSeqs = cp(a.MaxModelLen), cp(a.MaxNumBatchedTokens), cp(a.MaxNumSeqs)
	c.BlockSize, c.MaxCaptureSize = cp(a.BlockSize), cp(a.MaxCaptureSize)
	c.KVCacheMemoryBytes = cp(a.KVCacheMemoryBytes)
	if a.GPUMemoryUtilization != nil {
		c.GPUMemoryUtilization = Ptr(*a.GPUMemoryUtilization)
	}
	if a.KVCacheDType != nil {
		c.KVCacheDType = Ptr(*a.KVCacheDType)
	}
	if a.Speculative != nil {
		s := a.Speculative.Clone()
		c.Speculative = &s
	}
	return c
}

// GPUs is the number of GPUs the given parallel sizes occupy (an absent size is 1, vLLM's default).
func (a *EngineArgs) GPUs() int {
	n := 1
	for _, p := range []*int{a.TensorParallel, a.DataParallel, a.PipelineParallel} {
		if p != nil {
			n *= *p
		}
	}
	return n
}

// Validate checks each given value on its own, naming the field in its TOML spelling
// ("engine.max_num_seqs = -4: must be a positive integer"). Resolve checks the whole.
func (a *EngineArgs) Validate() error {
	for _, c := range []struct {
		n string
		v *int
	}{
		{"tensor_parallel_size", a.TensorParallel}, {"data_parallel_size", a.DataParallel},
		{"pipeline_parallel_size", a.PipelineParallel}, {"max_model_len", a.MaxModelLen},
		{"decode_context_parallel_size", a.DecodeContextParallel},
		{"max_num_batched_tokens", a.MaxNumBatchedTokens}, {"max_num_seqs", a.MaxNumSeqs},
		{"kv_cache_memory_bytes", a.KVCacheMemoryBytes},
	} {
		if c.v != nil && *c.v <= 0 {
			return fmt.Errorf("engine.%s = %d: must be a positive integer", c.n, *c.v)
		}
	}
	if a.Name != "" && a.Name != "vllm" {
		return fmt.Errorf("engine.name = %q: only \"vllm\" is simulated", a.Name)
	}
	if a.Version != "" {
		if _, err := ParseVersion(a.Version); err != nil {
			return fmt.Errorf("engine.version = %q: %v", a.Version, err)
		}
	}
	if u := a.GPUMemoryUtilization; u != nil && !(*u > 0 && *u <= 1) {
		return fmt.Errorf("engine.gpu_memory_utilization = %v: must be in (0, 1]", *u)
	}
	if k := a.KVCacheDType; k != nil && !validKVCacheDType(*k) {
		return fmt.Errorf("engine.kv_cache_dtype = %q: want auto, bf16, fp16, fp8, fp8_e4m3 or fp8_e5m2", *k)
	}
	if b := a.BlockSize; b != nil && (*b < 0 || (*b > 0 && *b%16 != 0)) {
		return fmt.Errorf("engine.block_size = %d: must be 0 (auto) or a positive multiple of 16", *b)
	}
	if m := a.MaxCaptureSize; m != nil && *m < 0 {
		return fmt.Errorf("engine.max_cudagraph_capture_size = %d: must be >= 0", *m)
	}
	switch a.Usage {
	case "", UsageAPIServer, UsageLLMClass:
	default:
		return fmt.Errorf("engine.usage_context = %q: want %s or %s", a.Usage, UsageAPIServer, UsageLLMClass)
	}
	switch a.PerformanceMode {
	case "", "balanced", "throughput", "interactivity":
	default:
		return fmt.Errorf("engine.performance_mode = %q: want balanced, throughput or interactivity", a.PerformanceMode)
	}
	if s := a.Speculative; s != nil {
		if err := s.validate(false); err != nil {
			return err
		}
	}
	return nil
}

func validKVCacheDType(s string) bool {
	switch strings.ToLower(s) {
	case "auto", "bf16", "bfloat16", "fp16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "nvfp4", "nvfp4_ds_mla":
		return true
	}
	return false
}

// Fill gives a every setting b gives and a does not (a nil pointer or an empty string in a;
// true for the boolean switches), and returns the TOML names of the settings both give with
// different values (a's are kept). Name is left alone.
func (a *EngineArgs) Fill(b EngineArgs) (conflicts []string) {
	b = b.Clone()
	av, bv := reflect.ValueOf(a).Elem(), reflect.ValueOf(&b).Elem()
	t := av.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "Name" {
			continue
		}
		x, y := av.Field(i), bv.Field(i)
		switch f.Type.Kind() {
		case reflect.Pointer:
			switch {
			case y.IsNil():
			case x.IsNil():
				x.Set(y)
			case !reflect.DeepEqual(x.Interface(), y.Interface()):
				conflicts = append(conflicts, strings.Split(f.Tag.Get("toml"), ",")[0])
			}
		case reflect.String:
			switch {
			case y.String() == "":
			case x.String() == "":
				x.Set(y)
			case x.String() != y.String():
				conflicts = append(conflicts, strings.Split(f.Tag.Get("toml"), ",")[0])
			}
		case reflect.Bool:
			if y.Bool() {
				x.SetBool(true)
			}
		default:
			panic("deploy: EngineArgs.Fill: field " + f.Name + " of an unhandled kind")
		}
	}
	return conflicts
}
