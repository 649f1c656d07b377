package vllmcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/servesim/servesim/model/deploy"
)

type flagKind int

const (
	valueFlag flagKind = iota // --flag value, --flag=value
	boolFlag                  // --flag, --no-flag, --flag=false
	listFlag                  // --flag a b c (argparse nargs='+')
)

type flagSpec struct {
	kind    flagKind
	set     func(p *parser, name, v string) error // value and list flags, once per value
	setBool func(e *deploy.EngineArgs, b bool)
	ignored bool   // no effect on the simulation: recorded in Result.Ignored
	secret  bool   // recorded as <redacted>
	note    string // added to Result.Notes whenever the flag is given
}

// shortAliases are the short spellings vLLM accepts that are mapped here; other short flags are
// unknown.
func shortAliases() map[string]string {
	return map[string]string{
		"-tp":  "--tensor-parallel-size",
		"-dp":  "--data-parallel-size",
		"-pp":  "--pipeline-parallel-size",
		"-dcp": "--decode-context-parallel-size",
		"-q":   "--quantization",
	}
}

// flagTable maps the canonical flag name to what it does.
func flagTable() map[string]*flagSpec {
	return map[string]*flagSpec{
		"--tensor-parallel-size":         intFlag(func(e *deploy.EngineArgs, n int) { e.TensorParallel = &n }),
		"--data-parallel-size":           intFlag(func(e *deploy.EngineArgs, n int) { e.DataParallel = &n }),
		"--pipeline-parallel-size":       intFlag(func(e *deploy.EngineArgs, n int) { e.PipelineParallel = &n }),
		"--decode-context-parallel-size": intFlag(func(e *deploy.EngineArgs, n int) { e.DecodeContextParallel = &n }),
		"--max-num-batched-tokens":       humanIntFlag(func(e *deploy.EngineArgs, n int) { e.MaxNumBatchedTokens = &n }),
		"--max-num-seqs":                 intFlag(func(e *deploy.EngineArgs, n int) { e.MaxNumSeqs = &n }),
		"--kv-cache-memory-bytes":        humanIntFlag(func(e *deploy.EngineArgs, n int) { e.KVCacheMemoryBytes = &n }),
		"--block-size":                   intFlag(func(e *deploy.EngineArgs, n int) { e.BlockSize = &n }),

		"--enable-expert-parallel": {kind: boolFlag, setBool: func(e *deploy.EngineArgs, b bool) { e.ExpertParallel = &b }},
		"--enable-chunked-prefill": {kind: boolFlag, setBool: func(e *deploy.EngineArgs, b bool) { e.ChunkedPrefill = &b }},
		"--enable-prefix-caching":  {kind: boolFlag, setBool: func(e *deploy.EngineArgs, b bool) { e.PrefixCaching = &b }},
		"--async-scheduling":       {kind: boolFlag, setBool: func(e *deploy.EngineArgs, b bool) { e.AsyncScheduling = &b }},
		"--enforce-eager":          {kind: boolFlag, setBool: func(e *deploy.EngineArgs, b bool) { e.EnforceEager = &b }},

		"--max-model-len":              {set: setMaxModelLen},
		"--gpu-memory-utilization":     {set: setGPUMemoryUtilization},
		"--kv-cache-dtype":             {set: setKVCacheDType},
		"--max-cudagraph-capture-size": {set: setMaxCaptureSize},
		"--compilation-config":         {set: setCompilationConfig},
		"--speculative-config":         {set: setSpeculativeConfig},
		"--speculative-model": {set: func(p *parser, _, v string) error {
			p.legacySpecModel = v
			return nil
		}},
		"--num-speculative-tokens": {set: func(p *parser, name, v string) error {
			n, err := positiveInt(name, v)
			p.legacySpecTokens = n
			return err
		}},
		"--performance-mode": {set: func(p *parser, name, v string) error {
			switch v {
			case "balanced", "throughput", "interactivity":
				p.res.Args.PerformanceMode = v
				return nil
			}
			return fmt.Errorf("%s %q: want balanced, throughput or interactivity", name, v)
		}},
		"--optimization-level": {set: setOptimizationLevel},
		"--cuda-graph-sizes": {kind: listFlag, set: func(p *parser, name, v string) error {
			n, err := positiveInt(name, v)
			if err == nil && (p.res.Args.MaxCaptureSize == nil || n > *p.res.Args.MaxCaptureSize) {
				p.res.Args.MaxCaptureSize = &n
			}
			return err
		}},
		"--revision": {set: func(p *parser, _, v string) error {
			p.res.Revision = v
			return nil
		}},
		"--quantization": stringFlag(func(e *deploy.EngineArgs, s string) { e.Quantization = s }),
		"--moe-backend":  stringFlag(func(e *deploy.EngineArgs, s string) { e.MoEBackend = s }),
		"--attention-backend": {set: func(p *parser, _, v string) error {
			p.res.Args.AttentionBackend, p.attnFlag = v, true
			return nil
		}},
		"--model": {set: func(p *parser, _, v string) error {
			p.modelFlag = v
			return nil
		}},
		"--served-model-name": {kind: listFlag, set: func(p *parser, _, v string) error {
			p.served = append(p.served, v)
			return nil
		}},

		// Known flags with no effect on the simulation, with a value.
		"--host":                         ignoredValue(),
		"--port":                         ignoredValue(),
		"--api-key":                      {ignored: true, secret: true},
		"--hf-token":                     {ignored: true, secret: true},
		"--reasoning-parser":             ignoredValue(),
		"--reasoning-parser-plugin":      ignoredValue(),
		"--tool-call-parser":             ignoredValue(),
		"--tool-parser-plugin":           ignoredValue(),
		"--linear-backend":               ignoredValue(),
		"--model-loader-extra-config":    {ignored: true, set: validateJSONObject},
		"--download-dir":                 ignoredValue(),
		"--load-format":                  ignoredValue(),
		"--uvicorn-log-level":            ignoredValue(),
		"--chat-template":                ignoredValue(),
		"--chat-template-content-format": ignoredValue(),
		"--response-role":                ignoredValue(),
		"--seed":                         ignoredValue(),
		"--dtype":                        {ignored: true, set: setDType},
		"--code-revision":                ignoredValue(),
		"--tokenizer":                    ignoredValue(),
		"--tokenizer-revision":           ignoredValue(),
		"--tokenizer-mode":               ignoredValue(),
		"--hf-config-path": {set: func(_ *parser, name, v string) error {
			return fmt.Errorf("%s %s: vLLM would read the model's configuration from there, and servesim reads the model given; give that configuration as the model instead (its config.json or directory)", name, v)
		}},
		"--config-format":                ignoredValue(),
		"--swap-space":                   {ignored: true, note: "CPU memory for swapped-out KV blocks: the V1 engine preempts by recomputation and uses no GPU memory for it"},
		"--distributed-executor-backend": ignoredValue(),
		"--root-path":                    ignoredValue(),
		"--ssl-keyfile":                  ignoredValue(),
		"--ssl-certfile":                 ignoredValue(),
		"--ssl-ca-certs":                 ignoredValue(),
		"--allowed-origins":              ignoredValue(),
		"--allowed-methods":              ignoredValue(),
		"--allowed-headers":              ignoredValue(),
		"--middleware":                   ignoredValue(),
		"--max-log-len":                  ignoredValue(),
		"--max-logprobs":                 ignoredValue(),
		"--api-server-count":             ignoredValue(),
		"--data-parallel-address":        ignoredValue(),
		"--data-parallel-rpc-port":       ignoredValue(),
		"--data-parallel-backend":        ignoredValue(),
		"--worker-extension-cls":         ignoredValue(),
		"--log-config-file":              ignoredValue(),
		"--generation-config":            ignoredValue(),
		"--data-parallel-size-local":     ignoredValue(),
		"--data-parallel-start-rank":     ignoredValue(),
		"--override-generation-config":   ignoredValue(),
		"--guided-decoding-backend":      ignoredValue(),
		"--structured-outputs-config":    ignoredValue(),
		"--limit-mm-per-prompt":          {ignored: true, note: "multimodal input limits: the simulated requests are text only; the encoder's weights are counted as loaded and its profiling budget is not simulated"},
		"--otlp-traces-endpoint":         ignoredValue(),
		"--collect-detailed-traces":      ignoredValue(),
		"--kv-events-config":             ignoredValue(),
		"--tokenizer-pool-size":          ignoredValue(),
		"--all2all-backend":              stringFlag(func(e *deploy.EngineArgs, s string) { e.All2AllBackend = s }),

		// Known flags with no effect on the simulation, without a value.
		"--enable-auto-tool-choice":          ignoredBool(),
		"--enable-reasoning":                 ignoredBool(),
		"--trust-remote-code":                ignoredBool(),
		"--enable-ep-weight-filter":          ignoredBool(),
		"--disable-log-requests":             ignoredBool(),
		"--enable-log-requests":              ignoredBool(),
		"--disable-log-stats":                ignoredBool(),
		"--enable-log-outputs":               ignoredBool(),
		"--disable-fastapi-docs":             ignoredBool(),
		"--disable-uvicorn-access-log":       ignoredBool(),
		"--enable-prompt-tokens-details":     ignoredBool(),
		"--enable-server-load-tracking":      ignoredBool(),
		"--enable-force-include-usage":       ignoredBool(),
		"--enable-request-id-headers":        ignoredBool(),
		"--enable-tokenizer-info-endpoint":   ignoredBool(),
		"--return-tokens-as-token-ids":       ignoredBool(),
		"--disable-frontend-multiprocessing": ignoredBool(),
		"--enable-sleep-mode":                ignoredBool(),
		"--skip-tokenizer-init":              ignoredBool(),
		"--headless":                         ignoredBool(),
		"--disable-custom-all-reduce":        {kind: boolFlag, setBool: func(e *deploy.EngineArgs, b bool) { e.DisableCustomAllReduce = b }},
	}
}

func ignoredValue() *flagSpec { return &flagSpec{ignored: true} }
func ignoredBool() *flagSpec  { return &flagSpec{kind: boolFlag, ignored: true} }

func intFlag(apply func(*deploy.EngineArgs, int)) *flagSpec {
	return &flagSpec{set: func(p *parser, name, v string) error {
		n, err := positiveInt(name, v)
		if err == nil {
			apply(&p.res.Args, n)
		}
		return err
	}}
}

func stringFlag(apply func(*deploy.EngineArgs, string)) *flagSpec {
	return &flagSpec{set: func(p *parser, _, v string) error {
		apply(&p.res.Args, v)
		return nil
	}}
}

// humanIntFlag is a flag vLLM reads with human_readable_int (see parseHumanInt).
func humanIntFlag(apply func(*deploy.EngineArgs, int)) *flagSpec {
	return &flagSpec{set: func(p *parser, name, v string) error {
		n, ok := parseHumanInt(v)
		if !ok || n <= 0 {
			return fmt.Errorf("%s %q: want a positive integer, optionally with a suffix k, m, g (x1000) or K, M, G (x1024), e.g. 16k", name, v)
		}
		apply(&p.res.Args, n)
		return nil
	}}
}

// positiveInt reads a flag vLLM reads with argparse's type=int (Python's int(): see pyInt).
func positiveInt(name, v string) (int, error) {
	n, ok := pyInt(v)
	if !ok || n <= 0 {
		return 0, fmt.Errorf("%s %q: want a positive integer", name, v)
	}
	return n, nil
}

var humanRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([kKmMgG])$`)

// maxHumanInt bounds parsed lengths far beyond any context so that conversions cannot overflow.
const maxHumanInt = 1 << 50

// parseHumanInt reads an integer the way vLLM's human_readable_int does: a plain integer (as
// Python's int() reads it: pyInt), or a number with a suffix, k/m/g meaning x1e3/x1e6/x1e9
// (decimals allowed, the product truncated: 25.6k = 25600) and K/M/G meaning x2^10/x2^20/x2^30
// (integers only: 1M = 1048576).
func parseHumanInt(s string) (int, bool) {
	s = strings.TrimSpace(s)
	m := humanRE.FindStringSubmatch(s)
	if m == nil {
		return pyInt(s)
	}
	num, suffix := m[1], m[2]
	switch suffix {
	case "K", "M", "G":
		shift := map[string]uint{"K": 10, "M": 20, "G": 30}[suffix]
		n, err := strconv.Atoi(num)
		if err != nil || n > maxHumanInt>>shift {
			return 0, false
		}
		return n << shift, true
	}
	mult := map[string]float64{"k": 1e3, "m": 1e6, "g": 1e9}[suffix]
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f*mult > maxHumanInt {
		return 0, false
	}
	return int(f * mult), true
}

func setMaxModelLen(p *parser, name, v string) error {
	if t := strings.TrimSpace(v); t == "-1" || strings.EqualFold(t, "auto") {
		return fmt.Errorf("%s %s: vLLM fits the longest context the KV cache holds; servesim does not simulate that search: give a number (without the flag, max_model_len is what the model's config allows)", name, v)
	}
	n, ok := parseHumanInt(v)
	if !ok || n <= 0 {
		return fmt.Errorf("%s %q: want a positive integer, optionally with a suffix k, m, g (x1000) or K, M, G (x1024), e.g. 128k or 1M", name, v)
	}
	p.res.Args.MaxModelLen = &n
	return nil
}

func setGPUMemoryUtilization(p *parser, name, v string) error {
	f, ok := pyFloat(v)
	if !ok || math.IsNaN(f) {
		return fmt.Errorf("%s %q: want a number in (0, 1]", name, v)
	}
	if !(f > 0 && f <= 1) {
		return fmt.Errorf("%s %s: want a number in (0, 1]", name, v)
	}
	p.res.Args.GPUMemoryUtilization = &f
	return nil
}

// kvCacheDTypes are vLLM's --kv-cache-dtype choices plus the short spellings deploy.EngineConfig accepts.
func kvCacheDTypes() []string {
	return []string{"auto", "bfloat16", "bf16", "float16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla"}
}

func setKVCacheDType(p *parser, name, v string) error {
	if !slices.Contains(kvCacheDTypes(), v) {
		return fmt.Errorf("%s %q: want one of %s", name, v, strings.Join(kvCacheDTypes(), ", "))
	}
	p.res.Args.KVCacheDType = &v
	return nil
}

func setMaxCaptureSize(p *parser, name, v string) error {
	n, ok := pyInt(v)
	if !ok || n < 0 {
		return fmt.Errorf("%s %q: want a non-negative integer", name, v)
	}
	p.res.Args.MaxCaptureSize = &n
	return nil
}

// jsonObject decodes a flag's JSON object value.
func jsonObject(name, v string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s: invalid JSON at offset %d: %v", name, se.Offset, se)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: want a JSON object, got a JSON %s", name, te.Value)
		}
		return nil, fmt.Errorf("%s: invalid JSON: %v", name, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: want a JSON object, got null", name)
	}
	return m, nil
}

func validateJSONObject(_ *parser, name, v string) error {
	_, err := jsonObject(name, v)
	return err
}

// jsonString decodes a string member; null is "".
func jsonString(name, key string, raw json.RawMessage) (string, error) {
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: %q is %s: want a string", name, key, raw)
	}
	if s == nil {
		return "", nil
	}
	return *s, nil
}

// jsonInt decodes an integer member (7, 7.0 or "7", as pydantic accepts); null is ok=false.
func jsonInt(name, key string, raw json.RawMessage) (n int, ok bool, err error) {
	var num *json.Number
	if json.Unmarshal(raw, &num) == nil {
		if num == nil {
			return 0, false, nil
		}
		f, ferr := strconv.ParseFloat(string(*num), 64)
		if ferr == nil && f == math.Trunc(f) && math.Abs(f) <= maxHumanInt {
			return int(f), true, nil
		}
	}
	return 0, false, fmt.Errorf("%s: %q is %s: want an integer", name, key, raw)
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// setSpeculativeConfig reads --speculative-config. It replaces the base's speculative settings.
func setSpeculativeConfig(p *parser, name, v string) error {
	m, err := jsonObject(name, v)
	if err != nil {
		return err
	}
	var s deploy.Speculative
	var ignored []string
	hasTokens := false
	for _, k := range sortedKeys(m) {
		raw := m[k]
		switch k {
		case "method":
			s.Method, err = jsonString(name, k, raw)
		case "model":
			s.Model, err = jsonString(name, k, raw)
		case "kv_cache_dtype":
			s.KVCacheDType, err = jsonString(name, k, raw)
		case "num_speculative_tokens":
			s.NumTokens, hasTokens, err = jsonInt(name, k, raw)
			if err == nil && hasTokens && s.NumTokens <= 0 {
				err = fmt.Errorf("%s: %q is %s: want a positive integer", name, k, raw)
			}
		case "draft_tensor_parallel_size":
			_, _, err = jsonInt(name, k, raw)
		default:
			ignored = append(ignored, k)
		}
		if err != nil {
			return err
		}
	}
	if s.Method == "" {
		if s.Model == "" {
			return fmt.Errorf("%s: want a \"method\" or a \"model\"", name)
		}
		s.Method = inferSpecMethod(s.Model)
		if s.Method == "ngram" {
			s.Model = ""
		}
		p.note("%s: no method given; inferred %q from the model name as vLLM does", name, s.Method)
	}
	if m, renamed := deploy.CanonicalSpecMethod(s.Method); renamed {
		p.note("%s: method %q is read as %q, as vLLM does (the model-specific name is deprecated)", name, s.Method, m)
		s.Method = m
	}
	if !slices.Contains(deploy.SpecMethods(), s.Method) {
		return fmt.Errorf("%s: method %q: want one of %s", name, s.Method, strings.Join(deploy.SpecMethods(), ", "))
	}
	if len(ignored) > 0 {
		p.note("%s: keys not simulated: %s", name, strings.Join(ignored, ", "))
	}
	p.spec, p.specGiven = s, true
	return nil
}

// inferSpecMethod guesses the method from a draft model's name when none is given, following
// vLLM's SpeculativeConfig (EAGLE-3 and EAGLE heads by name, anything else a draft model), plus
// DFlash drafters by name.
func inferSpecMethod(modelName string) string {
	l := strings.ToLower(modelName)
	switch {
	case l == "ngram" || l == "[ngram]":
		return "ngram"
	case strings.Contains(l, "eagle3"):
		return "eagle3"
	case strings.Contains(l, "eagle"):
		return "eagle"
	case strings.Contains(l, "dflash"):
		return "dflash"
	}
	return "draft_model"
}

// setCompilationConfig reads the CUDA-graph capture size out of --compilation-config.
func setCompilationConfig(p *parser, name, v string) error {
	if _, ok := pyInt(v); ok {
		p.note("%s %s: an optimisation level; not simulated", name, v)
		return nil
	}
	m, err := jsonObject(name, v)
	if err != nil {
		return err
	}
	explicit, hasExplicit := 0, false
	largest, hasSizes := 0, false
	var ignored []string
	for _, k := range sortedKeys(m) {
		raw := m[k]
		switch k {
		case "max_cudagraph_capture_size":
			explicit, hasExplicit, err = jsonInt(name, k, raw)
			if err == nil && explicit < 0 {
				err = fmt.Errorf("%s: %q is %s: want a non-negative integer", name, k, raw)
			}
		case "cudagraph_capture_sizes":
			var sizes []json.RawMessage
			if json.Unmarshal(raw, &sizes) != nil {
				return fmt.Errorf("%s: %q is %s: want a list of integers", name, k, raw)
			}
			hasSizes = sizes != nil
			for _, r := range sizes {
				n, ok, ierr := jsonInt(name, k, r)
				if ierr != nil || !ok || n <= 0 {
					return fmt.Errorf("%s: %q has %s: want positive integers", name, k, r)
				}
				largest = max(largest, n)
			}
		default:
			ignored = append(ignored, k)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case hasExplicit && hasSizes && explicit != largest:
		return fmt.Errorf("%s: max_cudagraph_capture_size %d disagrees with the largest of cudagraph_capture_sizes, %d", name, explicit, largest)
	case hasExplicit:
		p.res.Args.MaxCaptureSize = &explicit
	case hasSizes:
		p.res.Args.MaxCaptureSize = &largest
	}
	if len(ignored) > 0 {
		p.note("%s: keys not simulated: %s", name, strings.Join(ignored, ", "))
	}
	return nil
}

// setOptimizationLevel reads -O0..-O3 (--optimization-level): level 0 captures no CUDA graphs,
// which the simulation runs as enforce_eager; level 1 captures piecewise graphs only, which is not
// simulated (decode runs full graphs in the simulation) and says so; 2 (the default) and 3 change
// nothing simulated.
func setOptimizationLevel(p *parser, name, v string) error {
	n, ok := pyInt(v)
	if !ok || n < 0 || n > 3 {
		return fmt.Errorf("%s %q: want an optimization level 0..3", name, v)
	}
	switch n {
	case 0:
		t := true
		p.res.Args.EnforceEager = &t
		p.note("%s %d: no compilation and no CUDA graphs: simulated as enforce_eager", name, n)
	case 1:
		p.note("%s %d: piecewise CUDA graphs only: not simulated (the simulation captures full decode graphs, as at -O2)", name, n)
	}
	return nil
}

// setDType reads --dtype, the dtype of the activations and of an unquantized checkpoint's
// weights (vLLM's ModelConfig.dtype: auto, half, float16, bfloat16, float, float32). The 16-bit
// choices are what servesim simulates (16-bit weights and activations have the same bytes and
// tensor-core rate in either format; a quantized checkpoint keeps its weight format); 32-bit
// weights and activations are refused: they double an unquantized model's weight bytes and run
// at rates the GPU catalog does not carry.
func setDType(p *parser, name, v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "auto", "half", "float16", "bfloat16":
		p.note("%s %s: 16-bit activations (and weights, for an unquantized checkpoint): the bytes and tensor-core rates simulated for the model as described", name, v)
		return nil
	case "float", "float32":
		return fmt.Errorf("%s %s: 32-bit weights and activations are not simulated (an unquantized checkpoint's weights take twice the memory, and the GPU catalog has no 32-bit rates); leave it out or give bfloat16 or float16", name, v)
	}
	return fmt.Errorf("%s %q: want auto, half, float16, bfloat16, float or float32", name, v)
}
