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
	if e.PipelineParallel != 1 {
		return &NotSimulatedError{fmt.Sprintf("engine.pipeline_parallel_size = %d", e.PipelineParallel),
			"pipeline parallelism (layer stages, their hand-offs and bubbles) is not modelled; only 1 is simulated"}
	}
	if e.DataParallel != 1 {
		return &NotSimulatedError{fmt.Sprintf("engine.data_parallel_size = %d", e.DataParallel),
			"data-parallel engine cores inside one server (their load balancing, and MoE ranks stepping together) are not modelled; only 1 is simulated (run DP replicas as separate deployments)"}
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

func (e *NotSimulatedError) Error() string { return e.What + ": not simulated yet: " + e.Why }
