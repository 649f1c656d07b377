package validate

import (
	"fmt"

	"github.com/servesim/servesim/kvcache"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/sim"
)

// Pipeline parallelism is not simulated by the engine (model/deploy refuses it). For saturated
// offline runs it is approximated from what the engine does simulate. A pipeline of P stages,
// each a TP group of T GPUs holding L/P layers, keeps P micro-batches in flight: each stage works
// on one while the others are in the other stages, so one micro-batch advances by one forward
// pass every P stage times, i.e. every full-model step time on T GPUs, and P of them advance at
// once. Each stage's KV cache holds its layers' cache for all P micro-batches. So the pipeline is
// taken as P engines ("replicas", requests dealt round-robin) that each run the whole model on T
// GPUs (the step time of P stages in sequence), each with 1/P of a stage's KV capacity in tokens.
// The stage's memory budget is that of the heaviest stage: ceil(L/P) layers plus the embeddings
// and the LM head. Not modelled: the activation hand-offs between stages (PCIe point-to-point),
// stage imbalance other than the rounding of layers, and pipeline bubbles when a micro-batch is
// short of work; the engine's batch limits apply per micro-batch.

// stageArch is the heaviest stage's layers: every layer group scaled to ceil(L/P) layers in total
// (groups keep their proportions, rounded; each group keeps at least one layer if it had any).
func stageArch(a *arch.Arch, p int) *arch.Arch {
	total := a.NumLayers()
	want := (total + p - 1) / p
	s := *a
	s.Layers = nil
	left := want
	for i, g := range a.Layers {
		n := int(float64(g.Count)*float64(want)/float64(total) + 0.5)
		if i == len(a.Layers)-1 {
			n = left
		}
		n = max(min(n, left), 0)
		if n == 0 && left > 0 && g.Count > 0 && i == len(a.Layers)-1 {
			n = 1
		}
		if n > 0 {
			g.Count = n
			s.Layers = append(s.Layers, g)
			left -= n
		}
	}
	return &s
}

// pipelineServer is one of the P replica engines of a pipeline deployment d (d.Engine has PP 1
// and TP T; the pipeline has P x T GPUs), and how the KV capacity was set.
func pipelineServer(d *deploy.Deployment, p param.Values, stages int) (*sim.Server, string, error) {
	full := d.Model
	st := stageArch(full, stages)
	tp := d.Engine.TensorParallel
	ds := &deploy.Deployment{Model: st, Hardware: hardware.Machine{GPU: d.Hardware.GPU, Count: tp}, Engine: d.Engine}
	if err := ds.Validate(); err != nil {
		return nil, "", err
	}
	mem := ds.Memory(&p)
	if msg := mem.FitError(); msg != "" {
		return nil, "", fmt.Errorf("pipeline stage (%d of %d layers) on %d x %s: %s", st.NumLayers(), full.NumLayers(), tp, d.Hardware.GPU.Name, msg)
	}
	// Per GPU, the whole model's KV bytes per token are L / L_stage times the stage's; a
	// replica holds 1/P of the stage's tokens.
	avail := mem.AvailableKV * float64(full.NumLayers()) / float64(st.NumLayers()) / float64(stages)
	e := &d.Engine
	l, err := kvcache.NewLayout(d.KVSpecs(&p), avail, kvcache.Options{BlockSize: e.BlockSize, SpecTokens: e.SpecTokens(),
		MaxModelLen: e.MaxModelLen, MaxNumBatchedTokens: e.MaxNumBatchedTokens, PrefixCaching: e.PrefixCaching})
	if err != nil {
		return nil, "", fmt.Errorf("pipeline micro-batch engine: %w", err)
	}
	srv := &sim.Server{Deployment: d, Params: p, Memory: mem, Layout: l, Cost: cost.New(d, p)}
	how := fmt.Sprintf("pipeline stage of %d/%d layers: %d tokens of KV per micro-batch engine (1/%d of the stage's)", st.NumLayers(), full.NumLayers(), l.KVCacheSizeTokens, stages)
	return srv, how, nil
}
