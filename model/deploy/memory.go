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
// split over moeTP ranks otherwise (tp, or tp x dp when data-parallel ranks share the MoE layers;
// vLLM vllm/model_executor/layers/fused_moe/layer.py).
func archWeightsPerGPU(a *arch.Arch, tp, ep, moeTP int) WeightBytes {
	var w WeightBytes
	t := float64(tp)
	for _, s := range a.WeightSets() {
		b := s.Bytes()
		switch {
		case s.Replicated():
		case s.Part == arch.PartRoutedExperts && ep > 1:
			b *= math.Ceil(float64(s.Experts)/float64(ep)) / float64(s.Experts)
		case s.Part == arch.PartRoutedExperts:
			b /= float64(moeTP)
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

// WeightsPerGPU is the per-GPU weight memory of the target model and the drafter. With pipeline
// parallel the most loaded GPU is one of the first stage: vLLM's get_pp_indices splits the
// layers equally, leftovers to the stages before the last, so it holds ceil(L / P) of the L
// layers and the input embedding, and the last stage the output head (StageLayers).
func (d *Deployment) WeightsPerGPU() WeightBytes {
	tp := d.Engine.TensorParallel
	moeTP := tp * d.LockstepRanks()
	w := archWeightsPerGPU(d.Model, tp, d.Engine.EPSize(), moeTP)
	if pp := d.Engine.PipelineParallel; pp > 1 {
		f := d.StageFraction()
		w.Attention *= f
		w.DenseMLP *= f
		w.SharedExperts *= f
		w.RoutedExperts *= f
		w.Router *= f
		w.Extra *= f
		w.LMHead = 0
	}
	if da := d.DrafterArch(); da != nil {
		ep := 1
		if d.Engine.Speculative.Method == "mtp" {
			ep = d.Engine.EPSize() // the MTP layer's experts are placed like the target's
		}
		w.Drafter = archWeightsPerGPU(da, tp, ep, moeTP).Total()
	}
	return w
}

// StageLayers is the number of layers the most loaded pipeline stage holds: ceil(L / P) (vLLM
// vllm/distributed/utils.py, get_pp_indices); L without pipeline parallel.
func (d *Deployment) StageLayers() int {
	l := d.Model.NumLayers()
	pp := max(d.Engine.PipelineParallel, 1)
	return (l + pp - 1) / pp
}

// StageFraction is StageLayers over the model's layers: the share of the per-layer weights and
// KV cache on the most loaded stage's GPUs (1 without pipeline parallel).
func (d *Deployment) StageFraction() float64 {
	if d.Engine.PipelineParallel <= 1 {
		return 1
	}
	return float64(d.StageLayers()) / float64(d.Model.NumLayers())
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
	// Workspace is sparse-MLA attention's long-context workspace (SparseWorkspace); 0 for other
	// models.
	Workspace   float64
	AvailableKV float64 // what is left for the KV cache (may be negative: does not fit)
	// KVCacheBytesSet: AvailableKV is the engine's kv_cache_memory_bytes and RequestedBytes the
	// whole device (gpu_memory_utilization is not used).
	KVCacheBytesSet bool
}

// NonKV is everything but the KV cache.
func (m *MemoryBudget) NonKV() float64 {
	return m.Weights.Total() + m.ActivationPeak + m.NonTorch + m.CUDAGraphs + m.Workspace
}

// Memory computes the per-GPU budget with parameters p.
func (d *Deployment) Memory(p *param.Values) MemoryBudget {
	var m MemoryBudget
	m.TotalBytes = d.Hardware.GPU.MemoryBytes()
	m.RequestedBytes = m.TotalBytes * d.Engine.GPUMemoryUtilization
	m.Weights = d.WeightsPerGPU()
	m.ActivationPeak = d.ActivationPeak(p)
	m.NonTorch = p[param.NonTorchGiB] * (1 << 30)
	if !d.Engine.EnforceEager {
		m.CUDAGraphs = p[param.CUDAGraphGiB] * (1 << 30) * d.CaptureShare()
	}
	m.Workspace = d.SparseWorkspace(p)
	m.AvailableKV = m.RequestedBytes - m.NonKV()
	if n := d.Engine.KVCacheMemoryBytes; n > 0 {
		// vLLM takes the size as given, whatever gpu_memory_utilization says; the weights, the
		// reserves and the cache must still fit in the device's memory.
		m.KVCacheBytesSet = true
		m.RequestedBytes = m.TotalBytes
		m.AvailableKV = float64(n)
	}
	return m
}

// DefaultCaptureSizes is the number of batch sizes in vLLM's default CUDA-graph capture list up
// to 512 tokens (1, 2, 4, every 8 below 256, every 16 from 256): the list cudagraph_gib is the
// estimate for.
const DefaultCaptureSizes = 51

// CaptureSizes is the number of decode batch sizes the engine captures as CUDA graphs (vLLM
// vllm/config/vllm.py, _set_cudagraph_sizes and adjust_cudagraph_sizes_for_spec_decode): 1, 2, 4,
// every 8 below 256 and every 16 from 256, up to max_cudagraph_capture_size; with k speculative
// tokens each rounded up to a multiple of 1 + k (duplicates dropped), since a decode batch is 1 + k
// tokens a request.
func (d *Deployment) CaptureSizes() int {
	top := d.Engine.MaxCaptureSize
	if top <= 0 {
		return 0
	}
	step := 1 + d.Engine.SpecTokens()
	seen := map[int]bool{}
	add := func(n int) {
		n = (n + step - 1) / step * step
		if n <= top || len(seen) == 0 {
			seen[n] = true
		}
	}
	for _, n := range []int{1, 2, 4} {
		add(n)
	}
	for n := 8; n < 256; n += 8 {
		add(n)
	}
	for n := 256; n <= 512 || n <= top; n += 16 {
		add(n)
	}
	return len(seen)
}

// CaptureShare is the deployment's CUDA-graph memory relative to cudagraph_gib's: its capture
// sizes over DefaultCaptureSizes. vLLM estimates the pool from graphs it captures while profiling
// and scales the estimate by the number of sizes to capture.
func (d *Deployment) CaptureShare() float64 {
	return float64(d.CaptureSizes()) / DefaultCaptureSizes
}

// SparseWorkspace is the per-GPU long-context workspace of sparse-MLA (DSA) attention:
// sparse_workspace_entries x max_model_len entries of the MLA head (kv_lora_rank + a 64-wide rope
// part, zero-padded for models without one: 576 for DeepSeek's and GLM-5's) in bf16, the buffer the
// sparse prefill gathers a request's dequantised latent into (vLLM's FlashMLA-sparse backend sizes
// it 5 x max_model_len; the indexer's prefill key buffer is sized to fit in it). With decode
// context parallel a rank caches and gathers only its share of the context: 1 / DCP of it.
// 0 without sparse-MLA layers.
func (d *Deployment) SparseWorkspace(p *param.Values) float64 {
	for _, g := range d.Model.Layers {
		a := &g.Attn
		if a.Kind != arch.AttnSparseMLA {
			continue
		}
		entry := float64(a.KVLoraRank+max(a.QKRopeDim, 64)) * arch.BF16.BytesPerParam()
		return p[param.SparseWorkspaceEntries] * float64(d.Engine.MaxModelLen) * entry / float64(d.Engine.DCP())
	}
	return 0
}

// ActivationChunkTokens is the batch size up to which every activation of vLLM's profile run grows
// with its tokens, and from which its chunked workspaces stop growing: vLLM's fused-MoE chunk
// (VLLM_FUSED_MOE_CHUNK_SIZE, 32,768 tokens; vllm/envs.py), which also bounds the attention
// backends' prefill workspaces in practice.
const ActivationChunkTokens = 32768

// ActivationPeak is the peak activation memory of vLLM's profile run (vllm/v1/worker/
// gpu_model_runner.py, profile_run: a forward over max_num_batched_tokens tokens, then the
// sampler over max_num_seqs rows) on one GPU:
//
//	T <= C   activation_buffers x T x hidden x 2 B: every activation grows with the tokens
//	T > C    activation_buffers x C x hidden x 2 B, plus for each token beyond C the residual
//	         stream (hidden_states and residual, 2 x hidden bf16) and the largest intermediate of
//	         one layer that vLLM does not chunk (ActivationPerToken: a dense MLP's gate-up and
//	         SiLU outputs, or the attention projections' outputs, split by TP); the MoE and
//	         attention workspaces stay the size of a chunk, and a layer's intermediates are freed
//	         before the next layer's
//	sampler  the hidden states of T tokens and the fp32 logits and probabilities of at most
//	         max_num_seqs rows (vLLM samples the last token of each sequence only)
//
// with C = ActivationChunkTokens; the peak is the larger of the forward and the sampler. A
// whole-prompt batch (max_num_batched_tokens = max_model_len, 163,840 for DeepSeek-R1) reserves
// about 16 GiB per GPU, not the 55 GiB a linear buffer per token would; up to C the value is the
// linear one (the seed's 8,192 tokens keep it).
func (d *Deployment) ActivationPeak(p *param.Values) float64 {
	t := d.Engine.MaxNumBatchedTokens
	if t <= ActivationChunkTokens {
		return p[param.ActivationBuffers] * float64(t) * float64(d.Model.Hidden) * arch.BF16.BytesPerParam()
	}
	h := float64(d.Model.Hidden)
	forward := p[param.ActivationBuffers]*ActivationChunkTokens*h*2 + float64(t-ActivationChunkTokens)*d.ActivationPerToken()
	rows := float64(min(t, d.Engine.MaxNumSeqs))
	sampler := float64(t)*h*2 + 2*rows*float64(d.Model.Vocab)*4
	return math.Max(forward, sampler)
}

// ActivationPerToken is the activation bytes per token beyond the chunked workspaces (see
// ActivationPeak): the residual stream, 2 x hidden bf16, plus the largest unchunked intermediate of
// one layer per GPU: a dense MLP's (or shared experts') gate-up output and SiLU-and-mul result,
// 3 x intermediate / TP bf16 (2 x for an ungated MLP), or the attention's q, k, v and output
// projections' outputs, (q + k + v + o widths) / TP bf16, whichever is larger.
func (d *Deployment) ActivationPerToken() float64 {
	tp := float64(d.Engine.TensorParallel)
	h := float64(d.Model.Hidden)
	var layer float64
	for _, g := range d.Model.Layers {
		f := &g.FFN
		act := 3.0
		if f.NotGated {
			act = 2
		}
		var mlp float64
		switch f.Kind {
		case arch.FFNDense:
			mlp = act * float64(f.Intermediate) / tp
		case arch.FFNMoE:
			mlp = act * float64(f.SharedExperts*f.SharedIntermediate) / tp
		}
		// The projections' outputs: their weights per token of input width hidden.
		attn := float64(g.Attn.ProjParams) / h / tp
		layer = math.Max(layer, math.Max(mlp, attn))
	}
	return (2*h + layer) * 2
}

// ActivationDetail says how ActivationPeak was counted, for people.
func (d *Deployment) ActivationDetail(p *param.Values) string {
	t := d.Engine.MaxNumBatchedTokens
	if t <= ActivationChunkTokens {
		return fmt.Sprintf("%g buffers x %d tokens x hidden %d x 2 B", p[param.ActivationBuffers], t, d.Model.Hidden)
	}
	return fmt.Sprintf("%g buffers x %d tokens x hidden %d x 2 B (workspaces up to the %d-token chunk), + %d tokens x %.0f B (residual stream and the largest unchunked layer intermediate)",
		p[param.ActivationBuffers], ActivationChunkTokens, d.Model.Hidden, ActivationChunkTokens, t-ActivationChunkTokens, d.ActivationPerToken())
}

// FitError explains why a deployment cannot hold its weights, or "" when it can.
func (m *MemoryBudget) FitError() string {
	gib := func(b float64) float64 { return b / (1 << 30) }
	if m.KVCacheBytesSet {
		if need := m.NonKV() + m.AvailableKV; need > m.TotalBytes {
			return fmt.Sprintf("kv_cache_memory_bytes %.1f GiB, weights %.1f GiB and other reserves %.1f GiB per GPU need %.1f GiB, more than the GPU's %.1f GiB: vLLM would run out of memory allocating the cache",
				gib(m.AvailableKV), gib(m.Weights.Total()), gib(m.ActivationPeak+m.NonTorch+m.CUDAGraphs+m.Workspace), gib(need), gib(m.TotalBytes))
		}
		return ""
	}
	if m.AvailableKV > 0 {
		return ""
	}
	return fmt.Sprintf("weights need %.1f GiB per GPU and other reserves %.1f GiB, %.1f GiB usable: nothing left for KV cache",
		gib(m.Weights.Total()), gib(m.ActivationPeak+m.NonTorch+m.CUDAGraphs+m.Workspace), gib(m.RequestedBytes))
}

// KVSpecs lists the per-GPU cache specs of the target model's layers and the drafter's, merging
// layer groups of the same kind and size. Recurrent-state pages are scaled by state_page_scale.
func (d *Deployment) KVSpecs(p *param.Values) []arch.KVSpec {
	stateScale := p[param.StatePageScale]
	var out []arch.KVSpec
	add := func(s arch.KVSpec, n int) {
		for i := range out {
			o := &out[i]
			if o.Kind == s.Kind && o.BytesPerToken == s.BytesPerToken && o.StateBytes == s.StateBytes && o.Window == s.Window &&
				(o.Drafter == s.Drafter || !d.Engine.KVGroupsByTarget) {
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
		if dcp := d.Engine.DCP(); dcp > 1 && s.Kind != arch.SpecState {
			// Decode context parallel: each rank stores every DCP-th token of the cache.
			s.BytesPerToken /= float64(dcp)
		}
		n := g.Count
		if pp := d.Engine.PipelineParallel; pp > 1 {
			// Each stage caches its own layers only; the most loaded holds ceil(count / P) of
			// each kind.
			n = (n + pp - 1) / pp
		}
		add(s, n)
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
			s.Drafter = d.Engine.Speculative.Method != "mtp"
			if dcp := d.Engine.DCP(); dcp > 1 && d.Engine.Speculative.Method == "mtp" && s.Kind != arch.SpecState {
				// The MTP layer is one of the target's layers: its cache is split like theirs
				// (and joins their group when its spec is the same).
				s.BytesPerToken /= float64(dcp)
				s.Name = string(g.Attn.Kind)
			}
			add(s, g.Count)
		}
	}
	return out
}
