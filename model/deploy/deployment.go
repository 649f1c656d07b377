package deploy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
)

// Deployment is a model served by an engine on hardware: what the memory and step-time models
// need. Drafter is the separate draft model for speculative decoding (nil when the method uses
// the target itself, such as ngram, or when speculation is off).
type Deployment struct {
	Model    *arch.Arch
	Drafter  *arch.Arch
	Hardware hardware.Machine
	Engine   EngineConfig
}

// Validate checks the deployment as a whole, with the numbers in the message.
func (d *Deployment) Validate() error {
	e := &d.Engine
	if err := e.Validate(); err != nil {
		return err
	}
	if err := d.Hardware.GPU.Validate(); err != nil {
		return err
	}
	if d.Hardware.Count <= 0 {
		return fmt.Errorf("hardware.count = %d: must be a positive integer", d.Hardware.Count)
	}
	if e.GPUs() != d.Hardware.Count {
		return fmt.Errorf("engine uses tensor_parallel_size %d x pipeline_parallel_size %d x data_parallel_size %d = %d GPUs but hardware.count = %d",
			e.TensorParallel, e.PipelineParallel, e.DataParallel, e.GPUs(), d.Hardware.Count)
	}
	if n := e.DCP(); n > 1 && (e.TensorParallel%n != 0) {
		return fmt.Errorf("engine.decode_context_parallel_size = %d: must divide tensor_parallel_size %d (vLLM splits each TP group's KV cache over DCP of its ranks)", n, e.TensorParallel)
	}
	if e.KVDType() == arch.NVFP4 {
		for _, g := range d.Model.Layers {
			if k := g.Attn.Kind; k != arch.AttnSparseMLA && k != arch.AttnLinear {
				return fmt.Errorf("engine.kv_cache_dtype = %q: an NVFP4 cache is a packed sparse-MLA page (community builds' nvfp4_ds_mla); model %q has %s attention", e.KVCacheDType, d.Model.Name, k)
			}
		}
	}
	if e.PipelineParallel > 1 && e.Speculative.Enabled() {
		return &NotSimulatedError{fmt.Sprintf("engine.pipeline_parallel_size = %d with engine.speculative.method = %q", e.PipelineParallel, e.Speculative.Method),
			"speculative decoding across pipeline stages (the drafter on the last stage, its hand-offs) is not modelled; pipeline parallel is simulated without it"}
	}
	if l := d.Model.NumLayers(); e.PipelineParallel > l {
		return fmt.Errorf("engine.pipeline_parallel_size = %d: more stages than the %d layers of model %q", e.PipelineParallel, l, d.Model.Name)
	}
	if s := &e.Speculative; s.Enabled() && !slices.Contains(SimulatedSpecMethods(), s.Method) {
		return &NotSimulatedError{fmt.Sprintf("engine.speculative.method = %q", s.Method),
			fmt.Sprintf("the simulator runs %s", strings.Join(SimulatedSpecMethods(), ", "))}
	}
	tp := e.TensorParallel
	for i, g := range d.Model.Layers {
		if heads := g.Attn.Mixer().ShardedHeads(); heads%tp != 0 {
			return fmt.Errorf("engine.tensor_parallel_size = %d does not divide the %d attention heads of model %q layers[%d]", tp, heads, d.Model.Name, i)
		}
		if g.FFN.Kind == arch.FFNMoE && e.ExpertParallel && g.FFN.Experts%e.EPSize() != 0 {
			return fmt.Errorf("expert parallel size %d does not divide the %d experts of model %q layers[%d]", e.EPSize(), g.FFN.Experts, d.Model.Name, i)
		}
	}
	for _, a := range []*arch.Arch{d.Model, d.Drafter} {
		if a == nil {
			continue
		}
		for _, dt := range a.WeightDTypes() {
			if ok, why := d.Hardware.GPU.SupportsWeights(dt); !ok {
				return fmt.Errorf("model %q stores weights in %s: %s", a.Name, dt, why)
			}
		}
	}
	return d.validateSpec()
}

// NotSimulatedError is a configuration vLLM runs that the simulator does not simulate yet. A
// scenario may record it faithfully (import prints it); every simulating command refuses it
// with the reason rather than simulate something else.
type NotSimulatedError struct {
	What, Why string
}

// DataParallelMode says how the data-parallel ranks of the deployment are simulated (vLLM
// vllm/v1/engine/core.py, DPEngineCoreProc; reference vllm-defaults.md, Parallelism):
//
//	DPNone      data_parallel_size 1
//	DPReplicas  a model without MoE layers: the engine cores run independently, each its own
//	            scheduler, budget and KV pool; the API server spreads the requests over them. They
//	            are simulated as that many replicas of the DP = 1 engine (ReplicaDeployment)
//	DPLockstep  a MoE model: the ranks step together (the MoE layers span every rank, idle ranks
//	            run dummy batches), so one engine holds the D ranks' requests and the step is
//	            priced on the busiest rank (package cost)
func (d *Deployment) DataParallelMode() DPMode {
	switch {
	case d.Engine.DataParallel <= 1:
		return DPNone
	case d.Model.IsMoE():
		return DPLockstep
	}
	return DPReplicas
}

// DPMode is how data-parallel ranks are simulated (Deployment.DataParallelMode).
type DPMode int

// The data-parallel modes.
const (
	DPNone DPMode = iota
	DPReplicas
	DPLockstep
)

// ReplicaDeployment is one data-parallel replica of a DPReplicas deployment: the same engine
// with data_parallel_size 1 on tensor x pipeline GPUs, and the number of replicas. Other
// deployments come back as they are, with 1.
func (d *Deployment) ReplicaDeployment() (*Deployment, int) {
	if d.DataParallelMode() != DPReplicas {
		return d, 1
	}
	r := *d
	n := r.Engine.DataParallel
	r.Engine.DataParallel = 1
	r.Hardware.Count = r.Engine.GPUs()
	return &r, n
}

// LockstepRanks is the number of data-parallel ranks one simulated engine holds: D for a
// DPLockstep deployment, else 1.
func (d *Deployment) LockstepRanks() int {
	if d.DataParallelMode() == DPLockstep {
		return d.Engine.DataParallel
	}
	return 1
}

func (e *NotSimulatedError) Error() string { return e.What + ": not simulated yet: " + e.Why }
