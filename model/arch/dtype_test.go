package arch

import (
	"math"
	"strings"
	"testing"
)

// TestFormatBytes checks bytes per weight of every format family against hand arithmetic: elements
// plus group or block scales (and zero points), and per-row scales separately.
func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		d       DType
		perElem float64 // BytesPerParam
		perRow  float64 // RowScaleBytes
		compute DType
	}{
		{BF16, 2, 0, BF16},
		{FP16, 2, 0, BF16},
		{FP32, 4, 0, BF16},
		{NVFP4, 0.5 + 1.0/16, 0, NVFP4},                      // 0.5625: fp8 scale per 16
		{MXFP4, 0.5 + 1.0/32, 0, NVFP4},                      // 0.53125: e8m0 scale per 32
		{FP8, 1.0002, 0, FP8},                                // 1 + 4/(128 x 128) = 1.000244, rounded
		{"fp8-b128x128", 1 + 4.0/(128*128), 0, FP8},          // the same block, exact
		{"fp8-b64x64", 1 + 4.0/(64*64), 0, FP8},              // 1.000977
		{FP8Tensor, 1, 0, FP8},                               // one scale per tensor: not counted
		{FP8Channel, 1, 4, FP8},                              // fp32 scale per output row
		{"fp8-channel-a16", 1, 4, BF16},                      // W8A16: dequantized for the MMA
		{"fp8-b128x128-a16", 1 + 4.0/(128*128), 0, BF16},     // block fp8, weight-only
		{INT8, 1, 0, FP8},                                    // legacy: per-channel scales not counted
		{"int8-channel", 1, 4, FP8},                          // W8A8 int8
		{"int8-channel-a16", 1, 4, BF16},                     // W8A16 int8
		{"uint8-g128", 1 + 2.0/128 + 1.0/128, 0, BF16},       // GPTQ 8-bit: fp16 scale + 8-bit zero per 128
		{INT4, 0.5 + 2.0/128, 0, BF16},                       // legacy int4 = int4-g128
		{"int4-g128", 0.5 + 2.0/128, 0, BF16},                // W4A16 symmetric, 0.515625
		{"int4-g32", 0.5 + 2.0/32, 0, BF16},                  // 0.5625
		{"uint4-g128", 0.5 + 2.0/128 + 0.5/128, 0, BF16},     // GPTQ/AWQ: + 4-bit zero per group, 0.519531
		{"int4-channel", 0.5, 2, BF16},                       // 16-bit scale per row
		{"uint4-channel", 0.5, 2.5, BF16},                    // + 4-bit zero per row
		{"bnb-nf4", 0.5 + 4.0/64, 0, BF16},                   // fp32 absmax per 64: 0.5625
		{"bnb-nf4-dq", 0.5 + 1.0/64 + 4.0/(64*256), 0, BF16}, // 8-bit absmax + fp32 per 256 blocks: 0.515869
		{"bnb-fp4-dq", 0.5 + 1.0/64 + 4.0/(64*256), 0, BF16},
		{"bnb-int8", 1, 4, BF16},       // LLM.int8: fp32 absmax per row
		{"nvfp4-a16", 0.5625, 0, BF16}, // NVFP4 weights, bf16 activations
	} {
		if err := tc.d.Valid(); err != nil {
			t.Errorf("%s: %v", tc.d, err)
			continue
		}
		if got := tc.d.BytesPerParam(); math.Abs(got-tc.perElem) > 1e-15 {
			t.Errorf("%s: BytesPerParam = %v, want %v", tc.d, got, tc.perElem)
		}
		if got := tc.d.RowScaleBytes(); got != tc.perRow {
			t.Errorf("%s: RowScaleBytes = %v, want %v", tc.d, got, tc.perRow)
		}
		if got := tc.d.ComputeClass(); got != tc.compute {
			t.Errorf("%s: ComputeClass = %v, want %v", tc.d, got, tc.compute)
		}
	}
	for _, bad := range []DType{"", "int3", "uint4", "int4-g0", "int4-gx", "fp8-b0x128", "fp8-zz", "uint4-b128x128", "bnb-nf4-g64", "nvfp4-g16", "fp8-a16-a16"} {
		if err := bad.Valid(); err == nil {
			t.Errorf("%q: Valid = nil, want an error", bad)
		}
	}
}

// TestWeightBytesRowScales checks that per-row scales are added per output row: a SwiGLU MLP of
// hidden h and intermediate i has 2i + h rows.
func TestWeightBytesRowScales(t *testing.T) {
	a := Arch{Name: "x", Hidden: 4096, Vocab: 1000, Layers: []LayerGroup{{Count: 2,
		Attn: Attention{Kind: AttnGQA, Heads: 32, KVHeads: 8, HeadDim: 128, DType: FP8Channel},
		FFN:  FFN{Kind: FFNDense, Intermediate: 14336, DType: FP8Channel}}}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	for _, w := range a.WeightSets() {
		var want float64
		switch w.Part {
		case PartDenseMLP:
			// 2 layers x (3 x 4096 x 14336 fp8 values + (2 x 14336 + 4096) rows x 4 bytes).
			want = 2 * (3*4096*14336 + (2*14336+4096)*4)
		case PartAttention:
			// q, k, v, o = 4096 x (4096 + 2 x 1024 + 4096) values; rows taken as params / hidden.
			p := 4096.0 * (4096 + 2*1024 + 4096)
			want = 2 * (p + p/4096*4)
		default:
			continue
		}
		if got := w.Bytes(); got != want {
			t.Errorf("%v: Bytes = %v, want %v", w.Part, got, want)
		}
	}
}

func TestSumChunkPos(t *testing.T) {
	naive := func(s, n, c int) float64 {
		var x float64
		for p := s + 1; p <= s+n; p++ {
			x += float64((p-1)%c + 1)
		}
		return x
	}
	for _, tc := range [][3]int{{0, 10, 4}, {3, 1, 4}, {4, 1, 4}, {7, 20, 8}, {8192, 1, 8192}, {8191, 2, 8192}, {0, 0, 3}} {
		if got, want := sumChunkPos(tc[0], tc[1], tc[2]), naive(tc[0], tc[1], tc[2]); got != want {
			t.Errorf("sumChunkPos%v = %v, want %v", tc, got, want)
		}
	}
}

// TestChunkedGQA: a chunked layer caches like a sliding window of one chunk and attends only
// within its chunk.
func TestChunkedGQA(t *testing.T) {
	at := Attention{Kind: AttnGQA, Heads: 40, KVHeads: 8, HeadDim: 128, Chunk: 8192}
	if err := checkGQA(&at); err != nil {
		t.Fatal(err)
	}
	m := at.Mixer()
	if s := m.KVSpec(1, BF16); s.Kind != SpecSliding || s.Window != 8192 || s.BytesPerToken != 8*256*2 {
		t.Errorf("KVSpec = %+v, want sliding 8192 x 4096 B", s)
	}
	if !strings.Contains(m.String(), "chunked local 8192") {
		t.Errorf("String = %q", m.String())
	}
	r := &Roofline{BandwidthBytesPerS: 1e18, BF16FLOPS: 1, FP8FLOPS: 1, AttnPrefillEff: 1, AttnDecodeEff: 1}
	// Decode at position 8193 (first token of the second chunk) attends to 1 token.
	if got, want := m.Prepare(1, BF16).Seconds(r, 8192, 1, true).Attention, 2*40*1*256.0; got != want {
		t.Errorf("decode after one chunk: %v FLOPs, want %v", got, want)
	}
	bad := Attention{Kind: AttnGQA, Heads: 4, KVHeads: 1, HeadDim: 8, Chunk: 8, Window: 8}
	if err := checkGQA(&bad); err == nil {
		t.Errorf("window and chunk together: no error")
	}
}

// TestNormalizeDTypes: an unknown weight format is an error naming the field, not a panic later.
func TestNormalizeDTypes(t *testing.T) {
	a := Arch{Name: "x", Hidden: 32, Vocab: 10, Layers: []LayerGroup{{Count: 1,
		Attn: Attention{Kind: AttnGQA, Heads: 4, KVHeads: 2, HeadDim: 8},
		FFN:  FFN{Kind: FFNDense, Intermediate: 64, DType: "int5"}}}}
	if err := a.Normalize(); err == nil || !strings.Contains(err.Error(), "layers[0].ffn.dtype") {
		t.Errorf("Normalize = %v, want an error naming layers[0].ffn.dtype", err)
	}
}
