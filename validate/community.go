package validate

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	summary "github.com/servesim/servesim/internal/stats"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hf"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

// The rows of community builds on RTX PRO 6000 cards (README 1.6): speculative decoding from the
// checkpoint's own MTP layer or a DFlash drafter, decode context parallel, the flags the builds
// record as key=value remarks, and the workload kinds of that file. The measured "server facts"
// (acceptance per verifier step, verifier steps/s, KV capacity) are read from the notes.

// communityModels maps community checkpoints to the built-in description of the same model, with
// what the row's checkpoint is.
func communityModels() map[string]string {
	return map[string]string{
		"local-inference-lab/glm-5.3-flash-nvfp4": "nvidia/GLM-5.3-Flash-NVFP4",
	}
}

// dflashDrafters maps a target model (its name) to the built-in DFlash drafter trained for it.
func dflashDrafters() map[string]string {
	return map[string]string{"glm-5.3-flash": "incoai/GLM-5.3-Flash-DFlash2"}
}

// communityVersion is the vLLM release the community builds of README 1.6 are composed on (their
// R31 and R33 images report "vLLM 0.26.1rc0+glm53..."): their defaults follow it.
const communityVersion = "0.26.1"

// communitySeries names the community builds' engine series: their engine-level values (step and
// CPU overheads, memory reserves) are fitted apart from vLLM's releases.
const communitySeries = "community builds (local-inference-lab)"

// isCommunityBuild reports whether the recorded engine_version is a community build, not a vLLM
// release.
func isCommunityBuild(v string) bool {
	l := strings.ToLower(v)
	for _, k := range []string{"community", "jovian", "karmic", "jj wheel", "prepared-plan", "r17 comparison", "r24 vllm", "localinferencelab", "voipmonitor"} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}

// speculative sets --speculative-config from spec_method and spec_tokens: mtp runs the
// checkpoint's own multi-token-prediction layer; dflash the built-in drafter trained for the
// target. Other methods need a drafter description the corpus does not give.
func (c *Case) speculative() error {
	r := c.Row
	m := strings.ToLower(strings.TrimSpace(r.SpecMethod))
	switch {
	case m == "" || m == "none" || (r.SpecTokens == 0 && m != "unstated"):
		return nil
	case m == "unstated":
		return fmt.Errorf("speculative decoding not stated (spec_method %q): the serving mode of the run is not known", r.SpecMethod)
	case m == "mtp" || m == "deepseek_mtp" || m == "glm4_moe_mtp":
		if c.Model.MTPLayers == 0 {
			return fmt.Errorf("speculative decoding mtp: model %q carries no multi-token-prediction layer", r.Model)
		}
		c.Args.Speculative = &deploy.Speculative{Method: "mtp", NumTokens: r.SpecTokens}
		c.note("speculative decoding mtp k = %d: the checkpoint's own MTP layer (%d), run k times per step; acceptance mtp_accept_tau", r.SpecTokens, c.Model.MTPLayers)
		return nil
	case m == "dflash":
		id, ok := dflashDrafters()[c.Model.Name]
		if !ok {
			return fmt.Errorf("speculative decoding dflash with %d tokens: no DFlash drafter of model %q is described (built-in: %s)", r.SpecTokens, r.Model, strings.Join(dflashTargets(), ", "))
		}
		d, prov, err := hf.Builtin(id)
		if err != nil {
			return err
		}
		note := fmt.Sprintf("speculative decoding dflash k = %d: the built-in drafter %s", r.SpecTokens, prov.ID)
		if strings.Contains(strings.ToLower(r.EngineFlags), "mxfp8") {
			// MXFP8: 8-bit values with one e8m0 scale per 32, an fp8 GEMM on Blackwell.
			d = deploy.WithWeights(d, arch.FP8)
			note += " in the rows' MXFP8 copy (weights 8-bit, as fp8)"
		}
		c.Drafter = d
		c.Args.Speculative = &deploy.Speculative{Method: "dflash", Model: id, NumTokens: r.SpecTokens}
		c.note("%s", note)
		return nil
	}
	return fmt.Errorf("speculative decoding %s with %d tokens: the corpus's rows give no drafter description", r.SpecMethod, r.SpecTokens)
}

func dflashTargets() []string {
	var out []string
	for k := range dflashDrafters() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Patterns of the community rows' flags and notes.
func pageRE() *regexp.Regexp { return regexp.MustCompile(`cache_pages=(\d+)-token`) }
func captureRE() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:MAX_CUDAGRAPH_CAPTURE_SIZE=|max capture )(\d+)`)
}
func kvBytesRE() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^explicit (?:[a-z0-9]+ )?KV ([0-9][0-9,]*) bytes`)
}
func windowSRE() *regexp.Regexp { return regexp.MustCompile(`(\d+)-s (?:window|sustained)`) }
func factRE() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[;\s])([a-z][a-z0-9_]*)=([0-9][0-9.,\-]*)`)
}
func promptLenRE() *regexp.Regexp {
	return regexp.MustCompile(`(\d+)-token (?:mathematics|maths) prompt`)
}

// communityFlags reads the key=value remarks of the community builds' engine_flags that change
// what is simulated; it returns true for an item it took.
func (c *Case) communityFlag(key, val, item string) bool {
	a := &c.Args
	low := strings.ToLower(key)
	if m := kvBytesRE().FindStringSubmatch(item); m != nil {
		// "explicit FP8 KV 33,554,432,000 bytes (31.25 GiB) per GPU": --kv-cache-memory-bytes.
		if n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", "")); err == nil && n > 0 {
			a.KVCacheMemoryBytes = deploy.Ptr(n)
			c.note("the KV cache set to %d bytes a GPU (kv_cache_memory_bytes), in place of what gpu_memory_utilization leaves", n)
			return true
		}
	}
	switch {
	case low == "gpu_memory_utilization":
		if v, err := strconv.ParseFloat(val, 64); err == nil && v > 0 && v <= 1 {
			a.GPUMemoryUtilization = deploy.Ptr(v)
			return true
		}
	case low == "decode_context_parallel_size":
		if n, err := strconv.Atoi(strings.Fields(val + " ")[0]); err == nil && n >= 1 {
			if n > 1 {
				a.DecodeContextParallel = deploy.Ptr(n)
				c.note("decode context parallel %d: the KV cache split token by token over %d ranks; each attends over its share with every head, the partial outputs combined", n, n)
			}
			return true
		}
	case low == "kv_cache_quant":
		if strings.HasPrefix(strings.ToLower(val), "nvfp4") {
			a.KVCacheDType = deploy.Ptr("nvfp4")
		}
		return true
	case low == "cache_pages":
		// The page is the cache's block of each rank: the layout's block size once the context
		// parallel size is known (pageBlock).
		if m := pageRE().FindStringSubmatch(item); m != nil {
			c.pageTokens, _ = strconv.Atoi(m[1])
			return true
		}
	case low == "max_cudagraph_capture_size" || strings.HasPrefix(low, "cuda graphs max capture"):
		if m := captureRE().FindStringSubmatch(item); m != nil {
			n, _ := strconv.Atoi(m[1])
			a.MaxCaptureSize = deploy.Ptr(n)
			return true
		}
	}
	return false
}

// pageBlock sets the KV-cache block from the rows' cache pages ("cache_pages=2048-token
// target+recurrent"): a page holds that many tokens of a rank's cache, so with decode context
// parallel, where a rank caches every DCP-th token, a block spans page x DCP tokens of context
// (vLLM's virtual block size). A page too small for a recurrent-state page is raised by the layout.
func (c *Case) pageBlock() {
	if c.pageTokens <= 0 || c.pageTokens%16 != 0 {
		return
	}
	dcp := 1
	if p := c.Args.DecodeContextParallel; p != nil && *p > 1 {
		dcp = *p
	}
	c.Args.BlockSize = deploy.Ptr(c.pageTokens * dcp)
	c.note("cache pages of %d tokens a rank: block size %d tokens of context", c.pageTokens, c.pageTokens*dcp)
}

// Facts are the measured numbers a community row publishes in its notes: accepted tokens per
// verifier step (bonus token included) at C = 1 and 8, verifier steps/s (at C > 1 summed over
// requests), KV capacity as pages x page width and as vLLM's logical count. NaN: not published.
type Facts struct {
	AcceptC1, AcceptC8 float64
	StepsC1, StepsC8   float64
	// Steps is the verifier steps/s of the row's own run (a decode window or a fixed-prompt
	// decode), Accept the tokens per verifier step it implies (output tok/s / Steps).
	Steps, Accept   float64
	KVTokens        float64
	KVLogicalTokens float64
}

func nanFacts() Facts {
	n := math.NaN()
	return Facts{n, n, n, n, n, n, n, n}
}

// Any reports whether a fact is published.
func (f *Facts) Any() bool {
	for _, v := range []float64{f.AcceptC1, f.AcceptC8, f.StepsC1, f.StepsC8, f.Steps, f.Accept, f.KVTokens, f.KVLogicalTokens} {
		if usable(v) {
			return true
		}
	}
	return false
}

// readFacts reads the notes' key=value facts.
func readFacts(r *Row) Facts {
	f := nanFacts()
	kv := map[string]string{}
	for _, m := range factRE().FindAllStringSubmatch(r.Notes, -1) {
		if _, ok := kv[m[1]]; !ok {
			kv[m[1]] = strings.TrimRight(m[2], ".,")
		}
	}
	num := func(keys ...string) float64 {
		for _, k := range keys {
			s, ok := kv[k]
			if !ok {
				continue
			}
			if lo, hi, ok := strings.Cut(s, "-"); ok && lo != "" {
				// A range: its midpoint.
				a, err1 := strconv.ParseFloat(lo, 64)
				b, err2 := strconv.ParseFloat(hi, 64)
				if err1 == nil && err2 == nil {
					return (a + b) / 2
				}
				continue
			}
			if strings.Contains(s, ",") {
				// Samples: their median.
				var xs []float64
				for _, p := range strings.Split(s, ",") {
					if v, err := strconv.ParseFloat(p, 64); err == nil {
						xs = append(xs, v)
					}
				}
				if len(xs) == 0 {
					continue
				}
				sort.Float64s(xs)
				return summary.Quantile(xs, 0.5)
			}
			if v, err := strconv.ParseFloat(s, 64); err == nil {
				return v
			}
		}
		return math.NaN()
	}
	f.AcceptC1 = num("accepted_per_step_c1", "accepted_per_step_c1_median", "accepted_per_step_c1_mean", "emitted_tokens_per_step_c1", "accepted_per_step_c1_range")
	if !usable(f.AcceptC1) && strings.Contains(r.Notes, "workload=CC1") {
		f.AcceptC1 = num("accepted_per_step")
	}
	f.AcceptC8 = num("accepted_per_step_c8")
	f.StepsC1 = num("verifier_steps_s_c1", "verifier_steps_s_c1_samples", "target_steps_s_c1")
	f.StepsC8 = num("target_steps_s_c8")
	f.KVTokens = num("kv_capacity_tokens")
	f.KVLogicalTokens = num("logical_gpu_kv_capacity_tokens")
	if r.WorkloadKind != "server-facts" {
		f.Steps = num("verifier_steps_s")
		if usable(f.Steps) && usable(r.Measured.OutputTokS) {
			f.Accept = r.Measured.OutputTokS / f.Steps
		}
		f.AcceptC1, f.AcceptC8, f.StepsC1, f.StepsC8 = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	if f.AcceptC1 == 1 && r.SpecTokens == 0 {
		// "1.0 emitted tokens per step" without speculation says nothing to score.
		f.AcceptC1 = math.NaN()
	}
	return f
}

// decodePrompt is the community client's context-0 prompt: its 78-token mathematics prompt.
const decodePrompt = 78

// sievePrompt is the tokens of the fixed coding prompt ("Write a Python script that implements
// the Sieve of Eratosthenes.") with the chat template's tokens around it (an estimate: the rows
// do not give it).
const sievePrompt = 30

// communityWorkload maps the workload kinds of README 1.6. ok is false for the other kinds.
func (c *Case) communityWorkload() (ok bool, err error) {
	r := c.Row
	c.facts = readFacts(r)
	switch r.WorkloadKind {
	case "decode-window":
		return true, c.decodeWindow()
	case "fixed-prompt-c1-decode":
		return true, c.fixedPromptDecode()
	case "single-prefill":
		return true, c.singlePrefill()
	case "server-facts":
		return true, c.serverFacts()
	case "prefix-cache-restore":
		if strings.Contains(strings.ToLower(r.Notes), "gpu prefix-cache reuse") || strings.Contains(strings.ToLower(r.Notes), "gpu-local replay") {
			return true, fmt.Errorf("prefix-cache restore from the GPU prefix cache: the row's API elapsed time includes an answer whose length is not recorded")
		}
		return true, fmt.Errorf("prefix-cache restore from an external KV tier (LMCache RAM or filesystem): servesim simulates the GPU prefix cache only")
	case "single-request-e2e":
		return true, fmt.Errorf("single request end to end: the output length of the answer is not recorded (only the complete response time)")
	}
	return false, nil
}

// windowSeconds is the row's measurement window (30 s unless the notes say otherwise).
func (c *Case) windowSeconds() float64 {
	if m := windowSRE().FindStringSubmatch(c.Row.Notes); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil && v > 0 {
			return v
		}
	}
	return 30
}

// benchCell is the community client's decode cell: C streams of one prompt, closed loop, outputs
// to max_tokens (the simulation has no EOS), measured over a window.
func (c *Case) benchCell(conc int, prompt, maxOut int) *workload.Spec {
	return &workload.Spec{Name: c.ID, Kind: workload.KindLLMBenchCell, HasSeed: true, Seed: rowSeed(c.ID),
		Cell: workload.LLMBenchCell{Context: strconv.Itoa(prompt), Concurrency: conc, DurationS: c.windowSeconds(), MaxOutput: maxOut}}
}

func (c *Case) decodeWindow() error {
	r := c.Row
	if r.Concurrency <= 0 {
		return fmt.Errorf("decode-window without a concurrency")
	}
	out := 8192
	if usable(r.OutputTokensNominal) {
		out = int(r.OutputTokensNominal)
	}
	c.Spec = c.benchCell(r.Concurrency, decodePrompt, out)
	c.Workload = fmt.Sprintf("decode window: %d streams of one %d-token prompt, closed loop, outputs to max_tokens %d, %g-s window", r.Concurrency, decodePrompt, out, c.windowSeconds())
	c.note("the community client's context-0 prompt (%d tokens) run as a decode cell: hidden warm-ups and a scout, then the streams; outputs run to max_tokens (the simulation has no EOS)", decodePrompt)
	return nil
}

func (c *Case) fixedPromptDecode() error {
	r := c.Row
	in := sievePrompt
	code := strings.Contains(strings.ToLower(r.CaseID+" "+r.LenDist+" "+r.Notes), "sieve")
	if m := promptLenRE().FindStringSubmatch(r.LenDist + " " + r.Notes); m != nil {
		in, _ = strconv.Atoi(m[1])
	} else if usable(r.InputTokens) {
		in = int(r.InputTokens)
	} else if code {
		c.note("the coding prompt's length is not recorded: %d tokens with the chat template (estimate)", in)
	}
	out := 2000
	switch {
	case usable(r.OutputTokensNominal):
		out = int(r.OutputTokensNominal)
	case usable(r.OutputTokens):
		out = int(r.OutputTokens)
	default:
		c.note("output cap not recorded: %d (the file's other fixed-prompt rows)", out)
	}
	n := max(r.NumRequests, 3)
	c.Spec = &workload.Spec{Name: c.ID, Kind: workload.KindClosed, HasSeed: true, Seed: rowSeed(c.ID),
		Closed:  workload.Closed{Requests: n, Concurrency: 1},
		Lengths: workload.Lengths{InputTokens: in, OutputTokens: out, SamePrompt: true}}
	c.Workload = fmt.Sprintf("fixed prompt at C = 1: %d requests of %d input + %d output tokens; tok/s = completion tokens / (last - first streamed token)", n, in, out)
	c.genRate = true
	if code {
		c.codePrompt = true
		c.note("a coding prompt: acceptance x accept_code_ratio (code_prompt 1)")
	}
	return nil
}

func (c *Case) singlePrefill() error {
	r := c.Row
	in := 0
	switch {
	case usable(r.InputTokens):
		in = int(r.InputTokens)
	case usable(r.InputTokensNominal):
		in = int(r.InputTokensNominal)
	default:
		in = 32768
		c.note("a \"32K bucket\" prompt whose exact length is not published: 32,768 tokens")
	}
	n := max(r.NumRequests, 1)
	c.Spec = &workload.Spec{Name: c.ID, Kind: workload.KindClosed, HasSeed: true, Seed: rowSeed(c.ID),
		Closed:  workload.Closed{Requests: n, Concurrency: 1},
		Lengths: workload.Lengths{InputTokens: in, OutputTokens: 1}}
	c.Workload = fmt.Sprintf("single cold prefill: %d requests of %d unique tokens, 1 output token each, one at a time; prefill tok/s = prompt tokens / client TTFT", n, in)
	c.prefillTokens = in
	return nil
}

func (c *Case) serverFacts() error {
	c.facts = readFacts(c.Row)
	f := &c.facts
	if !f.Any() {
		return fmt.Errorf("server facts: the notes publish no acceptance, verifier step rate or KV capacity servesim predicts")
	}
	if usable(f.AcceptC1) || usable(f.StepsC1) {
		c.factRuns = append(c.factRuns, 1)
	}
	if usable(f.AcceptC8) || usable(f.StepsC8) {
		c.factRuns = append(c.factRuns, 8)
	}
	var parts []string
	for _, n := range c.factRuns {
		parts = append(parts, fmt.Sprintf("C = %d", n))
	}
	c.Workload = "server facts"
	if len(parts) > 0 {
		c.Workload += fmt.Sprintf(": decode windows of the %d-token prompt at %s (acceptance and verifier steps/s)", decodePrompt, strings.Join(parts, " and "))
	}
	if usable(f.KVTokens) || usable(f.KVLogicalTokens) {
		c.Workload += "; the KV cache layout (capacity)"
	}
	return nil
}

// The metric families of the community rows, scored apart from each other: a speculative
// prediction's acceptance (tokens per verifier step) and its verifier step rate are two families,
// so an error in one cannot hide behind the other in their product, the output tok/s.
const (
	FamAccept  = "accepted_per_step"
	FamSteps   = "verifier_steps_s"
	FamPrefill = "prefill_tok_s"
	FamKV      = "kv_capacity_tokens"
)

// FactFamilies is the families scored beside Families, in report order.
func FactFamilies() []string { return []string{FamAccept, FamSteps, FamPrefill, FamKV} }

// factComparisons lists the case's comparisons of the facts the row publishes (Facts) and of a
// single prefill's prompt throughput.
func factComparisons(c *Case, p *Prediction, failed bool) []Comparison {
	if p == nil {
		return nil
	}
	var m *Measured
	if c.Row != nil {
		m = &c.Row.Measured
	}
	f := &c.facts
	type fact struct {
		name, family string
		meas, pred   float64
	}
	facts := []fact{
		{"accepted_per_step", FamAccept, f.Accept, p.AcceptPerStep},
		{"accepted_per_step_c1", FamAccept, f.AcceptC1, p.AcceptC1},
		{"accepted_per_step_c8", FamAccept, f.AcceptC8, p.AcceptC8},
		{"verifier_steps_s", FamSteps, f.Steps, p.VerifierStepsS},
		{"verifier_steps_s_c1", FamSteps, f.StepsC1, p.StepsC1},
		{"verifier_steps_s_c8", FamSteps, f.StepsC8, p.StepsC8},
		{"kv_capacity_tokens", FamKV, f.KVTokens, p.KVTokens},
		{"kv_capacity_logical_tokens", FamKV, f.KVLogicalTokens, p.KVLogicalTokens},
	}
	if m != nil {
		facts = append(facts, fact{"prefill_tok_s", FamPrefill, m.PrefillTokS, p.PrefillTokS})
	}
	var out []Comparison
	primary := map[string]bool{}
	for _, x := range facts {
		if !usable(x.meas) || !usable(x.pred) {
			continue
		}
		cmp := Comparison{Metric: x.name, Family: x.family, Predicted: x.pred, Measured: x.meas, Scored: !failed, Primary: !primary[x.family]}
		primary[x.family] = true
		out = append(out, cmp)
	}
	return out
}

// simulateFacts predicts a server-facts row: the decode windows of the community client's prompt
// at the concurrencies whose acceptance or verifier step rate the row publishes, and the KV
// capacity of the server's layout.
func (c *Case) simulateFacts(srv *sim.Server, seed uint64) (*Prediction, error) {
	p := nanPrediction()
	for _, n := range c.factRuns {
		m, err := workload.Run(srv, c.benchCell(n, decodePrompt, 8192), workload.Options{Seed: seed})
		if err != nil {
			return nil, fmt.Errorf("decode window at C = %d: %w", n, err)
		}
		acc, steps := acceptance(m, srv)
		if n == 1 {
			p.AcceptC1, p.StepsC1 = acc, steps
		} else {
			p.AcceptC8, p.StepsC8 = acc, steps
		}
	}
	// The page-based count is pages x page width: the tokens of context the pool's blocks hold
	// when all of them serve the main attention layers (num_gpu_blocks x block size over the
	// groups those layers fill); the logical one vLLM's max concurrency x max_model_len, which
	// also charges a request's recurrent-state and drafter blocks.
	l := srv.Layout
	p.KVTokens = float64(l.PageTokens()) * float64(srv.Replicas)
	p.KVLogicalTokens = float64(l.KVCacheSizeTokens) * float64(srv.Replicas)
	return p, nil
}

// acceptance is a run's mean acceptance length (output tokens per verifier step) and verifier
// steps/s (summed over requests), NaN without speculative decoding's steps.
func acceptance(m *workload.Metrics, srv *sim.Server) (acc, steps float64) {
	if m.VerifierSteps <= 0 || !(m.DurationS > 0) {
		return math.NaN(), math.NaN()
	}
	return float64(m.OutputTokens) / float64(m.VerifierSteps), float64(m.VerifierSteps) / m.DurationS
}
