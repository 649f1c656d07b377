package arch

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

// KVSpec returns the per-GPU KV spec of one layer of the group (Layers is left zero).
func (a *Attention) KVSpec(tp int, kv DType, name string) KVSpec {
	s := KVSpec{Name: name, AlignTokens: 16}
	switch a.Kind {
	case AttnGQA:
		kvh := max(1, a.KVHeads/tp)
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
