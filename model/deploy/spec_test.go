package deploy

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/hf"
	"github.com/servesim/servesim/model/param"
)

func builtinHF(t *testing.T, id string) *arch.Arch {
	t.Helper()
	a, _, err := hf.Builtin(id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func h200(t *testing.T, a *arch.Arch, tp int, spec Speculative) *Deployment {
	t.Helper()
	g, err := hardware.BuiltinCatalog().Find("H200")
	if err != nil {
		t.Fatal(err)
	}
	e := DefaultEngineConfig()
	e.TensorParallel, e.MaxModelLen, e.Speculative = tp, 32768, spec
	return &Deployment{Model: a, Hardware: hardware.Machine{GPU: g, Count: tp}, Engine: e}
}

// TestSeedAcceptanceUnchanged: DFlash keeps its parameters (accept_tau, accept_decay, the late
// change), bit for bit.
func TestSeedAcceptanceUnchanged(t *testing.T) {
	d := seedDeployment(t)
	p := param.Priors()
	p[param.AcceptLateRatio], p[param.AcceptSwitchTokens] = 0.94, 1773.3
	a := d.Acceptance(&p)
	if !slices.Equal(a.Rates, p.AcceptanceCDF(7)) || !slices.Equal(a.Late, p.LateAcceptanceCDF(7)) || a.Switch != 1773 {
		t.Errorf("DFlash acceptance %v late %v from %d, want the parameters' %v, %v from 1773", a.Rates, a.Late, a.Switch, p.AcceptanceCDF(7), p.LateAcceptanceCDF(7))
	}
	if a.Opening != nil {
		t.Errorf("accept_open_ratio at its prior 1: opening rates %v, want none", a.Opening)
	}
	p[param.AcceptOpenRatio], p[param.AcceptOpenTokens] = 1.1, 300.4
	a = d.Acceptance(&p)
	if !slices.Equal(a.Opening, p.OpeningAcceptanceCDF(7)) || a.OpenEnd != 300 || a.Opening[0] <= a.Rates[0] {
		t.Errorf("DFlash opening %v before %d, want the parameters' %v (above %v) before 300", a.Opening, a.OpenEnd, p.OpeningAcceptanceCDF(7), a.Rates)
	}
}

// TestSpecValidation checks vLLM's rules for mtp and the drafters.
func TestSpecValidation(t *testing.T) {
	r1 := builtinHF(t, "deepseek-ai/DeepSeek-R1")
	llama := builtinHF(t, "meta-llama/Llama-3.1-8B-Instruct")
	for _, k := range []int{1, 2, 3} {
		if err := h200(t, r1, 8, Speculative{Method: "mtp", NumTokens: k}).Validate(); err != nil {
			t.Errorf("DeepSeek-R1 mtp k = %d: %v", k, err)
		}
	}
	if err := h200(t, llama, 1, Speculative{Method: "mtp", NumTokens: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "no multi-token-prediction layers") {
		t.Errorf("Llama mtp: err = %v, want no MTP layers", err)
	}
	two := *r1
	two.MTPLayers = 2
	if err := h200(t, &two, 8, Speculative{Method: "mtp", NumTokens: 3}).Validate(); err == nil || !strings.Contains(err.Error(), "multiple") {
		t.Errorf("2 MTP layers, k = 3: err = %v, want k a multiple of n_predict", err)
	}
	var ns *NotSimulatedError
	err := h200(t, llama, 1, Speculative{Method: "eagle3", NumTokens: 3}).Validate()
	if !errors.As(err, &ns) || !strings.Contains(err.Error(), "config.json") || !strings.Contains(err.Error(), "LlamaForCausalLMEagle3") {
		t.Errorf("eagle3 without a head: err = %v, want a NotSimulatedError saying how to give the head's config.json", err)
	}
	if err := h200(t, llama, 1, Speculative{Method: "ngram", NumTokens: 3}).Validate(); err != nil {
		t.Errorf("ngram: %v", err)
	}
}

// TestAcceptanceOverride: the scenario's per-position rates are taken as given; a mean acceptance
// length keeps the prior's shape at the given level.
func TestAcceptanceOverride(t *testing.T) {
	r1 := builtinHF(t, "deepseek-ai/DeepSeek-R1")
	p := param.Priors()
	d := h200(t, r1, 8, Speculative{Method: "mtp", NumTokens: 3, Acceptance: []float64{0.9, 0.7, 0.5}})
	if a := d.Acceptance(&p); !slices.Equal(a.Rates, []float64{0.9, 0.7, 0.5}) || a.Source != "engine.speculative.acceptance" || math.Abs(a.Mean()-3.1) > 1e-12 {
		t.Errorf("given rates: %v", a.String())
	}
	d.Engine.Speculative.Acceptance = nil
	prior := d.Acceptance(&p)
	d.Engine.Speculative.MeanAcceptanceLength = 2.2
	a := d.Acceptance(&p)
	if math.Abs(a.Mean()-2.2) > 1e-9 {
		t.Errorf("mean_acceptance_length 2.2: %v", a.String())
	}
	// The shape: conditional rates in the prior's ratio (decay 0.8).
	c1, c2 := a.Rates[1]/a.Rates[0], a.Rates[0]
	if math.Abs(c1/c2-0.8) > 1e-9 || prior.Mean() <= 2.2 {
		t.Errorf("shape: conditional %v then %v, want ratio 0.8 (prior mean %v)", c2, c1, prior.Mean())
	}
	bad := []Speculative{
		{Method: "mtp", NumTokens: 2, Acceptance: []float64{0.5}},
		{Method: "mtp", NumTokens: 2, Acceptance: []float64{0.5, 0.6}},
		{Method: "mtp", NumTokens: 2, Acceptance: []float64{1.2, 0.6}},
		{Method: "mtp", NumTokens: 2, MeanAcceptanceLength: 3.5},
		{Method: "mtp", NumTokens: 2, MeanAcceptanceLength: 2, Acceptance: []float64{0.5, 0.4}},
	}
	for _, s := range bad {
		if err := s.validate(true); err == nil {
			t.Errorf("%+v: accepted", s)
		}
	}
}

// TestMTPMemory: with mtp, the drafter's weights per GPU are the MTP module's (one MoE layer of
// the target, eh_proj 2 hidden x hidden bf16 on every rank, its norms), and its cache one more MLA
// layer of the target's kind.
func TestMTPMemory(t *testing.T) {
	r1 := builtinHF(t, "deepseek-ai/DeepSeek-R1")
	d := h200(t, r1, 8, Speculative{Method: "mtp", NumTokens: 1})
	plain := h200(t, r1, 8, Speculative{})
	w, base := d.WeightsPerGPU(), plain.WeightsPerGPU()
	moeLayers := 58.0
	layer := (base.RoutedExperts + base.SharedExperts + base.Router) / moeLayers
	attn := base.Attention / 61
	extra := base.Extra / 61
	h := float64(r1.Hidden)
	want := layer + attn + extra + (2*h*h+3*h)*2
	if math.Abs(w.Drafter-want) > 1e-6*want {
		t.Errorf("MTP weights per GPU %.4f GB, want one MoE layer + eh_proj + norms = %.4f GB", w.Drafter/1e9, want/1e9)
	}
	p := param.Priors()
	specs := d.KVSpecs(&p)
	if len(specs) != 1 || specs[0].Layers != 62 {
		t.Errorf("KV specs %+v: want the 61 MLA layers and the MTP layer in one spec", specs)
	}
}

// TestActivationWholePromptBatch: DeepSeek-R1 on 8 x H200 with whole-prompt batching
// (max-num-batched-tokens = max-model-len = 163,840) fits, as real servers run it: the profile
// run's peak is the chunk's workspaces plus the residual stream and one layer's unchunked
// intermediate per further token, not 24 hidden-size buffers per token (55.5 GiB). Up to the
// chunk the linear reserve is kept: the seed's 8,192 tokens give 24 x 8,192 x 4,096 x 2 B.
func TestActivationWholePromptBatch(t *testing.T) {
	r1 := builtinHF(t, "deepseek-ai/DeepSeek-R1")
	d := h200(t, r1, 8, Speculative{})
	d.Engine.MaxModelLen, d.Engine.MaxNumBatchedTokens, d.Engine.MaxNumSeqs, d.Engine.GPUMemoryUtilization = 163840, 163840, 1024, 0.92
	p := param.Priors()
	m := d.Memory(&p)
	if msg := m.FitError(); msg != "" {
		t.Fatalf("whole-prompt batching does not fit: %s", msg)
	}
	gib := m.ActivationPeak / (1 << 30)
	// 24 x 32,768 x 7,168 x 2 B = 10.5 GiB, + 131,072 x (2 x 7,168 + 18,432 x 3 / 8) x 2 B = 5.2 GiB.
	want := (24*32768*7168*2 + 131072*(2*7168+18432*3/8)*2) / float64(1<<30)
	if math.Abs(gib-want) > 1e-9 {
		t.Errorf("activation %.3f GiB, want %.3f GiB", gib, want)
	}
	if m.AvailableKV < 20*(1<<30) {
		t.Errorf("KV %.1f GiB: want room for several full-length requests", m.AvailableKV/(1<<30))
	}
	seed := seedDeployment(t)
	if got, want := seed.ActivationPeak(&p), p[param.ActivationBuffers]*8192*4096*2; got != want {
		t.Errorf("seed activation %v, want %v (unchanged)", got, want)
	}
}
