package arch

// The MTP layer itself (MTPLayer) and eh_proj's size (MTPProjParams) are in step.go.

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
