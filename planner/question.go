package planner

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/workload"
)

// Question is what a buyer asks: which hardware, how much of it and which engine flags serve this
// model under this workload within these objectives, at what cost.
type Question struct {
	// Model is the served model, as described (its "native" weight formats).
	Model *arch.Arch
	// Drafter is the speculative drafter used when SpecTokens > 0; nil: speculative options are
	// not swept (a note says so).
	Drafter *arch.Arch
	// ModelRef and DrafterRef name them as the user gave them.
	ModelRef, DrafterRef string
	// Workload is simulated on every configuration that can load; its objectives (Workload.SLO)
	// rank them. Data-parallel replicas split it round-robin.
	Workload *workload.Spec
	// Engine, when set, is the flags every row starts from: each row sets TP, EP, the swept flags
	// and max_model_len, and every flag neither gives takes vLLM's default for the row's GPU and
	// weights (deploy.Resolve). Nil: Base's settings for every row.
	Engine *deploy.EngineArgs
	// Base is the scenario's engine configuration (the one its current row runs): version,
	// max_model_len, chunked prefill, prefix caching, async scheduling, CUDA graphs, the
	// speculative method.
	Base deploy.EngineConfig
	// ServeModel is what `vllm serve` is given in the rows' launch commands (a Hugging Face id or a
	// directory); "" means ModelRef.
	ServeModel string
	// GPUs are the candidate GPU kinds, in the order rows are enumerated.
	GPUs  []hardware.GPU
	Space Space
	// Seed drives the workload's draws and the engine's acceptance draws, for every candidate.
	Seed uint64
	// StepByStep simulates every candidate step by step (sim.Server.StepByStep).
	StepByStep bool
	// Params chooses each candidate's parameters and says where they come from; ParamsRef
	// describes the choice for the report and the fingerprint. Nil: the physical priors.
	Params    ParamsChooser
	ParamsRef string
	// Uncertainty, if set, gives each prediction an interval from its source tag.
	Uncertainty Uncertainty
	// Provenance, if set, gives each row its parameters' provenance and takes its intervals
	// from it (in place of Uncertainty's).
	Provenance ProvenanceFunc
	// Current is the user's present configuration; its row is marked and always shown.
	Current *Config
	// Notes are printed with the plan (the caller's caveats about the question).
	Notes []string
}

// ParamsChooser returns the parameter set for a deployment, its source tag and a description.
// native is false when the weights are a variant of the model's own checkpoint (then a
// calibration fitted on the native checkpoint transfers at best).
type ParamsChooser func(d *deploy.Deployment, native bool) (param.Values, scenario.Source, string, error)

// Uncertainty turns a point prediction into an interval according to how its parameters relate
// to measurements (calibrated, transferred or prior). The calibration work defines the widths;
// a nil Uncertainty gives point predictions only. metric is one of "output_tok_s",
// "ttft_ms_q", "tpot_ms_q" (q: the SLO quantile), "user_tok_s".
type Uncertainty interface {
	Interval(src scenario.Source, metric string, value float64) (lo, hi float64, ok bool)
	// Name identifies the interval model in the plan's fingerprint.
	Name() string
}

// Space is the sweep. Empty lists take DefaultSpace's values.
type Space struct {
	// MaxGPUs bounds the GPUs of a configuration (all replicas together).
	MaxGPUs int `json:"max_gpus"`
	// Counts are the GPU counts (default: powers of two up to MaxGPUs).
	Counts []int `json:"counts"`
	// TP are the tensor-parallel sizes (default: powers of two dividing the count); the rest of
	// the count is data-parallel replicas.
	TP []int `json:"tp,omitempty"`
	// EP lists the expert-parallel settings (default: on and off for MoE models with TP > 1).
	EP                  []bool   `json:"ep,omitempty"`
	MaxNumSeqs          []int    `json:"max_num_seqs"`
	MaxNumBatchedTokens []int    `json:"max_num_batched_tokens"`
	KVCacheDTypes       []string `json:"kv_cache_dtypes"`
	SpecTokens          []int    `json:"spec_tokens"` // 0 = off
	// SpecMethods lists the speculative methods swept for each k > 0: "auto" (the default) is the
	// question's method when its drafter is described plus mtp when the checkpoint has MTP
	// layers; "ngram" adds prompt lookup, whose acceptance depends on how much of each output
	// repeats its prompt's text — something a length-only workload does not say, so it is swept
	// only when asked for; "mtp" or the question's method alone restrict the sweep to them.
	SpecMethods          []string  `json:"spec_methods,omitempty"`
	GPUMemoryUtilization []float64 `json:"gpu_memory_utilization"`
	// Weights lists the checkpoint variants: "native" (as described), "fp8" or "bf16" (every
	// projection, MLP and expert in that format), or "auto": native where the GPU runs its
	// formats, else fp8 where it has fp8 tensor cores, else bf16; and for a 16-bit checkpoint on
	// a GPU with fp8 tensor cores, native and fp8 (vLLM's online --quantization fp8).
	Weights []string `json:"weights"`
	// MaxModelLen is the engine's max_model_len (0: the base engine's). A configuration that
	// cannot hold one request of that length is tried with the workload's own need, rounded up to
	// 1,024 tokens, and says so.
	MaxModelLen int `json:"max_model_len"`
}

// DefaultSpace is the default sweep: up to 8 GPUs; max-num-seqs 16..256; batched tokens 4K, 8K,
// 16K; KV auto (bf16) and fp8; speculative off, k = 3 and k = 7; utilization 0.90, 0.92, 0.95;
// weights auto.
func DefaultSpace() Space {
	return Space{
		MaxGPUs:              8,
		MaxNumSeqs:           []int{16, 32, 64, 128, 256},
		MaxNumBatchedTokens:  []int{4096, 8192, 16384},
		KVCacheDTypes:        []string{"auto", "fp8"},
		SpecTokens:           []int{0, 3, 7},
		GPUMemoryUtilization: []float64{0.90, 0.92, 0.95},
		Weights:              []string{"auto"},
	}
}

// CheckSpecMethod refuses a --spec-methods entry the sweep does not know.
func CheckSpecMethod(m string) error {
	switch m {
	case "auto", "ngram", "mtp", "dflash", "eagle", "eagle3", "draft_model":
		return nil
	}
	return fmt.Errorf("spec-methods %q: want auto, mtp, ngram or the question's drafter method (dflash, eagle, eagle3, draft_model)", m)
}

// SpaceError is a sweep value the planner refuses (a list value out of range, lists that leave
// no row): an error in how the plan was asked for.
type SpaceError struct{ Err error }

func (e *SpaceError) Error() string { return e.Err.Error() }
func (e *SpaceError) Unwrap() error { return e.Err }

// normalize fills defaults and checks the lists, naming the flag-style field; a refusal is a
// *SpaceError.
func (s *Space) normalize() error {
	if err := s.fill(); err != nil {
		return &SpaceError{err}
	}
	return nil
}

func (s *Space) fill() error {
	d := DefaultSpace()
	if s.MaxGPUs == 0 {
		s.MaxGPUs = d.MaxGPUs
	}
	if s.MaxGPUs < 1 || s.MaxGPUs > 4096 {
		return fmt.Errorf("max-gpus %d: must be in 1..4096", s.MaxGPUs)
	}
	if len(s.Counts) == 0 {
		for n := 1; n <= s.MaxGPUs; n *= 2 {
			s.Counts = append(s.Counts, n)
		}
	}
	if len(s.MaxNumSeqs) == 0 {
		s.MaxNumSeqs = d.MaxNumSeqs
	}
	if len(s.MaxNumBatchedTokens) == 0 {
		s.MaxNumBatchedTokens = d.MaxNumBatchedTokens
	}
	if len(s.KVCacheDTypes) == 0 {
		s.KVCacheDTypes = d.KVCacheDTypes
	}
	if len(s.SpecTokens) == 0 {
		s.SpecTokens = d.SpecTokens
	}
	if len(s.GPUMemoryUtilization) == 0 {
		s.GPUMemoryUtilization = d.GPUMemoryUtilization
	}
	if len(s.Weights) == 0 {
		s.Weights = d.Weights
	}
	for _, m := range s.SpecMethods {
		if err := CheckSpecMethod(m); err != nil {
			return err
		}
	}
	for _, c := range s.Counts {
		if c < 1 || c > s.MaxGPUs {
			return fmt.Errorf("gpu count %d: must be in 1..%d (max-gpus)", c, s.MaxGPUs)
		}
	}
	for _, t := range s.TP {
		if t < 1 || t > 4096 {
			return fmt.Errorf("tp %d: must be in 1..4096", t)
		}
	}
	for _, v := range s.MaxNumSeqs {
		if v < 1 || v > 1<<20 {
			return fmt.Errorf("max-num-seqs %d: must be in 1..%d", v, 1<<20)
		}
	}
	for _, v := range s.MaxNumBatchedTokens {
		if v < 16 || v > 1<<24 {
			return fmt.Errorf("max-num-batched-tokens %d: must be in 16..%d", v, 1<<24)
		}
	}
	for _, v := range s.KVCacheDTypes {
		switch strings.ToLower(v) {
		case "auto", "bf16", "bfloat16", "fp16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2":
		default:
			return fmt.Errorf("kv-cache-dtype %q: want auto, bf16, fp16 or fp8", v)
		}
	}
	for _, v := range s.SpecTokens {
		if v < 0 || v > 32 {
			return fmt.Errorf("speculative tokens %d: must be 0 (off) to 32", v)
		}
	}
	for _, v := range s.GPUMemoryUtilization {
		if !(v > 0 && v <= 1) || math.IsNaN(v) {
			return fmt.Errorf("gpu-memory-utilization %v: must be in (0, 1]", v)
		}
	}
	for _, v := range s.Weights {
		switch v {
		case "auto", "native", "fp8", "bf16":
		default:
			return fmt.Errorf("weights %q: want auto, native, fp8 or bf16", v)
		}
	}
	if s.MaxModelLen < 0 {
		return fmt.Errorf("max-model-len %d: must be positive (or 0: the scenario's)", s.MaxModelLen)
	}
	s.Counts = uniqSorted(s.Counts)
	s.TP = uniqSorted(s.TP)
	if len(s.TP) > 0 && !slices.ContainsFunc(s.Counts, func(c int) bool {
		return slices.ContainsFunc(s.TP, func(t int) bool { return c%t == 0 })
	}) {
		return fmt.Errorf("tp %v divides none of the GPU counts %v: want a tensor-parallel size that divides a count (the rest of a count is data-parallel replicas)", s.TP, s.Counts)
	}
	s.MaxNumSeqs = uniqSorted(s.MaxNumSeqs)
	s.MaxNumBatchedTokens = uniqSorted(s.MaxNumBatchedTokens)
	s.SpecTokens = uniqSorted(s.SpecTokens)
	s.GPUMemoryUtilization = uniqSorted(s.GPUMemoryUtilization)
	s.KVCacheDTypes = uniqStrings(s.KVCacheDTypes)
	s.Weights = uniqStrings(s.Weights)
	return nil
}

// uniqSorted returns the distinct values of v in increasing order (nil for nil).
func uniqSorted[T cmp.Ordered](v []T) []T {
	out := append([]T(nil), v...)
	slices.Sort(out)
	return slices.Compact(out)
}

func uniqStrings(v []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range v {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Config is one candidate deployment. Zero flag fields on a layout-level row mean "any".
type Config struct {
	GPU   string `json:"gpu"`
	Count int    `json:"gpus"`
	TP    int    `json:"tp"`
	DP    int    `json:"dp"`
	EP    bool   `json:"ep"`
	// Weights is the checkpoint variant ("native", "fp8", "bf16"); WeightFormat the format of
	// its largest part (the routed experts of a MoE model), for display.
	Weights      string `json:"weights"`
	WeightFormat string `json:"weight_format"`
	KVCacheDType string `json:"kv_cache_dtype,omitempty"`
	// SpecMethod is the speculative method of a row with SpecTokens > 0 ("" before methods were
	// swept: the question's).
	SpecMethod           string  `json:"spec_method,omitempty"`
	SpecTokens           int     `json:"spec_tokens"`
	MaxNumBatchedTokens  int     `json:"max_num_batched_tokens,omitempty"`
	MaxNumSeqs           int     `json:"max_num_seqs,omitempty"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"`
	MaxModelLen          int     `json:"max_model_len,omitempty"`
}

// sameDeployment reports whether two configurations are the same deployment (for marking the
// user's current one).
func (c *Config) sameDeployment(o *Config) bool {
	kv := func(s string) arch.DType { e := deploy.EngineConfig{KVCacheDType: s}; return e.KVDType() }
	return strings.EqualFold(c.GPU, o.GPU) && c.Count == o.Count && c.TP == o.TP && c.DP == o.DP && c.EP == o.EP &&
		c.Weights == o.Weights && kv(c.KVCacheDType) == kv(o.KVCacheDType) && c.SpecTokens == o.SpecTokens && (c.SpecTokens == 0 || o.SpecMethod == "" || c.SpecMethod == "" || c.SpecMethod == o.SpecMethod) &&
		c.MaxNumBatchedTokens == o.MaxNumBatchedTokens && c.MaxNumSeqs == o.MaxNumSeqs &&
		c.GPUMemoryUtilization == o.GPUMemoryUtilization && c.MaxModelLen == o.MaxModelLen
}

// WideEP reports whether the row is one engine with data-parallel attention and its experts
// spread over every GPU (vLLM --data-parallel-size DP --enable-expert-parallel: expert parallel
// over TP x DP ranks, which step together). Expert parallelism exists only for MoE models, so a
// row with EP and DP > 1 is always this layout; DP > 1 without EP is DP independent replicas.
func (c *Config) WideEP() bool { return c.EP && c.DP > 1 }

// Replicas is the number of independent servers the row stands for: its DP, or 1 for a wide-EP
// row (one engine over every GPU).
func (c *Config) Replicas() int {
	if c.WideEP() || c.DP < 1 {
		return 1
	}
	return c.DP
}

// Label is a compact description ("4 x RTX-PRO-6000-Server TP4 EP"; a wide-EP row names the
// expert-parallel size: "8 x H200-SXM TP4 DP2 EP8").
func (c *Config) Label() string {
	s := fmt.Sprintf("%d x %s TP%d", c.Count, c.GPU, c.TP)
	if c.DP > 1 {
		s += fmt.Sprintf(" DP%d", c.DP)
	}
	switch {
	case c.WideEP():
		s += fmt.Sprintf(" EP%d", c.TP*c.DP)
	case c.EP:
		s += " EP"
	}
	return s
}

// CurrentConfig describes a deployment (a scenario's) as a Config with native weights.
func CurrentConfig(d *deploy.Deployment) *Config {
	e := &d.Engine
	return &Config{GPU: d.Hardware.GPU.Name, Count: d.Hardware.Count, TP: e.TensorParallel, DP: e.DataParallel, EP: e.ExpertParallel && e.TensorParallel*e.DataParallel > 1,
		Weights: "native", KVCacheDType: e.KVCacheDType, SpecMethod: specMethodOf(e), SpecTokens: e.SpecTokens(), MaxNumBatchedTokens: e.MaxNumBatchedTokens,
		MaxNumSeqs: e.MaxNumSeqs, GPUMemoryUtilization: e.GPUMemoryUtilization, MaxModelLen: e.MaxModelLen}
}

// variant returns the model with its weights in another format ("native": a itself). The fp8
// variant of a 16-bit checkpoint is what vLLM's --quantization fp8 loads (deploy.ApplyQuantization);
// of a quantized one, another checkpoint with every projection, MLP and expert in fp8.
func variant(a *arch.Arch, w string) *arch.Arch {
	if w == "native" || a == nil {
		return a
	}
	if w == "fp8" && onlineFP8(a) {
		if v, err := deploy.ApplyQuantization(a, "fp8"); err == nil {
			return v
		}
	}
	dt := arch.FP8
	if w == "bf16" {
		dt = arch.BF16
	}
	return deploy.WithWeights(a, dt)
}

// mainFormat is the format of the model's largest part: routed experts when there are any,
// else the dense MLPs.
func mainFormat(a *arch.Arch) string {
	for _, g := range a.Layers {
		if g.FFN.Kind == arch.FFNMoE {
			return string(g.FFN.ExpertDType)
		}
	}
	for _, g := range a.Layers {
		return string(g.FFN.DType)
	}
	return string(a.EmbedDType)
}

// weightsFor resolves "auto" for a GPU: native if the GPU runs every format of the model, else
// fp8 if it has fp8 tensor cores, else bf16 (weightsVariants adds the online fp8 variant of a
// 16-bit checkpoint).
func weightsFor(a *arch.Arch, g *hardware.GPU, w string) string {
	if w != "auto" {
		return w
	}
	native := true
	for _, dt := range a.WeightDTypes() {
		if ok, _ := g.SupportsWeights(dt); !ok {
			native = false
		}
	}
	switch {
	case native:
		return "native"
	case g.FP8TFLOPS > 0:
		return "fp8"
	}
	return "bf16"
}

// weightsVariants lists the weights variants a GPU's rows take for one entry of Space.Weights:
// weightsFor's, and with "auto" for a 16-bit checkpoint on a GPU with fp8 tensor cores also
// "fp8", which vLLM makes when loading (--quantization fp8: half the weight bytes and the fp8
// GEMM rate), so that the cheapest answer is not missed for want of a flag.
func weightsVariants(a *arch.Arch, g *hardware.GPU, w string) []string {
	v := weightsFor(a, g, w)
	if w == "auto" && v == "native" && onlineFP8(a) && g.FP8TFLOPS > 0 {
		return []string{v, "fp8"}
	}
	return []string{v}
}

// onlineFP8 reports whether vLLM can quantize the checkpoint to fp8 when loading it: a 16-bit
// checkpoint (no quantization of its own).
func onlineFP8(a *arch.Arch) bool {
	return a != nil && deploy.CheckpointQuantization(a) == "" && a.Quantization == ""
}

// DefaultParams returns the chooser of PolicyParams for a parameter file (empty: none), the
// uncalibrated switch and overrides (a scenario's [params]).
func DefaultParams(file string, uncalibrated bool, overrides map[string]float64) (ParamsChooser, string, error) {
	pol, err := scenario.NewParamsPolicy(scenario.ResolveOptions{ParamsFile: file, Uncalibrated: uncalibrated}, overrides)
	if err != nil {
		return nil, "", err
	}
	choose, ref := PolicyParams(pol)
	return choose, ref, nil
}

// PolicyParams returns a chooser that picks each candidate's parameters as scenario.Resolve does
// (pol, from scenario.Resolved.Policy), except that a calibration fitted on the model's native
// checkpoint only transfers to a variant of it. The second result describes the policy.
func PolicyParams(pol *scenario.ParamsPolicy) (ParamsChooser, string) {
	choose := func(d *deploy.Deployment, native bool) (param.Values, scenario.Source, string, error) {
		c, err := pol.Choose(d)
		if !native && c.Source == scenario.SourceCalibrated {
			c.Source = scenario.SourceTransferred
		}
		return c.Params, c.Source, c.From, err
	}
	return choose, pol.Describe()
}

// SourceWidths is the Uncertainty given by scenario.Source.RelativeUncertainty: a throughput
// prediction (output tok/s, per-user tok/s) v becomes [v(1-w), v(1+w)] with the half-width w of
// its parameter source (calibrated narrowest, prior widest). Latencies get no interval.
type SourceWidths struct{}

// Name identifies the widths in the plan's fingerprint.
func (SourceWidths) Name() string {
	return fmt.Sprintf("relative half-widths calibrated %g, transferred %g, prior %g (throughputs)",
		scenario.SourceCalibrated.RelativeUncertainty(), scenario.SourceTransferred.RelativeUncertainty(), scenario.SourcePrior.RelativeUncertainty())
}

// Interval implements Uncertainty.
func (SourceWidths) Interval(src scenario.Source, metric string, v float64) (lo, hi float64, ok bool) {
	switch metric {
	case "output_tok_s", "user_tok_s":
		w := src.RelativeUncertainty()
		return v * (1 - w), v * (1 + w), true
	}
	return 0, 0, false
}

// specMethodOf is the speculative method of an engine, "" with speculation off.
func specMethodOf(e *deploy.EngineConfig) string {
	if e.SpecTokens() == 0 {
		return ""
	}
	return e.Speculative.Method
}
