package arch

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

// MTPArch is the model's MTP module as a one-layer model of its own (nil when the checkpoint has
// none): MTPLayers copies of MTPLayer, eh_proj and the module's norms (enorm, hnorm, the shared
// head's norm) as per-layer small weights, and the embedding and output head shared with the
// model (SharesTargetEmbeddings), as vLLM's MTP proposer shares them.
func (a *Arch) MTPArch() *Arch {
	g, ok := a.MTPLayer()
	if !ok {
		return nil
	}
	g.Count = a.MTPLayers
	m := &Arch{Name: a.Name + " MTP", Family: a.Family + "_mtp", Hidden: a.Hidden, Vocab: a.Vocab, EmbedDType: a.EmbedDType,
		Layers: []LayerGroup{g}, SharesTargetEmbeddings: true,
		ExtraParamsPerLayer: a.ExtraParamsPerLayer + a.MTPProjParams() + 3*int64(a.Hidden)}
	return m
}
