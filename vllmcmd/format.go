package vllmcmd

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/servesim/servesim/model/deploy"
)

// isLabel reports whether a Quantization value is a format label ("NVFP4", "FP8": upper case, as
// scenarios and the planner write the checkpoint's format) rather than a --quantization method
// (vLLM's are lower case: fp8, modelopt_fp4, awq_marlin, ...).
func isLabel(q string) bool { return q == strings.ToUpper(q) && q != strings.ToLower(q) }

// Format writes the `vllm serve` command that gives exactly the flags set in a (and model as the
// served model), in a fixed order, so that Parse reads it back to the same EngineArgs (what is
// not a flag aside: a Quantization that is a format label, a block size of 0 and the version). A
// model name a shell would take for an operator or a redirection is written as --model. VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is written as an environment prefix. Words that a
// shell would change are single-quoted. Use deploy.Minimize first to leave out what vLLM would
// choose anyway.
func Format(model string, a deploy.EngineArgs) string {
	var w []string
	if a.AllowLongMaxModelLen {
		w = append(w, "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
	}
	w = append(w, "vllm", "serve")
	switch {
	case strings.HasPrefix(model, "-"):
		// A model that looks like a flag ("--", "-x") reads back only as --model=NAME.
		w = append(w, "--model="+quote(model))
	case IsControlOperator(model) || isRedirection(model):
		w = append(w, "--model", quote(model))
	default:
		w = append(w, quote(model))
	}
	num := func(flag string, p *int) {
		if p != nil {
			w = append(w, flag, strconv.Itoa(*p))
		}
	}
	boolean := func(flag string, p *bool) {
		if p == nil {
			return
		}
		if *p {
			w = append(w, "--"+flag)
		} else {
			w = append(w, "--no-"+flag)
		}
	}
	str := func(flag, v string) {
		if v != "" {
			w = append(w, flag, quote(v))
		}
	}
	str("--served-model-name", a.ServedModel)
	num("--tensor-parallel-size", a.TensorParallel)
	num("--pipeline-parallel-size", a.PipelineParallel)
	num("--decode-context-parallel-size", a.DecodeContextParallel)
	num("--data-parallel-size", a.DataParallel)
	boolean("enable-expert-parallel", a.ExpertParallel)
	num("--max-model-len", a.MaxModelLen)
	if u := a.GPUMemoryUtilization; u != nil {
		w = append(w, "--gpu-memory-utilization", strconv.FormatFloat(*u, 'g', -1, 64))
	}
	if k := a.KVCacheDType; k != nil {
		str("--kv-cache-dtype", *k)
	}
	num("--kv-cache-memory-bytes", a.KVCacheMemoryBytes)
	num("--max-num-batched-tokens", a.MaxNumBatchedTokens)
	num("--max-num-seqs", a.MaxNumSeqs)
	boolean("enable-chunked-prefill", a.ChunkedPrefill)
	boolean("enable-prefix-caching", a.PrefixCaching)
	if b := a.BlockSize; b != nil && *b > 0 {
		num("--block-size", b)
	}
	boolean("async-scheduling", a.AsyncScheduling)
	boolean("enforce-eager", a.EnforceEager)
	if m := a.MaxCaptureSize; m != nil {
		w = append(w, "--compilation-config", quote(fmt.Sprintf(`{"max_cudagraph_capture_size":%d}`, *m)))
	}
	str("--performance-mode", a.PerformanceMode)
	str("--all2all-backend", a.All2AllBackend)
	if a.DisableCustomAllReduce {
		w = append(w, "--disable-custom-all-reduce")
	}
	if q := a.Quantization; !isLabel(q) {
		str("--quantization", q)
	}
	str("--attention-backend", a.AttentionBackend)
	str("--moe-backend", a.MoEBackend)
	if s := a.Speculative; s != nil && s.Method != "" {
		w = append(w, "--speculative-config", quote(specJSON(s)))
	}
	return strings.Join(w, " ")
}

// specJSON writes --speculative-config with its keys in vLLM's documentation order.
func specJSON(s *deploy.Speculative) string {
	var parts []string
	add := func(k string, v any) {
		b, _ := json.Marshal(v)
		parts = append(parts, strconv.Quote(k)+":"+string(b))
	}
	add("method", s.Method)
	if s.Model != "" {
		add("model", s.Model)
	}
	if s.NumTokens > 0 {
		add("num_speculative_tokens", s.NumTokens)
	}
	if s.KVCacheDType != "" {
		add("kv_cache_dtype", s.KVCacheDType)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// quote single-quotes a word a POSIX shell would split or expand.
func quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
