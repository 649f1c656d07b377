package arch

import "fmt"

// AttnLinear is a recurrent linear-attention layer (KDA, GDN, Mamba): a constant state per request.
const AttnLinear AttnKind = "linear"

// Linear is a linear-attention layer with a matrix-valued recurrent state per head and a short
// causal convolution over q, k and v: Gated DeltaNet (Yang, Kautz and Hatamizadeh, "Gated Delta
// Networks: Improving Mamba2 with Delta Rule", ICLR 2025) and Kimi Delta Attention (Moonshot AI,
// "Kimi Linear: An Expressive, Efficient Attention Architecture", 2025).
type Linear struct {
	StateHeads   int   // heads, each with a StateKeyDim x StateValDim state
	StateKeyDim  int   // key dimension of a head
	StateValDim  int   // value dimension of a head
	ConvKernel   int   // short causal convolution width (0: none)
	ConvChannels int   // channels with a convolution (q, k and v)
	StateDType   DType // storage of the state
}

func checkLinear(a *Attention) error {
	if a.StateHeads <= 0 || a.StateKeyDim <= 0 || a.StateValDim <= 0 {
		return fmt.Errorf("linear needs state_heads, state_key_dim and state_value_dim > 0")
	}
	if a.StateDType == "" {
		a.StateDType = FP32
	}
	switch a.StateDType {
	case FP32, BF16, FP16, FP8:
	default:
		return fmt.Errorf("state_dtype = %q: want fp32, bf16, fp16 or fp8", a.StateDType)
	}
	if a.ConvChannels == 0 && a.ConvKernel > 0 {
		a.ConvChannels = a.StateHeads * (2*a.StateKeyDim + a.StateValDim)
	}
	if a.Heads == 0 {
		a.Heads = a.StateHeads
	}
	return nil
}

func newLinear(a *Attention) Mixer {
	return Linear{StateHeads: a.StateHeads, StateKeyDim: a.StateKeyDim, StateValDim: a.StateValDim,
		ConvKernel: a.ConvKernel, ConvChannels: a.ConvChannels, StateDType: a.StateDType}
}

// Kind is AttnLinear.
func (Linear) Kind() AttnKind { return AttnLinear }

// ShardedHeads is the state heads: TP splits the states.
func (l Linear) ShardedHeads() int { return l.StateHeads }

// ProjParams is q, k, v and o plus small gate/beta projections (about one more head-count-wide map
// each): h x (2 H dk + H dv) + H dv x h + 2 h H.
func (l Linear) ProjParams(hidden int) int64 {
	h := int64(hidden)
	qk := int64(l.StateHeads * l.StateKeyDim)
	v := int64(l.StateHeads * l.StateValDim)
	return h*(2*qk+v) + v*h + 2*h*int64(l.StateHeads)
}

// KVProjParams is 0: the layer caches no per-token keys or values.
func (Linear) KVProjParams(hidden int) int64 { return 0 }

// KVSpec is a constant state page per request: per rank H/tp x dk x dv states in StateDType, plus
// the convolution's last ConvKernel - 1 inputs of ConvChannels/tp channels in bf16 (vLLM
// vllm/v1/kv_cache_interface.py, MambaSpec).
func (l Linear) KVSpec(tp int, kv DType) KVSpec {
	s := KVSpec{Kind: SpecState, AlignTokens: 16}
	heads := float64(l.StateHeads) / float64(tp)
	s.StateBytes = heads * float64(l.StateKeyDim*l.StateValDim) * l.StateDType.BytesPerParam()
	if l.ConvKernel > 1 {
		s.StateBytes += float64(l.ConvKernel-1) * float64(l.ConvChannels) / float64(tp) * BF16.BytesPerParam()
	}
	return s
}

func (l Linear) String() string {
	s := fmt.Sprintf("linear attention %d heads, %dx%d %s state", l.StateHeads, l.StateKeyDim, l.StateValDim, l.StateDType)
	if l.ConvKernel > 0 {
		s += fmt.Sprintf(", conv %d", l.ConvKernel)
	}
	return s
}

// linearCost is one linear-attention layer on one GPU.
type linearCost struct {
	stateBytes    float64 // per request, including the conv state
	flopsPerToken float64 // chunked scan
}

// scanChunkTokens is the chunk length of the chunked delta-rule scan (flash-linear-attention's
// chunk_gated_delta_rule and KDA kernels use 64).
const scanChunkTokens = 64

// Kernels: the two input projections, the short causal convolution, the recurrent or chunked
// scan, the gated norm and the output projection (vLLM's gated delta-net and KDA layers).
func (Linear) Kernels() int { return 6 }

// SmallKernels: none beyond Kernels (the convolution and gated norm are counted there); the input
// and output projections quantise their input.
func (Linear) SmallKernels() (elementwise, quantized int) { return 0, 2 }

// Prepare splits the state heads over tp ranks. The chunked delta-rule scan (Yang et al.,
// "Parallelizing Linear Transformers with the Delta Rule over Sequence Length", NeurIPS 2024)
// costs about 6 dk dv FLOPs per token and head for the state update and output, plus intra-chunk
// attention of about 4 x chunk x (dk + dv).
func (l Linear) Prepare(tp int, kv DType) LayerCost {
	h := float64(l.StateHeads) / float64(tp)
	dk, dv := float64(l.StateKeyDim), float64(l.StateValDim)
	return &linearCost{stateBytes: l.KVSpec(tp, kv).StateBytes, flopsPerToken: h * (6*dk*dv + 4*scanChunkTokens*(dk+dv))}
}

// Seconds is state time only. Decode reads the state once and writes one state per verified
// position (kept for rollback of rejected drafts). Prefill runs the chunked scan at
// linear_attn_eff of the bf16 peak and reads and writes the state once.
func (c *linearCost) Seconds(r *Roofline, start, tokens int, decode bool) Seconds {
	ft := float64(tokens)
	if decode {
		return Seconds{State: (1 + ft) * c.stateBytes / r.BandwidthBytesPerS}
	}
	scan := ft * c.flopsPerToken / (r.BF16FLOPS * r.LinearAttnEff)
	return Seconds{State: scan + 2*c.stateBytes/r.BandwidthBytesPerS}
}
