package arch

// KVSpecKind is how a layer's cache grows with a request.
type KVSpecKind string

const (
	SpecFull    KVSpecKind = "full"    // bytes per token, for every token
	SpecSliding KVSpecKind = "sliding" // bytes per token, for the last Window tokens
	SpecState   KVSpecKind = "state"   // constant bytes per request (recurrent state)
)

// KVSpec is the per-GPU cache footprint of a set of identical layers (Mixer.KVSpec gives one
// layer's).
type KVSpec struct {
	Name          string
	Kind          KVSpecKind
	Layers        int
	BytesPerToken float64 // per layer per token (full, sliding)
	StateBytes    float64 // per layer per request page (state)
	Window        int     // sliding window in tokens
	// AlignTokens is the kernel's block-size alignment for this layer kind.
	AlignTokens int
	// Drafter marks a separate drafter model's layers (not the target's, nor its own MTP
	// module's), which an engine may group apart (kvcache.Options.GroupsByTarget).
	Drafter bool
}

// KVBytesPerToken is the KV cache one token of context occupies on one GPU of tp ranks with the
// cache stored in kv, summed over the layers that keep a per-token cache: sliding-window layers
// count like full ones (a request holds only about a window of their tokens), recurrent-state
// layers count 0 (a constant state per request instead). Every layer's bytes come from its
// Mixer.KVSpec, the same numbers the KV-cache layout and the cost model use.
func (a *Arch) KVBytesPerToken(tp int, kv DType) float64 {
	var total float64
	for _, g := range a.Layers {
		if s := g.Attn.Mixer().KVSpec(tp, kv); s.Kind != SpecState {
			total += float64(g.Count) * s.BytesPerToken
		}
	}
	return total
}

// StateBytesPerRequest is the recurrent state one request holds on one GPU of tp ranks, summed over
// the recurrent-state layers, and the number of those layers.
func (a *Arch) StateBytesPerRequest(tp int) (bytes float64, layers int) {
	for _, g := range a.Layers {
		if s := g.Attn.Mixer().KVSpec(tp, BF16); s.Kind == SpecState {
			bytes += float64(g.Count) * s.StateBytes
			layers += g.Count
		}
	}
	return bytes, layers
}
