package arch

// Per-step counts the cost model needs beyond weights and attention: elementwise traffic,
// kernels per layer, and the multi-token-prediction layer.

// ElementwisePasses is the mean elementwise traffic of one decoder layer per token on one GPU of
// tp ranks (ep expert-parallel ranks, 1 without EP), in reads plus writes of a hidden-size bf16
// vector, as vLLM's fused kernels move it:
//
//	norms       2 fused residual-add + RMSNorm, each reading x and the residual and writing both: 8
//	rotary      GQA: read and write q and k, 2 (heads + kv_heads) head_dim / (tp hidden)
//	activation  SiLU-and-mul reads gate and up and writes one: 3 I / (tp hidden) for a gated MLP
//	            of width I (2 I / (tp hidden) ungated); MoE: top_k routed experts and the shared
//	            ones alike (with or without EP, a rank handles 1/tp of the pairs' width)
//	MoE         permutation into expert order and the weighted combine: 3 top_k / ep + 1
//
// What the architecture does not describe (gates, hyper-connection mixers, casts) is the
// model-level parameter act_passes, added by the cost model.
func (a *Arch) ElementwisePasses(tp, ep int) float64 {
	if tp < 1 {
		tp = 1
	}
	if ep < 1 {
		ep = 1
	}
	h := float64(a.Hidden)
	t := float64(tp)
	var sum, layers float64
	for _, g := range a.Layers {
		p := 8.0
		if g.Attn.Kind == AttnGQA {
			hd := float64(g.Attn.HeadDim)
			p += 2 * float64(g.Attn.Heads+g.Attn.KVHeads) * hd / (t * h)
		}
		f := &g.FFN
		act := func(width int) float64 {
			if f.NotGated {
				return 2 * float64(width) / (t * h)
			}
			return 3 * float64(width) / (t * h)
		}
		switch f.Kind {
		case FFNDense:
			p += act(f.Intermediate)
		case FFNMoE:
			p += float64(f.TopK)*act(f.ExpertIntermediate) + float64(f.SharedExperts)*act(f.SharedIntermediate)
			p += 3*float64(f.TopK)/float64(ep) + 1
		}
		sum += p * float64(g.Count)
		layers += float64(g.Count)
	}
	if layers == 0 {
		return 0
	}
	return sum / layers
}

// MLPKernels is the number of GEMM kernels one layer's MLP launches per step: gate-up and down
// for a dense MLP; for MoE the router, the two grouped expert GEMMs (vLLM's fused_moe) and the
// shared experts' two.
func (f *FFN) MLPKernels() int {
	switch f.Kind {
	case FFNDense:
		return 2
	case FFNMoE:
		n := 3
		if f.SharedExperts > 0 {
			n += 2
		}
		return n
	}
	return 0
}

// SmallKernels is what one layer's MLP launches per step beside MLPKernels: elementwise kernels
// (a dense MLP's SiLU-and-mul; an MoE's routing top-k, the permutation into expert order, the
// activation and the weighted combine, and with shared experts their activation and the add),
// the GEMMs that quantise their input when the dense or shared weights run on fp8 or fp4 tensor
// cores (quantized), and those of the routed experts (expertQuantized: the two grouped GEMMs).
func (f *FFN) SmallKernels() (elementwise, quantized, expertQuantized int) {
	switch f.Kind {
	case FFNDense:
		return 1, 2, 0
	case FFNMoE:
		if f.SharedExperts > 0 {
			return 6, 2, 2
		}
		return 4, 0, 2
	}
	return 0, 0, 0
}

// ElementwiseKernels is the number of small kernels all decoder layers launch per step beside
// LayerKernels: two fused residual-add + RMSNorm per layer, each kind's and MLP's elementwise
// kernels (Mixer.SmallKernels, FFN.SmallKernels), and one activation-quantisation kernel per GEMM
// whose weights quantizes says run on fp8 or fp4 tensor cores (vLLM quantises a GEMM's input
// per token or per group of 128 before the GEMM; where a fused kernel does it, the count is an
// upper bound).
func (a *Arch) ElementwiseKernels(quantizes func(DType) bool) int {
	n := 0
	for _, g := range a.Layers {
		e, q := g.Attn.Mixer().SmallKernels()
		fe, fq, xq := g.FFN.SmallKernels()
		k := 2 + e + fe
		if quantizes(g.Attn.DType) {
			k += q
		}
		if quantizes(g.FFN.DType) {
			k += fq
		}
		if quantizes(g.FFN.ExpertDType) {
			k += xq
		}
		n += g.Count * k
	}
	return n
}

// LayerKernels is the number of GEMM and attention kernels all decoder layers launch per step.
func (a *Arch) LayerKernels() int {
	n := 0
	for _, g := range a.Layers {
		n += g.Count * (g.Attn.Mixer().Kernels() + g.FFN.MLPKernels())
	}
	return n
}

// MTPLayer is the decoder layer of the model's multi-token-prediction module (false when the
// checkpoint carries none): DeepSeek-V3's MTP module (DeepSeek-AI, "DeepSeek-V3 Technical
// Report", 2024, section 2.2), which GLM-4.5/GLM-5 and their successors reuse, is one decoder
// layer of the model's main kind (full attention and, in an MoE model, the MoE MLP with its
// shared experts) after a projection of [RMSNorm(embedding); RMSNorm(hidden)] (2 hidden ->
// hidden, eh_proj), sharing the embedding and output head. The layer is the first group with
// full (not linear) attention and an MoE MLP, else the first with full attention, else the first.
// Count is 1.
func (a *Arch) MTPLayer() (LayerGroup, bool) {
	if a.MTPLayers <= 0 || len(a.Layers) == 0 {
		return LayerGroup{}, false
	}
	pick := a.Layers[0]
	found := false
	for _, g := range a.Layers {
		if g.Attn.Kind != AttnLinear && g.FFN.Kind == FFNMoE {
			pick, found = g, true
			break
		}
	}
	if !found {
		for _, g := range a.Layers {
			if g.Attn.Kind != AttnLinear {
				pick = g
				break
			}
		}
	}
	pick.Count = 1
	return pick, true
}

// MTPProjParams is the weight count of the MTP module's eh_proj (2 hidden x hidden), which vLLM
// holds whole on every rank (a replicated linear layer).
func (a *Arch) MTPProjParams() int64 { return 2 * int64(a.Hidden) * int64(a.Hidden) }
