package deploy

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/param"
)

// WeightBytes is the weight memory on the most loaded GPU, by component.
type WeightBytes struct {
	Attention, DenseMLP, SharedExperts, RoutedExperts, Router, Extra, Embedding, LMHead, Drafter float64
	// Encoder is a modality encoder's weights (a vision tower), loaded though text requests do not
	// run it.
	Encoder float64
}

// Total sums the components.
func (w WeightBytes) Total() float64 {
	return w.Attention + w.DenseMLP + w.SharedExperts + w.RoutedExperts + w.Router + w.Extra + w.Embedding + w.LMHead + w.Drafter + w.Encoder
}

// archWeightsPerGPU splits a model's weights over tp ranks, routers and small weights replicated,
// routed experts over ep ranks when ep > 1 (the most loaded rank holds ceil(E/ep) experts) or
// split like the rest otherwise (vLLM vllm/model_executor/layers/fused_moe/layer.py).
func archWeightsPerGPU(a *arch.Arch, tp, ep int) WeightBytes {
	var w WeightBytes
	t := float64(tp)
	for _, s := range a.WeightSets() {
		b := s.Bytes()
		switch {
		case s.Replicated():
		case s.Part == arch.PartRoutedExperts && ep > 1:
			b *= math.Ceil(float64(s.Experts)/float64(ep)) / float64(s.Experts)
		default:
			b /= t
		}
		switch s.Part {
		case arch.PartAttention:
			w.Attention += b
		case arch.PartDenseMLP:
			w.DenseMLP += b
		case arch.PartSharedExperts:
			w.SharedExperts += b
		case arch.PartRouter:
			w.Router += b
		case arch.PartRoutedExperts:
			w.RoutedExperts += b
		case arch.PartExtra:
			w.Extra += b
		case arch.PartEmbedding:
			w.Embedding += b
		case arch.PartLMHead:
			w.LMHead += b
		case arch.PartEncoder:
			w.Encoder += b
		}
	}
	return w
}

// WeightsPerGPU is the per-GPU weight memory of the target model and the drafter.
func (d *Deployment) WeightsPerGPU() WeightBytes {
	tp := d.Engine.TensorParallel
	w := archWeightsPerGPU(d.Model, tp, d.Engine.EPSize())
	if da := d.DrafterArch(); da != nil {
		ep := 1
		if d.Engine.Speculative.Method == "mtp" {
			ep = d.Engine.EPSize() // the MTP layer's experts are placed like the target's
		}
		w.Drafter = archWeightsPerGPU(da, tp, ep).Total()
	}
	return w
}

// MemoryBudget is vLLM's per-GPU accounting (vLLM vllm/v1/worker/gpu_worker.py,
// determine_available_memory).
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
	m.ActivationPeak = p[param.ActivationBuffers] * float64(d.Engine.MaxNumBatchedTokens) * float64(d.Model.Hidden) * arch.BF16.BytesPerParam()
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

// KVSpecs lists the per-GPU cache specs of the target model's layers and the drafter's, merging
// layer groups of the same kind and size. Recurrent-state pages are scaled by state_page_scale.
func (d *Deployment) KVSpecs(p *param.Values) []arch.KVSpec {
	stateScale := p[param.StatePageScale]
	var out []arch.KVSpec
	add := func(s arch.KVSpec, n int) {
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
		s := g.Attn.Mixer().KVSpec(tp, kv)
		s.Name = string(g.Attn.Kind)
		s.StateBytes *= stateScale
		add(s, g.Count)
	}
	if da := d.DrafterArch(); da != nil {
		// DFlash's drafter keeps its cache in bf16 unless its own kv_cache_dtype says otherwise;
		// the other drafters' layers are built with the engine's cache config (its
		// kv_cache_dtype), unless the speculative config gives one.
		dkv := arch.BF16
		if d.Engine.Speculative.Method != "dflash" {
			dkv = kv
		}
		if s := d.Engine.Speculative.KVCacheDType; s != "" && s != "auto" {
			if dt, err := arch.ParseDType(s); err == nil {
				dkv = dt
			}
		}
		for _, g := range da.Layers {
			s := g.Attn.Mixer().KVSpec(tp, dkv)
			s.Name = "drafter_" + string(g.Attn.Kind)
			add(s, g.Count)
		}
	}
	return out
}
