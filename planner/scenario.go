package planner

import (
	"fmt"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/workload"
)

// Models are the model a plan is for and its speculative drafter, with the references the user
// gave them by.
type Models struct {
	Model, Drafter       *arch.Arch
	ModelRef, DrafterRef string
	// Scenario is true when Model is the scenario deployment's own model (its current
	// configuration can then be marked in the plan).
	Scenario bool
}

// ModelsFor resolves a model and a drafter reference (see scenario.LoadArch) against a
// scenario's deployment d. An empty model reference is d's model. An empty drafter reference is
// d's drafter when the model is d's own, else the built-in "<model>-dflash2" if there is one,
// else none.
func ModelsFor(d *deploy.Deployment, modelRef, drafterRef string) (*Models, error) {
	ms := &Models{ModelRef: modelRef, DrafterRef: drafterRef, Scenario: modelRef == ""}
	if modelRef == "" {
		ms.ModelRef, ms.Model = d.Model.Name, d.Model
	} else {
		a, err := scenario.LoadArch(modelRef)
		if err != nil {
			return nil, fmt.Errorf("--model: %w", err)
		}
		ms.Model = a
		if a.Name != modelRef {
			ms.ModelRef = fmt.Sprintf("%s (%s)", a.Name, modelRef)
		}
		ms.Scenario = a.Name == d.Model.Name && a.Family == d.Model.Family
	}
	switch {
	case drafterRef != "":
		a, err := scenario.LoadArch(drafterRef)
		if err != nil {
			return nil, fmt.Errorf("--drafter: %w", err)
		}
		ms.Drafter = a
	case ms.Scenario && d.Drafter != nil:
		ms.Drafter, ms.DrafterRef = d.Drafter, d.Engine.Speculative.Model
	default:
		if a, err := arch.Builtin(ms.Model.Name + "-dflash2"); err == nil {
			ms.Drafter, ms.DrafterRef = a, ms.Model.Name+"-dflash2"
		}
	}
	return ms, nil
}

// BenchWorkload is one llm-inference-bench decode cell under proto: users streams at context
// (a label such as "128K"). A configuration whose streams have not all run at once after a
// simulated minute cannot hold them (the benchmark would wait forever), so the cell gives up
// on it then.
func BenchWorkload(proto *protocol.Protocol, context string, users int) *workload.Spec {
	w := &workload.Spec{Name: fmt.Sprintf("%s x %d users", context, users), Kind: workload.KindBench,
		Bench: workload.BenchFromProtocol(proto, context, users)}
	w.Bench.ReadyLimitS = 60
	return w
}

// ScenarioQuestion asks about ms under the workload w on the candidate gpus over the sweep sp,
// with the scenario r's engine as the base, its seed, and its parameter policy (source-tagged
// intervals around throughputs). When ms is the scenario's model its configuration is marked
// current; otherwise, unless sp sets it, max_model_len is the workload's need rounded up to
// 1,024 tokens and at least 131,072, since the scenario's belongs to its own model, and a note
// says so.
func ScenarioQuestion(r *scenario.Resolved, ms *Models, w *workload.Spec, gpus []hardware.GPU, sp Space) *Question {
	chooser, ref := PolicyParams(r.Policy)
	q := &Question{Model: ms.Model, Drafter: ms.Drafter, ModelRef: ms.ModelRef, DrafterRef: ms.DrafterRef, Workload: w,
		Base: r.Deployment.Engine, GPUs: gpus, Space: sp, Seed: r.Scenario.Seed, Params: chooser, ParamsRef: ref,
		Uncertainty: SourceWidths{}}
	if !ms.Scenario && sp.MaxModelLen == 0 {
		// The model's own limit (max_position_embeddings) is not part of its description.
		need := (w.MaxRequestTokens() + 1023) / 1024 * 1024
		q.Space.MaxModelLen = max(need, 131072)
		q.Notes = append(q.Notes, fmt.Sprintf("max_model_len %d for every row (the model's own limit is not known; set --max-model-len)", q.Space.MaxModelLen))
	}
	if ms.Scenario {
		q.Current = CurrentConfig(r.Deployment)
	}
	return q
}
