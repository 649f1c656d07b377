package model

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/model/param"
)

// Deployment is a model served by an engine on hardware: what the memory and step-time models
// need. Drafter is the separate draft model for speculative decoding (nil when the method uses
// the target itself, such as ngram, or when speculation is off).
type Deployment struct {
	Model    *Arch
	Drafter  *Arch
	Hardware Hardware
	Engine   Engine
}

// Validate checks the deployment as a whole, with the numbers in the message.
func (d *Deployment) Validate() error {
	e := &d.Engine
	if err := e.Validate(); err != nil {
		return err
	}
	if err := d.Hardware.GPU.Validate(); err != nil {
		return err
	}
	if d.Hardware.Count <= 0 {
		return fmt.Errorf("hardware.count = %d: must be a positive integer", d.Hardware.Count)
	}
	if e.GPUs() != d.Hardware.Count {
		return fmt.Errorf("engine uses tensor_parallel_size %d x data_parallel_size %d = %d GPUs but hardware.count = %d", e.TensorParallel, e.DataParallel, e.GPUs(), d.Hardware.Count)
	}
	if e.DataParallel != 1 {
		return fmt.Errorf("engine.data_parallel_size = %d: only 1 is simulated as one engine (run DP replicas as separate deployments)", e.DataParallel)
	}
	tp := e.TensorParallel
	for i, g := range d.Model.Layers {
		a := g.Attn
		heads := a.Heads
		if a.Kind == AttnLinear {
			heads = a.StateHeads
		}
		if heads%tp != 0 {
			return fmt.Errorf("engine.tensor_parallel_size = %d does not divide the %d attention heads of model %q layers[%d]", tp, heads, d.Model.Name, i)
		}
		if g.FFN.Kind == FFNMoE && e.ExpertParallel && g.FFN.Experts%e.EPSize() != 0 {
			return fmt.Errorf("expert parallel size %d does not divide the %d experts of model %q layers[%d]", e.EPSize(), g.FFN.Experts, d.Model.Name, i)
		}
	}
	for _, a := range []*Arch{d.Model, d.Drafter} {
		if a == nil {
			continue
		}
		for _, dt := range a.WeightDTypes() {
			if ok, why := d.Hardware.GPU.SupportsWeights(dt); !ok {
				return fmt.Errorf("model %q stores weights in %s: %s", a.Name, dt, why)
			}
		}
	}
	if d.Engine.Speculative.Enabled() && d.Engine.Speculative.Method != "ngram" && d.Drafter == nil {
		return fmt.Errorf("engine.speculative.method = %q needs a draft model description (speculative.model = %q is not known)", e.Speculative.Method, e.Speculative.Model)
	}
	return nil
}

// WeightDTypes lists the distinct weight storage formats of the model.
func (a *Arch) WeightDTypes() []DType {
	seen := map[DType]bool{}
	var out []DType
	add := func(d DType) {
		if d != "" && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	add(a.EmbedDType)
	for _, g := range a.Layers {
		add(g.Attn.DType)
		add(g.FFN.DType)
		if g.FFN.Kind == FFNMoE {
			add(g.FFN.ExpertDType)
		}
	}
	return out
}

// WeightBytes is the weight memory on the most loaded GPU, by component.
type WeightBytes struct {
	Attention, DenseMLP, SharedExperts, RoutedExperts, Router, Extra, Embedding, LMHead, Drafter float64
}

// Total sums the components.
func (w WeightBytes) Total() float64 {
	return w.Attention + w.DenseMLP + w.SharedExperts + w.RoutedExperts + w.Router + w.Extra + w.Embedding + w.LMHead + w.Drafter
}

// archWeightsPerGPU splits a model's weights over tp ranks (experts over ep ranks when ep > 1).
func archWeightsPerGPU(a *Arch, tp, ep int) WeightBytes {
	var w WeightBytes
	h := a.Hidden
	t := float64(tp)
	for _, g := range a.Layers {
		n := float64(g.Count)
		w.Attention += n * float64(g.Attn.ProjParams) * g.Attn.DType.BytesPerParam() / t
		w.Extra += n * float64(a.ExtraParamsPerLayer) * BF16.BytesPerParam()
		switch g.FFN.Kind {
		case FFNDense:
			w.DenseMLP += n * float64(g.FFN.DenseParams(h)) * g.FFN.DType.BytesPerParam() / t
		case FFNMoE:
			w.SharedExperts += n * float64(g.FFN.SharedParams(h)) * g.FFN.DType.BytesPerParam() / t
			w.Router += n * float64(g.FFN.RouterParams(h)) * BF16.BytesPerParam()
			routed := n * float64(g.FFN.Experts) * float64(g.FFN.ExpertParams(h)) * g.FFN.ExpertDType.BytesPerParam()
			if ep > 1 {
				// The most loaded rank holds ceil(E/ep) experts.
				per := math.Ceil(float64(g.FFN.Experts)/float64(ep)) / float64(g.FFN.Experts)
				w.RoutedExperts += routed * per
			} else {
				w.RoutedExperts += routed / t
			}
		}
	}
	if !a.SharesTargetEmbeddings {
		emb := float64(a.Vocab) * float64(h) * a.EmbedDType.BytesPerParam() / t
		w.Embedding = emb
		if !a.TiedEmbed {
			w.LMHead = emb
		}
	}
	return w
}

// WeightsPerGPU is the per-GPU weight memory of the target model and the drafter.
func (d *Deployment) WeightsPerGPU() WeightBytes {
	tp := d.Engine.TensorParallel
	w := archWeightsPerGPU(d.Model, tp, d.Engine.EPSize())
	if d.Drafter != nil && d.Engine.Speculative.Enabled() {
		w.Drafter = archWeightsPerGPU(d.Drafter, tp, 1).Total()
	}
	return w
}

// MemoryBudget is vLLM's per-GPU accounting (gpu_worker.determine_available_memory).
type MemoryBudget struct {
	TotalBytes     float64 // device memory
	RequestedBytes float64 // total x gpu_memory_utilization
	Weights        WeightBytes
	ActivationPeak float64 // profile run with max_num_batched_tokens tokens
	NonTorch       float64
	CUDAGraphs     float64
	AvailableKV    float64 // what is left for the KV cache (may be negative: does not fit)
}

// NonKV is everything but the KV cache.
func (m *MemoryBudget) NonKV() float64 {
	return m.Weights.Total() + m.ActivationPeak + m.NonTorch + m.CUDAGraphs
}

// Memory computes the per-GPU budget with parameters p.
func (d *Deployment) Memory(p *param.Values) MemoryBudget {
	var m MemoryBudget
	m.TotalBytes = d.Hardware.GPU.MemoryBytes()
	m.RequestedBytes = m.TotalBytes * d.Engine.GPUMemoryUtilization
	m.Weights = d.WeightsPerGPU()
	m.ActivationPeak = p[param.ActivationBuffers] * float64(d.Engine.MaxNumBatchedTokens) * float64(d.Model.Hidden) * BF16.BytesPerParam()
	m.NonTorch = p[param.NonTorchGiB] * (1 << 30)
	if !d.Engine.EnforceEager {
		m.CUDAGraphs = p[param.CUDAGraphGiB] * (1 << 30)
	}
	m.AvailableKV = m.RequestedBytes - m.NonKV()
	return m
}

// FitError explains why a deployment cannot hold its weights, or "" when it can.
func (m *MemoryBudget) FitError() string {
	if m.AvailableKV > 0 {
		return ""
	}
	gib := func(b float64) float64 { return b / (1 << 30) }
	return fmt.Sprintf("weights need %.1f GiB per GPU and other reserves %.1f GiB, %.1f GiB usable: nothing left for KV cache",
		gib(m.Weights.Total()), gib(m.ActivationPeak+m.NonTorch+m.CUDAGraphs), gib(m.RequestedBytes))
}

// KVSpecKind is how a layer's cache grows with a request.
type KVSpecKind string

const (
	SpecFull    KVSpecKind = "full"    // bytes per token, for every token
	SpecSliding KVSpecKind = "sliding" // bytes per token, for the last Window tokens
	SpecState   KVSpecKind = "state"   // constant bytes per request (recurrent state)
)

// KVSpec is the per-GPU cache footprint of a set of identical layers.
type KVSpec struct {
	Name          string
	Kind          KVSpecKind
	Layers        int
	BytesPerToken float64 // per layer per token (full, sliding)
	StateBytes    float64 // per layer per request page (state)
	Window        int     // sliding window in tokens
	// AlignTokens is the kernel's block-size alignment for this layer kind.
	AlignTokens int
}

// kvSpecFor returns the per-GPU KV spec of one layer group (zero Layers when it keeps no cache).
func kvSpecFor(a *Attention, tp int, kv DType, name string) KVSpec {
	s := KVSpec{Name: name, AlignTokens: 16}
	switch a.Kind {
	case AttnGQA:
		kvh := maxInt(1, a.KVHeads/tp)
		s.BytesPerToken = float64(kvh*(a.HeadDim+a.VHeadDim)) * kv.BytesPerParam()
		if kv == FP8 {
			s.BytesPerToken = float64(kvh * (a.HeadDim + a.VHeadDim))
		}
		s.Kind = SpecFull
		if a.Window > 0 {
			s.Kind = SpecSliding
			s.Window = a.Window
		}
	case AttnMLA:
		// The latent is not split by TP: every rank stores it whole.
		s.Kind = SpecFull
		s.BytesPerToken = float64(a.KVLoraRank+a.QKRopeDim) * kv.BytesPerParam()
		if kv == FP8 {
			s.BytesPerToken = float64(a.KVLoraRank + a.QKRopeDim)
		}
		s.AlignTokens = 64
	case AttnSparseMLA:
		s.Kind = SpecFull
		s.AlignTokens = 64
		if kv == FP8 {
			// fp8_ds_mla: 512 fp8 latent + 16 B of scales + 128 B of bf16 rope (zero-padded
			// for NoPE models), for a kv_lora_rank of 512.
			s.BytesPerToken = float64(a.KVLoraRank) + float64(a.KVLoraRank/128*4) + 128
		} else {
			s.BytesPerToken = float64(a.KVLoraRank+a.QKRopeDim) * kv.BytesPerParam()
		}
		// Indexer keys: head_dim fp8 values + a 4-byte scale per stored state, one state per
		// IndexCompress tokens.
		s.BytesPerToken += float64(a.IndexHeadDim+4) / float64(a.IndexCompress)
	case AttnLinear:
		s.Kind = SpecState
		heads := float64(a.StateHeads) / float64(tp)
		s.StateBytes = heads * float64(a.StateKeyDim*a.StateValDim) * a.StateDType.BytesPerParam()
		if a.ConvKernel > 1 {
			s.StateBytes += float64(a.ConvKernel-1) * float64(a.ConvChannels) / float64(tp) * BF16.BytesPerParam()
		}
	}
	return s
}

// KVSpecs lists the per-GPU cache specs of the target model's layers and the drafter's, merging
// layer groups of the same kind and size. Recurrent-state pages are scaled by state_page_scale.
func (d *Deployment) KVSpecs(p *param.Values) []KVSpec {
	stateScale := p[param.StatePageScale]
	var out []KVSpec
	add := func(s KVSpec, n int) {
		for i := range out {
			o := &out[i]
			if o.Kind == s.Kind && o.BytesPerToken == s.BytesPerToken && o.StateBytes == s.StateBytes && o.Window == s.Window {
				o.Layers += n
				return
			}
		}
		s.Layers = n
		out = append(out, s)
	}
	tp := d.Engine.TensorParallel
	kv := d.Engine.KVDType()
	for _, g := range d.Model.Layers {
		s := kvSpecFor(&g.Attn, tp, kv, string(g.Attn.Kind))
		s.StateBytes *= stateScale
		add(s, g.Count)
	}
	if d.Drafter != nil && d.Engine.Speculative.Enabled() {
		dkv := BF16
		if s := d.Engine.Speculative.KVCacheDType; s != "" && s != "auto" {
			if dt, err := ParseDType(s); err == nil {
				dkv = dt
			}
		}
		for _, g := range d.Drafter.Layers {
			add(kvSpecFor(&g.Attn, tp, dkv, "drafter_"+string(g.Attn.Kind)), g.Count)
		}
	}
	return out
}
