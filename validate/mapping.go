package validate

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/vllmcmd"
	"github.com/servesim/servesim/workload"
)

// Scoring is how a case is compared with its measurement.
type Scoring string

const (
	// Absolute compares predicted and measured values (vLLM rows).
	Absolute Scoring = "absolute"
	// Ratio compares predicted ratios between rows with measured ratios, never absolute values
	// (rows of another engine: TensorRT-LLM, SGLang).
	Ratio Scoring = "ratio"
)

// Reason classes of rows that are not expressed (counted in the summary).
const (
	ReasonModel    = "model not known"
	ReasonGPU      = "GPU not known"
	ReasonEngine   = "engine not simulated"
	ReasonWorkload = "workload not expressible"
	ReasonParallel = "parallelism not simulated"
	ReasonBuild    = "deployment does not start"
	ReasonRun      = "simulation failed"
	ReasonInput    = "row incomplete"
)

// Case is a corpus row mapped to what servesim simulates: the model, the GPUs, the vLLM flags as
// the row gives them (EngineArgs: an absent flag takes vLLM's default for the recorded version),
// the pipeline stages approximated, and the workload. Reason is set when the row cannot be
// expressed, with ReasonClass its category.
type Case struct {
	Row     *Row    `json:"-"`
	ID      string  `json:"case_id"`
	Source  string  `json:"source"`
	Scoring Scoring `json:"scoring"`

	Model     *arch.Arch        `json:"-"`
	ModelFrom string            `json:"model_from,omitempty"`
	GPU       hardware.GPU      `json:"-"`
	Args      deploy.EngineArgs `json:"-"`
	// Drafter is the speculative drafter's description (dflash), nil otherwise.
	Drafter *arch.Arch `json:"-"`

	// Spec is the workload (nil for constant-rate stages, which Stages describe).
	Spec *workload.Spec `json:"-"`
	// Stages is the constant-rate experiment the row is stage Stage of; every stage of one
	// experiment runs in one simulation (Group names it).
	Stages []Stage `json:"-"`
	Stage  int     `json:"-"`
	Group  string  `json:"group,omitempty"`
	// Workload describes the workload in words.
	Workload string `json:"workload,omitempty"`
	// CountedOutput is the output length the row's client counted (its output_tokens), used for
	// derived metrics; 0: the generated length.
	CountedOutput float64 `json:"-"`
	// DerivedTPOT: the row's TPOT is (e2e_mean - ttft_mean) / (output_tokens - 1), and the
	// prediction is derived the same way.
	DerivedTPOT bool `json:"-"`
	// stageLengths are a constant-rate stage's input, generated output and shared-prefix tokens;
	// stageGroups the number of distinct system prompts; stagePerGroup the number of distinct
	// prompts (questions) in each group that the client cycles through, 0 when every request's
	// question is new.
	stageLengths  [3]int
	stageGroups   int
	stagePerGroup int
	// measured and model are a prepared case's measurement and model id (no Row).
	measured *Measured
	model    string
	// The community rows (community.go): the facts published in the notes; the decode windows
	// run for them (concurrencies); genRate: the row's tok/s is completion tokens / (last -
	// first token) at C = 1; codePrompt: the prompt asks for code; prefillTokens: a single
	// prefill row's prompt.
	facts         Facts
	factRuns      []int
	pageTokens    int
	genRate       bool
	codePrompt    bool
	prefillTokens int

	Notes       []string `json:"notes,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	ReasonClass string   `json:"reason_class,omitempty"`
}

// Stage is one constant-rate stage: rate (requests/s) for Requests requests, evenly spaced.
type Stage struct {
	RatePerS float64
	Requests int
}

func (c *Case) note(format string, a ...any) { c.Notes = append(c.Notes, fmt.Sprintf(format, a...)) }

func (c *Case) refuse(class, format string, a ...any) *Case {
	c.ReasonClass = class
	c.Reason = fmt.Sprintf(format, a...)
	return c
}

// Expressed reports whether the case can be simulated.
func (c *Case) Expressed() bool { return c.Reason == "" }

// Map turns rows into cases, in the rows' order. The rows of one constant-rate experiment (the
// same raw directory in notes) share a Group and run as one simulation.
func Map(rows []Row, cat *hardware.Catalog) []*Case {
	if cat == nil {
		cat = hardware.BuiltinCatalog()
	}
	out := make([]*Case, len(rows))
	for i := range rows {
		out[i] = mapRow(&rows[i], cat)
	}
	groupStages(out)
	return out
}

func mapRow(r *Row, cat *hardware.Catalog) *Case {
	c := &Case{Row: r, ID: r.CaseID, Source: r.Source, Scoring: Absolute, facts: nanFacts()}
	engine := strings.ToLower(r.Engine)
	switch {
	case engine == "vllm":
	case strings.HasPrefix(engine, "tensorrt-llm"), strings.HasPrefix(engine, "trt"):
		c.Scoring = Ratio
		c.note("TensorRT-LLM %s is a different engine: simulated as vLLM %s (LLM class defaults) and scored only as ratios (README 1.5)", r.EngineVersion, deploy.DefaultVersion)
	case engine == "sglang":
		c.Scoring = Ratio
		c.note("SGLang %s is a different engine: simulated as vLLM %s's server and scored only as ratios between its rows (time per output token and output tok/s against the lowest concurrency; README 1.10)", firstWord(r.EngineVersion), deploy.DefaultVersion)
	default:
		return c.refuse(ReasonEngine, "engine %q: servesim simulates vLLM (TensorRT-LLM and SGLang rows as ratios)", r.Engine)
	}
	g, gnote, err := findGPU(cat, r.GPU)
	if err != nil {
		return c.refuse(ReasonGPU, "%v", err)
	}
	c.GPU = g
	if gnote != "" {
		c.note("%s", gnote)
	}
	a, from, err := resolveModel(r.Model, r.WeightDType)
	if err != nil {
		return c.refuse(ReasonModel, "%v", err)
	}
	c.Model, c.ModelFrom = a, from
	if err := c.speculative(); err != nil {
		return c.refuse(ReasonEngine, "%v", err)
	}
	if err := c.engineArgs(); err != nil {
		return c.refuse(ReasonParallel, "%v", err)
	}
	if err := c.workload(); err != nil {
		return c.refuse(ReasonWorkload, "%v", err)
	}
	if c.Spec != nil {
		// The workload's own bounds (lengths, counts), as every other path checks them.
		if err := c.Spec.Validate(); err != nil {
			return c.refuse(ReasonWorkload, "%v", err)
		}
	}
	return c
}

// engineArgs sets the vLLM flags the row records.
func (c *Case) engineArgs() error {
	r := c.Row
	a := &c.Args
	switch {
	case c.Scoring == Ratio && c.otherServer():
		// Another engine's server: vLLM's current release stands for it.
	case c.Scoring == Ratio:
		a.Usage = deploy.UsageLLMClass
	default:
		if _, err := deploy.ParseVersion(firstWord(r.EngineVersion)); err == nil {
			a.Version = firstWord(r.EngineVersion)
		} else if isCommunityBuild(r.EngineVersion) {
			a.Version, a.Series = communityVersion, communitySeries
			c.note("a community build (%s): vLLM %s's defaults, its engine-level values those of the %s series", firstWord(r.EngineVersion), communityVersion, communitySeries)
			if r.SpecMethod != "" && r.SpecMethod != "none" && r.SpecMethod != "mtp" {
				// A separate drafter: the builds size their KV-cache groups by the target's
				// layers (their cache page is "target+recurrent") and pad the drafter's into a
				// group of that size.
				a.KVGroupsByTarget = true
				c.note("KV-cache groups sized by the target's layers, the drafter's padded into groups of that size (the builds' target+recurrent cache page)")
			}
		} else {
			c.note("engine version not recorded (%q): vLLM %s's defaults", r.EngineVersion, deploy.DefaultVersion)
		}
		if r.WorkloadKind == "offline-throughput" {
			a.Usage = deploy.UsageLLMClass
		}
	}
	tp, pp, dp := max(r.TP, 1), max(r.PP, 1), max(r.DP, 1)
	if r.TP == 0 {
		c.note("tp not recorded: 1")
	}
	if r.GPUCount > 0 && r.GPUCount != tp*pp*dp {
		return fmt.Errorf("gpu_count %d is not tp %d x pp %d x dp %d", r.GPUCount, tp, pp, dp)
	}
	a.TensorParallel = deploy.Ptr(tp)
	if pp > 1 {
		a.PipelineParallel = deploy.Ptr(pp)
	}
	if dp > 1 {
		a.DataParallel = deploy.Ptr(dp)
	}
	switch {
	case r.EP > 1 && !c.Model.IsMoE():
		c.note("ep %d: model %s has no experts to split (vLLM's --enable-expert-parallel leaves a dense model as it is); not applied", r.EP, r.Model)
	case r.EP > 1 && r.EP != tp*dp:
		c.note("ep %d: vLLM's expert-parallel size is not a flag of its own but tp x dp = %d; simulated with EP %d", r.EP, tp*dp, tp*dp)
	}
	if c.Model.IsMoE() {
		switch {
		case r.EP > 1 || strings.Contains(r.EngineFlags, "--ep"):
			a.ExpertParallel = deploy.Ptr(true)
			if r.EP <= 1 {
				c.note("expert parallel recorded without a size: experts split over the TP ranks (EP = TP %d)", tp)
			}
		case r.EP == 1:
			a.ExpertParallel = deploy.Ptr(false)
		}
	}
	if r.MaxNumSeqs > 0 {
		a.MaxNumSeqs = deploy.Ptr(r.MaxNumSeqs)
	}
	if r.MaxNumBatchedTokens > 0 {
		a.MaxNumBatchedTokens = deploy.Ptr(r.MaxNumBatchedTokens)
	}
	if r.MaxModelLen > 0 {
		a.MaxModelLen = deploy.Ptr(r.MaxModelLen)
	}
	kv := strings.ToLower(r.KVDType)
	switch {
	case strings.HasPrefix(kv, "nvfp4"):
		a.KVCacheDType = deploy.Ptr("nvfp4")
		c.note("kv_dtype %q: an NVFP4 sparse-MLA cache (half a byte per latent value, an fp8 scale per 16)", r.KVDType)
	case kv == "" || kv == "auto":
	case strings.HasPrefix(kv, "auto"):
		c.note("kv_dtype %q: vLLM's auto is the model's 16-bit dtype (the checkpoint's FP8 KV scales apply only with --kv-cache-dtype fp8)", r.KVDType)
	case strings.HasPrefix(kv, "fp8"), kv == "bf16", kv == "fp16":
		a.KVCacheDType = deploy.Ptr(kv)
	default:
		c.note("kv_dtype %q: taken as auto", r.KVDType)
	}
	c.engineFlags()
	c.pageBlock()
	if c.Scoring == Ratio && !c.otherServer() {
		// trtllm-bench sizes max_seq_len from the dataset: the longest prompt + output.
		n := int(math.Round(r.InputTokens)) + int(math.Round(r.OutputTokens))
		a.MaxModelLen = deploy.Ptr(n)
		c.note("max_model_len %d: trtllm-bench's max_seq_len from the dataset (input + output)", n)
	}
	if c.Scoring == Absolute && deploy.IsV0(a.Version) {
		c.note("vLLM %s ran the V0 engine and scheduler: simulated with the V1 step policy and V0's defaults (model/deploy/v0.go)", a.Version)
	}
	return nil
}

// otherServer reports whether the row ran another engine's HTTP server (SGLang), not an offline
// batch of another engine (TensorRT-LLM's trtllm-bench).
func (c *Case) otherServer() bool {
	return strings.EqualFold(strings.TrimSpace(c.Row.Engine), "sglang")
}

// rangeRatioRE matches the random dataset's range ratio in len_dist.
func rangeRatioRE() *regexp.Regexp { return regexp.MustCompile(`random-range-ratio ([0-9.]+)`) }

func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// splitFlags splits engine_flags at ';' outside parentheses.
func splitFlags(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, ch := range s {
		switch ch {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		case ';':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// remarkRE matches a trailing parenthetical remark.
func remarkRE() *regexp.Regexp { return regexp.MustCompile(`\s*\(.*\)\s*$`) }

// engineFlags reads the recorded server flags and environment variables. A vLLM serve flag or a
// VLLM_ variable is read by the reader of `vllm serve` commands (vllmcmd.Parse), with its checks:
// a value it refuses is noted and not applied, a flag that has no effect on the simulation is
// noted so, and a setting the row's columns already give keeps the column's value (noted when
// they differ). The flags servesim does not simulate are noted; nothing is dropped silently.
func (c *Case) engineFlags() {
	for _, item := range splitFlags(c.Row.EngineFlags) {
		remark := ""
		if m := remarkRE().FindString(item); m != "" {
			remark = strings.TrimSpace(m)
			item = strings.TrimSpace(strings.TrimSuffix(item, m))
		}
		key, val, _ := strings.Cut(item, "=")
		key = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(key), "--"))
		val = strings.TrimSpace(val)
		low := strings.ToLower(key)
		if c.communityFlag(key, val, item) {
			continue
		}
		switch {
		case low == "num_scheduler_steps" || low == "num-scheduler-step" || low == "num-scheduler-steps":
			n, err := strconv.Atoi(val)
			switch {
			case err != nil || n < 1:
				c.note("engine flag %q: want a positive number of scheduler steps; not read", item)
			case n > 1:
				c.note("multi-step scheduling (--num-scheduler-steps %d): not modelled (the V1 step policy schedules every step; admissions every %d steps and the CPU saved are not simulated)", n, n)
			}
		case low == "max_seq_len_to_capture":
			c.note("max_seq_len_to_capture %s: sequences longer than it run without CUDA graphs in V0; not modelled", val)
		case low == "vllm_attention_backend":
			c.Args.AttentionBackend = val
			c.note("VLLM_ATTENTION_BACKEND=%s: recorded as a label; the attention cost model does not depend on the backend", val)
		case item == "":
		case (low == "max_model_len" || low == "max-model-len") && strings.Contains(strings.ToLower(val), "default"):
			c.note("max_model_len %q: the model's default", val)
		case c.serveFlag(item, key, val, remark):
			remark = ""
		default:
			r := ""
			if remark != "" {
				r = " " + remark
			}
			c.note("engine flag %q%s: not read (no vLLM flag servesim simulates)", item, r)
			remark = ""
		}
		if remark != "" && !strings.HasPrefix(item, "VLLM_") {
			c.note("engine flag %s: %s", item, remark)
		}
	}
}

// serveFlag reads an engine_flags item that is a `vllm serve` flag (key or key=value, with
// dashes or underscores) or a VLLM_ environment variable, as vllmcmd.Parse reads a launch
// command, and applies it to the case's flags. It reports false for anything else (not a flag
// of vLLM's, or prose), which the caller notes.
func (c *Case) serveFlag(item, key, val, remark string) bool {
	// The words of `[VLLM_X=v] serve MODEL [--flag[=v]]`: a model, so that the reader does not
	// remark on its absence.
	words := []string{"serve", "model"}
	env := strings.HasPrefix(key, "VLLM_")
	switch {
	case env:
		words = append([]string{key + "=" + val}, words...)
	case key == "" || strings.ContainsAny(key, " \t=") || strings.HasPrefix(key, "-"):
		return false
	case strings.Contains(item, "="):
		words = append(words, "--"+key+"="+val)
	default:
		words = append(words, "--"+key)
	}
	r := ""
	if remark != "" {
		r = " " + remark
	}
	res, err := vllmcmd.Parse(words)
	if err != nil {
		c.note("engine flag %q%s: %v; not applied (as `vllm serve` would refuse it)", item, r, err)
		return true
	}
	if len(res.Unknown) > 0 {
		if !env {
			return false
		}
		c.note("%s: environment variable recorded, not simulated", item)
		return true
	}
	for _, n := range res.Notes {
		c.note("engine flag %q: %s", item, n)
	}
	if len(res.Ignored) > 0 {
		c.note("engine flag %q%s: no effect on the simulation (as for `vllm serve`)", item, r)
		return true
	}
	if env && len(res.Notes) == 0 && !res.Args.AllowLongMaxModelLen && res.Args.All2AllBackend == "" {
		c.note("%s: environment variable recorded, not simulated", item)
		return true
	}
	conflicts := c.Args.Fill(res.Args)
	for _, name := range conflicts {
		c.note("engine flag %q%s: %s is also given by the row's columns, which differ; the columns' value is used", item, r, name)
	}
	if remark != "" && len(conflicts) == 0 {
		c.note("engine flag %s: %s", item, remark)
	}
	return true
}

// rowSeed is a seed derived from the case id (FNV-1a), so each row's draws are its own.
func rowSeed(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// Patterns of the corpus's notes.
func systemRE() *regexp.Regexp { return regexp.MustCompile(`system (?:prompt )?(\d+)`) }
func groupsRE() *regexp.Regexp {
	return regexp.MustCompile(`groups per results/config\.yaml (\d+)x(\d+)`)
}
func gspGroupRE() *regexp.Regexp { return regexp.MustCompile(`(\d+) groups x (\d+) prompts`) }
func stageRE() *regexp.Regexp {
	return regexp.MustCompile(`stage (\d+) of (\d+) \(rate ([0-9.]+) req/s x ([0-9.]+) s`)
}
func rawRE() *regexp.Regexp { return regexp.MustCompile(`raw (\S+)/results/stage_\d+`) }

// workload builds the row's workload.
func (c *Case) workload() error {
	r := c.Row
	if ok, err := c.communityWorkload(); ok {
		return err
	}
	rangeRatio, inTok, outTok := 0.0, r.InputTokens, r.OutputTokens
	if m := rangeRatioRE().FindStringSubmatch(r.LenDist); m != nil && (math.IsNaN(r.InputTokens) || math.IsNaN(r.OutputTokens)) &&
		usable(r.InputTokensNominal) && usable(r.OutputTokensNominal) {
		// bench_serving's random dataset with --random-range-ratio x draws lengths uniform in
		// [x, 1] x nominal: a mean of (1 + x) / 2 x nominal, and vLLM's range_ratio (uniform
		// within +-rr of the mean) rr = (1 - x) / (1 + x).
		x, err := strconv.ParseFloat(m[1], 64)
		if err != nil || x <= 0 || x > 1 {
			return fmt.Errorf("len_dist %q: want a range ratio in (0, 1]", r.LenDist)
		}
		mean := (1 + x) / 2
		inTok, outTok = math.Round(mean*r.InputTokensNominal), math.Round(mean*r.OutputTokensNominal)
		rangeRatio = (1 - x) / (1 + x)
		c.note("random lengths with range ratio %g: uniform in [%g, 1] x the nominal %g / %g tokens, simulated as means %g / %g within +-%.1f %%", x, x, r.InputTokensNominal, r.OutputTokensNominal, inTok, outTok, 100*rangeRatio)
	}
	if math.IsNaN(inTok) || math.IsNaN(outTok) || inTok < 1 || outTok < 1 {
		return fmt.Errorf("input_tokens / output_tokens not recorded")
	}
	if r.NumRequests <= 0 {
		return fmt.Errorf("num_requests not recorded")
	}
	if r.NumRequests > workload.MaxRequests {
		return fmt.Errorf("num_requests %d: servesim simulates at most %d requests per run", r.NumRequests, workload.MaxRequests)
	}
	in, out := int(math.Round(inTok)), int(math.Round(outTok))
	prefix, groups, perGroup := 0, 1, 0
	if r.LenDist == "shared-prefix" {
		m := systemRE().FindStringSubmatch(r.Notes)
		if m == nil {
			return fmt.Errorf("len_dist shared-prefix: the notes do not give the system-prompt length")
		}
		prefix, _ = strconv.Atoi(m[1])
		if g := groupsRE().FindStringSubmatch(r.Notes); g != nil {
			groups, _ = strconv.Atoi(g[1])
			if r.WorkloadKind == "constant-rate" {
				perGroup, _ = strconv.Atoi(g[2])
			}
		} else if g := gspGroupRE().FindStringSubmatch(r.Notes); g != nil {
			groups, _ = strconv.Atoi(g[1])
		}
		if perGroup > 0 {
			c.note("shared prefix: inference-perf's shared_prefix data generates %d group(s) x %d prompts (a %d-token system prompt per group, a question per prompt; from the notes) once and cycles through them in order, so request i sends prompt i mod %d: after the first %d requests every prompt is one the prefix cache has seen", groups, perGroup, prefix, groups*perGroup, groups*perGroup)
		} else {
			c.note("shared prefix: a %d-token system prompt in %d group(s) (from the notes; request i uses group i mod %d), the rest of the recorded mean input %d tokens unique", prefix, groups, groups, in)
		}
		if prefix >= in {
			return fmt.Errorf("system prompt %d tokens is not shorter than the input %d", prefix, in)
		}
	}
	switch r.WorkloadKind {
	case "constant-rate":
		if err := c.constantRate(in, prefix, groups); err != nil {
			return err
		}
		c.stagePerGroup = perGroup
		return nil
	case "poisson-rate":
		return c.poisson(in, out)
	case "closed-loop-concurrency":
		if r.Concurrency <= 0 {
			return fmt.Errorf("closed-loop-concurrency without a concurrency")
		}
		if r.LenDist == "sharegpt" {
			return fmt.Errorf("closed loop with ShareGPT lengths is not in the mapping")
		}
		c.Spec = &workload.Spec{Name: r.CaseID, Kind: workload.KindClosed, HasSeed: true, Seed: rowSeed(r.CaseID),
			Closed:  workload.Closed{Requests: r.NumRequests, Concurrency: r.Concurrency},
			Lengths: workload.Lengths{InputTokens: in, OutputTokens: out, RangeRatio: rangeRatio, PrefixTokens: prefix, PrefixGroups: groups}}
		c.Workload = c.Spec.Describe()
		c.note("closed loop (SGLang bench_serving, request rate inf, max-concurrency %d): a new request the moment one finishes; its initial single-prompt test run is not simulated", r.Concurrency)
		return nil
	case "offline-throughput":
		prompts := make([]workload.BenchPrompt, r.NumRequests)
		for i := range prompts {
			prompts[i] = workload.BenchPrompt{Tokens: in, OutputTokens: out}
		}
		b := &workload.VLLMBench{NumPrompts: r.NumRequests}
		b.SetPrompts(prompts)
		c.Spec = &workload.Spec{Name: r.CaseID, Kind: workload.KindOffline, VLLM: b, HasSeed: true, Seed: rowSeed(r.CaseID)}
		c.Workload = fmt.Sprintf("offline: %d requests of %d input + %d output tokens at t = 0 (LLM class, no API server, ignore_eos)", r.NumRequests, in, out)
		return nil
	case "single-prefill":
		return fmt.Errorf("single prefill rows are not in this corpus's mapping yet")
	}
	return fmt.Errorf("workload_kind %q: want constant-rate, poisson-rate, closed-loop-concurrency or offline-throughput", r.WorkloadKind)
}

// constantRate maps an inference-perf stage: evenly spaced arrivals at 1/rate for the stage.
func (c *Case) constantRate(in, prefix, groups int) error {
	r := c.Row
	m := stageRE().FindStringSubmatch(r.Notes)
	if m == nil {
		return fmt.Errorf("constant-rate: the notes do not say the stage (\"stage N of M (rate R req/s x D s\")")
	}
	idx, _ := strconv.Atoi(m[1])
	rate, _ := strconv.ParseFloat(m[3], 64)
	if !(rate > 0) {
		return fmt.Errorf("constant-rate: rate %q", m[3])
	}
	c.Stage = idx
	c.Stages = []Stage{{RatePerS: rate, Requests: r.NumRequests}}
	c.Group = r.CaseID
	if g := rawRE().FindStringSubmatch(r.Notes); g != nil {
		c.Group = g[1]
	}
	out := r.OutputTokens
	if !math.IsNaN(r.OutputTokensNominal) && r.OutputTokensNominal > 0 {
		out = r.OutputTokensNominal
	}
	c.Spec = nil
	c.CountedOutput = r.OutputTokens
	c.DerivedTPOT = strings.Contains(r.DerivedFields, "tpot_ms_mean=(e2e_ms_mean-ttft_ms_mean)/(output_tokens-1)")
	c.stageLengths = [3]int{in, int(math.Round(out)), prefix}
	c.stageGroups = groups
	c.note("output %d tokens per request (output_tokens_nominal, ignore_eos: the server generates the full length; the row's %.2f is the client's re-tokenised count, used for throughput and the derived TPOT)", int(math.Round(out)), r.OutputTokens)
	return nil
}

// poisson maps a benchmark_serving.py run: exponential gaps at the rate, ShareGPT lengths.
func (c *Case) poisson(in, out int) error {
	r := c.Row
	if math.IsNaN(r.RequestRate) || r.RequestRate <= 0 {
		return fmt.Errorf("poisson-rate without a request_rate")
	}
	b := &workload.VLLMBench{NumPrompts: r.NumRequests, Seed: rowSeed(r.CaseID)}
	if !math.IsInf(r.RequestRate, 1) {
		b.RequestRate = r.RequestRate
	}
	prompts := make([]workload.BenchPrompt, r.NumRequests)
	if r.LenDist == "sharegpt" {
		// The per-request lengths are not in the row: a spread around the recorded means.
		rng := rand.New(rand.NewPCG(rowSeed(r.CaseID), 0x73686172))
		for i := range prompts {
			prompts[i] = workload.BenchPrompt{Tokens: spread(rng, r.InputTokens), OutputTokens: spread(rng, r.OutputTokens)}
		}
		c.note("ShareGPT lengths are not in the row: each request's input and output drawn uniformly within ±%.0f%% of the recorded means %.1f / %.1f (seeded by the case id); outputs end at those lengths", 100*shareGPTSpread, r.InputTokens, r.OutputTokens)
	} else {
		for i := range prompts {
			prompts[i] = workload.BenchPrompt{Tokens: in, OutputTokens: out}
		}
	}
	b.SetPrompts(prompts)
	c.Spec = &workload.Spec{Name: r.CaseID, Kind: workload.KindVLLMBench, VLLM: b, HasSeed: true, Seed: rowSeed(r.CaseID)}
	c.Workload = fmt.Sprintf("vLLM benchmark_serving: %d requests, Poisson arrivals at %g req/s, mean input %.1f / output %.1f tokens", r.NumRequests, r.RequestRate, r.InputTokens, r.OutputTokens)
	if r.RequestRate >= 1000 {
		c.note("rate %g req/s: the %d requests arrive within about %.1f s, essentially all at once (README 1.2)", r.RequestRate, r.NumRequests, float64(r.NumRequests)/r.RequestRate)
	}
	return nil
}

// shareGPTSpread is the half-width of the uniform spread of ShareGPT lengths around the means.
const shareGPTSpread = 0.5

func spread(rng *rand.Rand, mean float64) int {
	lo, hi := mean*(1-shareGPTSpread), mean*(1+shareGPTSpread)
	return max(1, int(math.Round(lo+(hi-lo)*rng.Float64())))
}

// groupStages joins the stages of one constant-rate experiment: every case of a group gets the
// stage list in order.
func groupStages(cases []*Case) {
	byGroup := map[string][]*Case{}
	var order []string
	for _, c := range cases {
		if !c.Expressed() || c.Stages == nil {
			continue
		}
		if _, ok := byGroup[c.Group]; !ok {
			order = append(order, c.Group)
		}
		byGroup[c.Group] = append(byGroup[c.Group], c)
	}
	for _, g := range order {
		cs := byGroup[g]
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].Stage < cs[j].Stage })
		var stages []Stage
		for i, c := range cs {
			if c.Stage != i {
				for _, x := range cs {
					x.refuse(ReasonInput, "constant-rate experiment %s: stage %d of the group is missing (stages back to back need every earlier stage)", g, i)
				}
				stages = nil
				break
			}
			stages = append(stages, c.Stages[0])
		}
		if stages == nil {
			continue
		}
		total := 0
		for _, st := range stages {
			total += st.Requests
		}
		if total > workload.MaxRequests {
			for _, x := range cs {
				x.refuse(ReasonWorkload, "constant-rate experiment %s: its stages send %d requests together, more than the %d servesim simulates per run", g, total, workload.MaxRequests)
			}
			continue
		}
		for _, c := range cs {
			c.Stages = stages
			var parts []string
			for _, s := range stages {
				parts = append(parts, fmt.Sprintf("%g req/s x %d", s.RatePerS, s.Requests))
			}
			c.Workload = fmt.Sprintf("inference-perf constant rate, stages back to back (%s), evenly spaced arrivals; %d input (%d shared) + %d output tokens; this row is stage %d",
				strings.Join(parts, ", then "), c.stageLengths[0], c.stageLengths[2], c.stageLengths[1], c.Stage)
			if len(stages) > 1 {
				c.note("the %d stages run as one simulation with the rate changing at each stage's end, so stage 1 starts with stage 0's backlog", len(stages))
			}
		}
	}
}
