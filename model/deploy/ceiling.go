package deploy

import (
	"fmt"

	"github.com/servesim/servesim/model/arch"
)

// PlausibleMargin is how far past the physical limits of Ceiling a measured value must be before
// it is called implausible (a factor, dimensionless): the limits assume peak bandwidth and peak
// FLOPs that no run reaches, so a measured value beyond them by this factor is a wrong file, a
// wrong unit or a wrong deployment, not a fast run.
const PlausibleMargin = 2.0

// Ceiling is what physics allows a deployment, whatever its kernels and parameters: no forward
// pass is shorter than reading the weights it runs through once at the GPUs' peak memory
// bandwidth, and no token is produced faster than its FLOPs allow at the GPUs' peak for the
// model's weight formats (the fastest of them). The
// measured values of a run (result files, measured matrices) are checked against it.
type Ceiling struct {
	// ForwardS is the shortest forward pass of one engine, in seconds: the weights one token runs
	// through (attention, dense MLPs, shared experts, top_k routed experts, lm_head; not the
	// embedding table nor an encoder) over the peak bandwidth of every GPU of the engine (tensor x
	// pipeline x lockstep data-parallel ranks). A time to first token is at least one forward
	// pass, a step of decode too.
	ForwardS float64
	// TokensPerStep is the most tokens one sequence gains in a step: 1 + the speculative tokens.
	TokensPerStep int
	// OutputTokS is the most output tokens per second of the deployment: the lower of the
	// bandwidth limit (engines x max_num_seqs x lockstep ranks x TokensPerStep tokens every
	// ForwardS) and the compute limit (every GPU at its dense tensor-core peak for the model's
	// fastest weight format, 2 FLOPs per active weight per token).
	OutputTokS float64
	// Why describes the limits with their numbers, for messages.
	Why string
}

// Ceiling computes the deployment's physical limits.
func (d *Deployment) Ceiling() Ceiling {
	e := &d.Engine
	g := &d.Hardware.GPU
	active := activeBytes(d.Model)
	ranks := d.LockstepRanks()
	engines := 1
	if d.DataParallelMode() == DPReplicas {
		engines = e.DataParallel
	}
	perEngine := max(e.TensorParallel, 1) * max(e.PipelineParallel, 1) * ranks
	bw := g.BandwidthBytesPerS() * float64(perEngine)
	c := Ceiling{TokensPerStep: 1 + e.SpecTokens()}
	if bw > 0 {
		c.ForwardS = active / bw
	}
	peak := 0.0
	for _, dt := range d.Model.WeightDTypes() {
		peak = max(peak, g.PeakFLOPS(dt))
	}
	peak *= float64(max(d.Hardware.Count, 1))
	flopsPerToken := 2 * float64(d.Model.Params().Active)
	compute := 0.0
	if flopsPerToken > 0 {
		compute = peak / flopsPerToken
	}
	band := 0.0
	if c.ForwardS > 0 {
		band = float64(engines*max(e.MaxNumSeqs, 1)*ranks*c.TokensPerStep) / c.ForwardS
	}
	switch {
	case band > 0 && compute > 0:
		c.OutputTokS = min(band, compute)
	default:
		c.OutputTokS = max(band, compute)
	}
	c.Why = fmt.Sprintf("%s of active weights per token, %d GPU(s) per engine at %.0f GB/s, %.0f TFLOPS per GPU, %d sequences x %d token(s) per step",
		gb(active), perEngine, g.BandwidthGBps, peak/1e12/float64(max(d.Hardware.Count, 1)), engines*max(e.MaxNumSeqs, 1)*ranks, c.TokensPerStep)
	return c
}

func gb(b float64) string {
	if b >= 1e9 {
		return fmt.Sprintf("%.3g GB", b/1e9)
	}
	return fmt.Sprintf("%.3g MB", b/1e6)
}

// activeBytes is the storage of the weights one token runs through (one copy): every set but the
// embedding table and the encoder, routed experts counted top_k of E.
func activeBytes(a *arch.Arch) float64 {
	if a == nil {
		return 0
	}
	total := 0.0
	for _, s := range a.WeightSets() {
		b := s.Bytes()
		switch s.Part {
		case arch.PartEmbedding, arch.PartEncoder:
			if s.Part == arch.PartEmbedding && a.TiedEmbed && !a.SharesTargetEmbeddings {
				total += b // the tied table is the lm_head too
			}
			continue
		case arch.PartRoutedExperts:
			if s.Experts > 0 {
				b *= float64(s.ActiveExperts) / float64(s.Experts)
			}
		}
		total += b
	}
	return total
}
