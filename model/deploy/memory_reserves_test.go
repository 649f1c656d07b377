package deploy

import "testing"

// The CUDA-graph capture list follows vLLM's rule (1, 2, 4, every 8 below 256, every 16 from 256,
// rounded up to a multiple of 1 + k): counted by hand for 32 sequences and the largest captures
// min(32 x (1 + k) x 2, 512).
func TestCaptureSizes(t *testing.T) {
	d := seedDeployment(t)
	for _, c := range []struct{ k, top, want int }{
		{0, 64, 11},  // 1, 2, 4, 8, 16, ..., 64
		{3, 256, 33}, // 4, 8, ..., 248, 256
		{7, 512, 48}, // 8, 16, ..., 248, 256, 272, ..., 512
		{0, 512, DefaultCaptureSizes},
	} {
		d.Engine.Speculative = Speculative{}
		if c.k > 0 {
			d.Engine.Speculative = Speculative{Method: "dflash", NumTokens: c.k}
		}
		d.Engine.MaxCaptureSize = c.top
		if got := d.CaptureSizes(); got != c.want {
			t.Errorf("k %d, max capture %d: %d sizes, want %d", c.k, c.top, got, c.want)
		}
	}
}
