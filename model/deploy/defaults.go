package deploy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
)

// This file is the one place where vLLM's defaults live: what `vllm serve` does with a flag that
// was not given, for an engine version, a GPU and a model. Each rule names the vLLM file it comes
// from. Resolve applies them and returns, for each setting it chose, the rule and the source
// (`servesim config` and `servesim import` print them as comments; `plan --explain-row` too).
//
// Versions. The rules were read from vLLM's sources at three points (the reference notes of the
// project name the commits): late 2025 (vllm/engine/arg_utils.py, vllm/config/cache.py,
// vllm/config/parallel.py, about v0.11-0.13), 2026 (texts of the same files newer than v0.19, and
// docs.vllm.ai of 2026-05) and the tag v0.28.0 (2026-08-24). The first release with the 2026 rules
// is taken to be v0.14.0, the first of 2026: the exact release that changed
// gpu_memory_utilization to 0.92, or turned asynchronous scheduling on with EAGLE/MTP (PR #31998)
// and pipeline parallelism (PR #32359), was not verified. Hybrid models' prefix caching (PR #50991,
// merged 2026-08-04) is taken to start with v0.28.0.

// DefaultVersion is the vLLM release assumed when a scenario or command does not say: v0.28.0
// (2026-08-24), the newest tag whose defaults were read.
const DefaultVersion = "0.28.0"

// Version is a vLLM release number (major.minor.patch; pre-release and local parts are dropped:
// 0.32.1rc1.dev96+g8c60cf07b is 0.32.1).
type Version struct{ Major, Minor, Patch int }

var versionRE = regexp.MustCompile(`^v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?([.+-]?[A-Za-z0-9.+_-]*)?$`)

// ParseVersion reads a vLLM version string ("0.28.0", "v0.11.1", "0.32.1rc1.dev96+g8c60cf07b").
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Version{}, fmt.Errorf("want a vLLM version such as %s", DefaultVersion)
	}
	var v Version
	var err error
	if v.Major, err = strconv.Atoi(m[1]); err == nil {
		v.Minor, err = strconv.Atoi(m[2])
	}
	if err == nil && m[3] != "" {
		v.Patch, err = strconv.Atoi(m[3])
	}
	if err != nil || v.Major > 1000 || v.Minor > 100000 {
		return Version{}, fmt.Errorf("want a vLLM version such as %s", DefaultVersion)
	}
	return v, nil
}

// AtLeast reports whether v is release o or later.
func (v Version) AtLeast(o Version) bool {
	if v.Major != o.Major {
		return v.Major > o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor > o.Minor
	}
	return v.Patch >= o.Patch
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// newestKnown is the newest vLLM release servesim has seen run (the seed's measured server,
// 0.32.1rc1): later releases are unknown to it.
func newestKnown() Version { return Version{0, 32, 1} }

// VersionNote is a note for a vLLM version later than any release servesim knows ("" for a known
// or unreadable one): its defaults are taken to be those of the newest rules read (v0.28.0), which
// that release may have changed.
func VersionNote(s string) string {
	v, err := ParseVersion(s)
	if err != nil || !v.AtLeast(newestKnown()) || v == newestKnown() {
		return ""
	}
	return fmt.Sprintf("vLLM %s is later than any release servesim knows (the newest: %s; defaults read from v%s): its defaults are taken to be v%s's, which it may have changed",
		strings.TrimSpace(s), newestKnown(), DefaultVersion, DefaultVersion)
}

// The release boundaries of the rules (see the file comment).
func v2026() Version { return Version{0, 14, 0} } // 2026 rules (X26/D26 texts)
func v0_28() Version { return Version{0, 28, 0} } // tag v0.28.0: >= 160 GiB batch tier, hybrid prefix caching

// ModelGPU is what vLLM's defaults depend on besides the flags: the model (its kinds, its
// config's length and KV-cache quantization) and the GPU.
type ModelGPU struct {
	Model *arch.Arch
	GPU   *hardware.GPU
}

// Default is one setting Resolve chose because the flag was not given.
type Default struct {
	Key    string // the [engine] key (TOML spelling)
	Value  string // as written in a scenario file
	Rule   string // why this value, for this version, GPU and model
	Source string // the vLLM file the rule comes from
}

// Resolve turns the flags a user gave into the engine configuration vLLM runs: every absent flag
// takes vLLM's default for the version (a.Version, else DefaultVersion), the GPU and the model,
// and the list says which ones did and why. A max_model_len above what the model's config allows
// is refused unless AllowLongMaxModelLen (VLLM_ALLOW_LONG_MAX_MODEL_LEN=1), as vLLM refuses it.
// Given values are kept as given; only unset ones are derived (vLLM adjusts only those, too).
func Resolve(a EngineArgs, t ModelGPU) (EngineConfig, []Default, error) {
	if err := a.Validate(); err != nil {
		return EngineConfig{}, nil, err
	}
	if t.Model == nil || t.GPU == nil {
		return EngineConfig{}, nil, fmt.Errorf("engine defaults: need the model and the GPU")
	}
	r := resolver{a: a, t: t}
	e, err := r.run()
	return e, r.out, err
}

type resolver struct {
	a   EngineArgs
	t   ModelGPU
	ver Version
	out []Default
}

func (r *resolver) add(key string, v any, rule, source string) {
	var s string
	switch x := v.(type) {
	case string:
		s = strconv.Quote(x)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		s = fmt.Sprint(x)
	}
	r.out = append(r.out, Default{Key: key, Value: s, Rule: rule, Source: source})
}

func (r *resolver) run() (EngineConfig, error) {
	a, m, g := &r.a, r.t.Model, r.t.GPU
	e := EngineConfig{Name: "vllm", Version: a.Version, Series: a.Series, AllowLongMaxModelLen: a.AllowLongMaxModelLen, KVGroupsByTarget: a.KVGroupsByTarget, All2AllBackend: a.All2AllBackend,
		DisableCustomAllReduce: a.DisableCustomAllReduce,
		Quantization:           a.Quantization, AttentionBackend: a.AttentionBackend, MoEBackend: a.MoEBackend, ServedModel: a.ServedModel}
	if e.Version == "" {
		e.Version = DefaultVersion
		r.add("version", e.Version, "no engine version given: the newest release whose defaults servesim knows (v0.28.0, 2026-08-24)", "servesim")
	}
	var err error
	if r.ver, err = ParseVersion(e.Version); err != nil {
		return e, fmt.Errorf("engine.version = %q: %v", e.Version, err)
	}
	y2026 := r.ver.AtLeast(v2026())

	// Parallelism (vllm/config/parallel.py): TP, PP, DP 1; expert parallel off.
	const parallelSrc = "vllm/config/parallel.py, ParallelConfig"
	e.TensorParallel = r.intOr(a.TensorParallel, "tensor_parallel_size", 1, "vLLM's default", parallelSrc)
	e.PipelineParallel = r.intOr(a.PipelineParallel, "pipeline_parallel_size", 1, "vLLM's default", parallelSrc)
	e.DataParallel = r.intOr(a.DataParallel, "data_parallel_size", 1, "vLLM's default", parallelSrc)
	e.ExpertParallel = r.boolOr(a.ExpertParallel, "enable_expert_parallel", false, "vLLM's default (MoE layers are tensor-parallel)", parallelSrc)
	if a.DecodeContextParallel != nil && *a.DecodeContextParallel > 1 {
		e.DecodeContextParallel = *a.DecodeContextParallel
	}

	// Speculative decoding: off unless --speculative-config; an absent k comes from the draft's
	// n_predict (vllm/config/speculative.py).
	if a.Speculative != nil {
		s := a.Speculative.Clone()
		if s.Method != "" && s.NumTokens == 0 {
			switch {
			case s.Method == "mtp" && s.Model == "":
				return e, fmt.Errorf("engine.speculative: method mtp without a model needs num_speculative_tokens (vLLM takes n_predict from the draft model's config only when a model is given)")
			case s.Method == "mtp":
				if m.MTPLayers == 0 {
					return e, fmt.Errorf("engine.speculative: method mtp without num_speculative_tokens: vLLM takes n_predict from num_nextn_predict_layers, which model %q does not have", m.Name)
				}
				s.NumTokens = m.MTPLayers
				r.add("speculative.num_speculative_tokens", s.NumTokens, fmt.Sprintf("n_predict of the MTP module: num_nextn_predict_layers = %d", m.MTPLayers), "vllm/config/speculative.py")
			default:
				return e, fmt.Errorf("engine.speculative: method %s without num_speculative_tokens: vLLM takes it from the draft model's config (n_predict), which servesim does not read; give num_speculative_tokens", s.Method)
			}
		}
		e.Speculative = s
	}
	k := e.SpecTokens()

	// max_model_len (vllm/config/model.py, _get_and_verify_max_len).
	const lenSrc = "vllm/config/model.py, _get_and_verify_max_len"
	switch {
	case a.MaxModelLen == nil && m.MaxModelLen > 0:
		e.MaxModelLen = m.MaxModelLen
		rule := "derived from the model's config"
		if m.MaxModelLenRule != "" {
			rule += ": " + m.MaxModelLenRule
		}
		r.add("max_model_len", e.MaxModelLen, rule, lenSrc)
	case a.MaxModelLen == nil:
		return e, fmt.Errorf("engine.max_model_len: not given, and model %q does not say its context length (vLLM derives it from config.json's max_position_embeddings): give --max-model-len in the vllm serve command (max_model_len in a scenario's [engine]), or the model's config.json (--model-config)", m.Name)
	default:
		e.MaxModelLen = *a.MaxModelLen
		if m.MaxModelLen > 0 && e.MaxModelLen > m.MaxModelLen && !a.AllowLongMaxModelLen {
			rule := ""
			if m.MaxModelLenRule != "" {
				rule = " (" + m.MaxModelLenRule + ")"
			}
			return e, fmt.Errorf("engine.max_model_len = %d is greater than the %d model %q allows%s: vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set (engine.allow_long_max_model_len = true)",
				e.MaxModelLen, m.MaxModelLen, m.Name, rule)
		}
	}

	// gpu_memory_utilization (vllm/config/cache.py, CacheConfig).
	util, utilRule := 0.9, "vLLM's default before 2026 (v0.11-0.13)"
	if y2026 {
		util, utilRule = 0.92, "vLLM's default in 2026 releases"
	}
	e.GPUMemoryUtilization = r.floatOr(a.GPUMemoryUtilization, "gpu_memory_utilization", util, utilRule, "vllm/config/cache.py, CacheConfig")
	if a.KVCacheMemoryBytes != nil {
		e.KVCacheMemoryBytes = *a.KVCacheMemoryBytes
	}

	// kv_cache_dtype "auto" (vllm/utils/torch_utils.py, resolve_kv_cache_dtype_string).
	switch {
	case a.KVCacheDType != nil:
		e.KVCacheDType = *a.KVCacheDType
	case m.KVCacheDType == arch.FP8:
		e.KVCacheDType = "fp8"
		r.add("kv_cache_dtype", e.KVCacheDType, "auto: the checkpoint prescribes an FP8 KV cache (kv_cache_quant_algo / kv_cache_scheme)", "vllm/utils/torch_utils.py, resolve_kv_cache_dtype_string")
	case y2026 && m.HasKind(arch.AttnSparseMLA):
		e.KVCacheDType = "fp8"
		r.add("kv_cache_dtype", e.KVCacheDType, "auto: sparse-MLA models (DeepSeek-V3.2 family) default to fp8 (fp8_ds_mla)", "vllm/model_executor/models/config.py, DeepseekV32ForCausalLM")
	default:
		e.KVCacheDType = "auto"
		r.add("kv_cache_dtype", e.KVCacheDType, fmt.Sprintf("the model's dtype (%s)", m.EmbedDType), "vllm/config/cache.py, CacheConfig")
	}

	// Chunked prefill and prefix caching (vllm/engine/arg_utils.py,
	// _set_default_chunked_prefill_and_prefix_caching_args; vllm/config/model.py).
	v0 := !r.ver.AtLeast(v1Engine())
	llm := a.Usage == UsageLLMClass
	if v0 {
		cp, rule := v0ChunkedPrefill(e.MaxModelLen, llm)
		e.ChunkedPrefill = r.boolOr(a.ChunkedPrefill, "enable_chunked_prefill", cp, rule, v0ArgsSrc)
	} else {
		e.ChunkedPrefill = r.boolOr(a.ChunkedPrefill, "enable_chunked_prefill", true, "on for generative decoder models (hybrids too)",
			"vllm/config/model.py, is_chunked_prefill_supported")
	}
	pc, pcRule := true, "on for decoder models (MLA too)"
	switch {
	case v0:
		pc, pcRule = false, "off by default in the V0 engine (EngineArgs.enable_prefix_caching = False)"
	case allRecurrent(m):
		pc, pcRule = false, "off for attention-free models"
	case m.HasKind(arch.AttnLinear) && !r.ver.AtLeast(v0_28()):
		pc, pcRule = false, "off for hybrid (recurrent-state) models before PR #50991 (taken as before v0.28.0)"
	case m.HasKind(arch.AttnLinear):
		pc, pcRule = true, "on for hybrid models since PR #50991 (mamba_cache_mode align)"
	}
	pcSrc := "vllm/config/model.py, is_prefix_caching_supported"
	if v0 {
		pcSrc = v0ArgsSrc
	}
	e.PrefixCaching = r.boolOr(a.PrefixCaching, "enable_prefix_caching", pc, pcRule, pcSrc)
	if v0 {
		r.v0ForceMLA(&e, m, g)
	}

	// max_num_batched_tokens and max_num_seqs (vllm/engine/arg_utils.py, get_batch_defaults and
	// _set_default_max_num_seqs_and_batched_tokens_args), for the API server (`vllm serve`).
	if v0 {
		r.v0Batch(&e, a)
		return r.finish(e, a, m, k, true)
	}
	tokens, seqs, tier := batchDefaults(g, r.ver, llm)
	if a.PerformanceMode == "throughput" {
		tokens, seqs, tier = 2*tokens, 2*seqs, tier+", doubled by --performance-mode throughput"
	}
	const batchSrc = "vllm/engine/arg_utils.py, get_batch_defaults, _set_default_max_num_seqs_and_batched_tokens_args"
	tokRule := tier
	if e.DataParallel > 1 && m.IsMoE() && batchedAll2All(a.All2AllBackend) {
		tokens, tokRule = 256, fmt.Sprintf("data-parallel MoE with the batched all-to-all %s", a.All2AllBackend)
	}
	if a.MaxNumBatchedTokens == nil && !e.ChunkedPrefill && tokens < e.MaxModelLen {
		tokens, tokRule = e.MaxModelLen, tier+"; without chunked prefill raised to max_model_len"
	}
	if a.MaxNumBatchedTokens == nil {
		if a.MaxNumSeqs != nil {
			seqs = *a.MaxNumSeqs
		}
		if lim := seqs * e.MaxModelLen; tokens > lim {
			tokens, tokRule = lim, tokRule+"; capped at max_num_seqs x max_model_len"
		}
	}
	e.MaxNumBatchedTokens = r.intOr(a.MaxNumBatchedTokens, "max_num_batched_tokens", tokens, tokRule, batchSrc)
	seqRule := tier
	if a.MaxNumSeqs == nil && seqs > e.MaxNumBatchedTokens {
		seqs, seqRule = e.MaxNumBatchedTokens, tier+"; capped at max_num_batched_tokens"
	}
	e.MaxNumSeqs = r.intOr(a.MaxNumSeqs, "max_num_seqs", seqs, seqRule, batchSrc)

	return r.finish(e, a, m, k, false)
}

// finish applies the defaults that follow the batch limits: block size, asynchronous scheduling,
// CUDA graphs, the quantization label; v0 selects the V0 engine's rules.
func (r *resolver) finish(e EngineConfig, a *EngineArgs, m *arch.Arch, k int, v0 bool) (EngineConfig, error) {
	y2026 := r.ver.AtLeast(v2026())
	// Block size: 0 lets the layout choose as vLLM does (16; the attention backend's smallest
	// supported size when 16 is not, 64 for FlashMLA; raised for hybrid models until an attention
	// page holds a state page): vllm/platforms/interface.py, update_block_size_for_backend, and
	// _align_hybrid_block_size, computed by package kvcache.
	e.BlockSize = r.intOr(a.BlockSize, "block_size", 0, "chosen by the attention backend (16; 64 for MLA kernels; hybrid models raise it to hold a state page)",
		"vllm/platforms/interface.py, update_block_size_for_backend")

	// Asynchronous scheduling (vllm/config/vllm.py, VllmConfig.__post_init__).
	async, asyncRule := false, "off by default before 2026 (SchedulerConfig.async_scheduling = False)"
	if v0 {
		asyncRule = "the V0 engine has no asynchronous scheduling"
	}
	if y2026 {
		async, asyncRule = true, "on by default (None -> True)"
		if e.Speculative.Enabled() && !asyncSpecMethod(e.Speculative.Method) {
			async, asyncRule = false, fmt.Sprintf("off with speculative method %s (only eagle, eagle3, mtp, dflash and ngram_gpu keep it)", e.Speculative.Method)
		}
	}
	e.AsyncScheduling = r.boolOr(a.AsyncScheduling, "async_scheduling", async, asyncRule, "vllm/config/vllm.py, VllmConfig.__post_init__")

	// CUDA graphs (vllm/config/compilation.py; vllm/config/vllm.py, _set_cudagraph_sizes).
	e.EnforceEager = r.boolOr(a.EnforceEager, "enforce_eager", false, "CUDA graphs on (cudagraph_mode FULL_AND_PIECEWISE at -O2)", "vllm/config/compilation.py")
	if v0 {
		e.MaxCaptureSize = r.intOr(a.MaxCaptureSize, "max_cudagraph_capture_size", min(e.MaxNumSeqs, 256),
			fmt.Sprintf("V0 captures decode batches 1, 2, 4, 8, 16, ..., 256 up to max_num_seqs: min(%d, 256)", e.MaxNumSeqs), v0GraphSrc)
	} else {
		capture := min(e.MaxNumSeqs*(1+k)*2, 512, e.MaxNumBatchedTokens)
		e.MaxCaptureSize = r.intOr(a.MaxCaptureSize, "max_cudagraph_capture_size", capture,
			fmt.Sprintf("min(max_num_seqs x (1 + k) x 2, 512, max_num_batched_tokens) = min(%d, 512, %d)", e.MaxNumSeqs*(1+k)*2, e.MaxNumBatchedTokens),
			"vllm/config/vllm.py, _set_cudagraph_sizes")
	}

	// The quantization: as given, else the method vLLM resolves from the checkpoint's
	// quantization_config (vllm/config/model.py, _verify_quantization), else, for a description
	// that does not record it, the label of its weight format.
	if e.Quantization == "" {
		switch {
		case m.Quantization != "":
			e.Quantization = m.Quantization
			r.add("quantization", e.Quantization, "the method vLLM resolves from the checkpoint's quantization_config", "vllm/config/model.py, _verify_quantization")
		case CheckpointQuantization(m) != "":
			e.Quantization = CheckpointQuantization(m)
			r.add("quantization", e.Quantization, "the checkpoint's weight format (the description records no method)", "vllm/config/model.py, _verify_quantization")
		}
	}
	if err := e.Validate(); err != nil {
		return e, err
	}
	return e, nil
}

func (r *resolver) intOr(p *int, key string, def int, rule, src string) int {
	if p != nil {
		return *p
	}
	r.add(key, def, rule, src)
	return def
}

func (r *resolver) boolOr(p *bool, key string, def bool, rule, src string) bool {
	if p != nil {
		return *p
	}
	r.add(key, def, rule, src)
	return def
}

func (r *resolver) floatOr(p *float64, key string, def float64, rule, src string) float64 {
	if p != nil {
		return *p
	}
	r.add(key, def, rule, src)
	return def
}

// batchDefaults is vLLM's (max_num_batched_tokens, max_num_seqs) for the API server by device
// memory (get_batch_defaults, usage context OPENAI_API_SERVER): >= 160 GiB (v0.28 and later)
// 16384 / 1024; >= 70 GiB and not an A100 8192 / 1024; other GPUs 2048 / 256.
func batchDefaults(g *hardware.GPU, v Version, llm bool) (tokens, seqs int, tier string) {
	mem := g.MemoryGiB
	a100 := strings.Contains(strings.ToLower(g.Name), "a100")
	for _, al := range g.Aliases {
		a100 = a100 || strings.Contains(strings.ToLower(al), "a100")
	}
	if llm {
		switch {
		case mem >= 160 && v.AtLeast(v0_28()):
			return 16384, 1024, fmt.Sprintf("LLM class on a %.0f GiB GPU (>= 160 GiB tier, v0.28 and later)", mem)
		case mem >= 70 && !a100:
			return 16384, 1024, fmt.Sprintf("LLM class on a %.0f GiB GPU (>= 70 GiB, not an A100)", mem)
		}
		return 8192, 256, fmt.Sprintf("LLM class on a %.0f GiB GPU (< 70 GiB or an A100)", mem)
	}
	switch {
	case mem >= 160 && v.AtLeast(v0_28()):
		return 16384, 1024, fmt.Sprintf("API server on a %.0f GiB GPU (>= 160 GiB tier, v0.28 and later)", mem)
	case mem >= 70 && !a100:
		return 8192, 1024, fmt.Sprintf("API server on a %.0f GiB GPU (>= 70 GiB, not an A100)", mem)
	}
	return 2048, 256, fmt.Sprintf("API server on a %.0f GiB GPU (< 70 GiB or an A100)", mem)
}

// batchedAll2All reports whether an expert-parallel all-to-all backend works in fixed batches
// (DeepEP low-latency, NIXL EP), for which vLLM lowers the token budget of DP MoE to 256.
func batchedAll2All(b string) bool {
	switch b {
	case "deepep_low_latency", "nixl_ep":
		return true
	}
	return false
}

// asyncSpecMethod reports whether asynchronous scheduling stays on with a speculative method.
func asyncSpecMethod(m string) bool {
	switch m {
	case "eagle", "eagle3", "mtp", "dflash", "ngram_gpu":
		return true
	}
	return false
}

func allRecurrent(a *arch.Arch) bool {
	for _, g := range a.Layers {
		if g.Attn.Kind != arch.AttnLinear {
			return false
		}
	}
	return true
}

// CheckpointQuantization is the label of a checkpoint's weight format: the routed experts' format
// of a MoE model, else the dense MLPs', upper-cased ("NVFP4", "FP8", "MXFP4", "INT4"); "" for 16-
// and 32-bit weights.
func CheckpointQuantization(a *arch.Arch) string {
	var dt arch.DType
	for _, g := range a.Layers {
		if g.FFN.Kind == arch.FFNMoE {
			dt = g.FFN.ExpertDType
			break
		}
	}
	if dt == "" && len(a.Layers) > 0 {
		dt = a.Layers[0].FFN.DType
	}
	switch dt {
	case "", arch.BF16, arch.FP16, arch.FP32:
		return ""
	}
	return strings.ToUpper(string(dt))
}

// WithWeights returns a copy of a with every projection, dense MLP and routed expert stored in dt
// (the embeddings keep their format).
func WithWeights(a *arch.Arch, dt arch.DType) *arch.Arch {
	v := *a
	v.Layers = append([]arch.LayerGroup(nil), a.Layers...)
	for i := range v.Layers {
		g := &v.Layers[i]
		g.Attn.DType = dt
		g.FFN.DType = dt
		if g.FFN.Kind == arch.FFNMoE {
			g.FFN.ExpertDType = dt
		}
	}
	return &v
}

// Minimize returns a with the given values that vLLM would choose anyway (for the version, the GPU
// and the model) left out: the shortest flags that Resolve turns into the same configuration.
// The labels (quantization, backends, served model) and the version are kept.
func Minimize(a EngineArgs, t ModelGPU) (EngineArgs, error) {
	want, _, err := Resolve(a, t)
	if err != nil {
		return a, err
	}
	m := a.Clone()
	same := func() bool {
		got, _, err := Resolve(m, t)
		return err == nil && got.Equal(&want)
	}
	ints := []**int{&m.TensorParallel, &m.PipelineParallel, &m.DataParallel, &m.MaxModelLen, &m.MaxNumBatchedTokens,
		&m.MaxNumSeqs, &m.BlockSize, &m.MaxCaptureSize}
	for _, p := range ints {
		if *p == nil {
			continue
		}
		old := *p
		*p = nil
		if !same() {
			*p = old
		}
	}
	bools := []**bool{&m.ExpertParallel, &m.ChunkedPrefill, &m.PrefixCaching, &m.AsyncScheduling, &m.EnforceEager}
	for _, p := range bools {
		if *p == nil {
			continue
		}
		old := *p
		*p = nil
		if !same() {
			*p = old
		}
	}
	if m.GPUMemoryUtilization != nil {
		old := m.GPUMemoryUtilization
		m.GPUMemoryUtilization = nil
		if !same() {
			m.GPUMemoryUtilization = old
		}
	}
	if m.KVCacheDType != nil {
		old := m.KVCacheDType
		m.KVCacheDType = nil
		if !same() {
			m.KVCacheDType = old
		}
	}
	if m.Speculative != nil && m.Speculative.Method == "" {
		m.Speculative = nil
		if !same() {
			m.Speculative = a.Clone().Speculative
		}
	}
	if q := m.Quantization; q != "" {
		m.Quantization = ""
		if !same() {
			m.Quantization = q
		}
	}
	return m, nil
}
