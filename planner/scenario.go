package planner

import (
	"fmt"
	"path/filepath"

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
	// ServeRef is what `vllm serve` is given for Model: the reference as the user gave it (a
	// config.json's directory for the file); "" for the scenario's own model.
	ServeRef string
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
		ms.ServeRef = modelRef
		if filepath.Base(modelRef) == "config.json" {
			ms.ServeRef = filepath.Dir(modelRef)
		}
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
	w := &workload.Spec{Name: fmt.Sprintf("%s x %d users", context, users), Kind: workload.KindLLMBenchCell,
		Cell: workload.BenchFromProtocol(proto, context, users)}
	w.Cell.ReadyLimitS = 60
	return w
}

// ScenarioQuestion asks about ms under the workload w on the candidate gpus over the sweep sp,
// with the scenario r's seed and parameter policy (source-tagged intervals around throughputs).
// When ms is the scenario's model, the rows start from the scenario's engine flags as given and
// its configuration is marked current; otherwise they start from vLLM's defaults (for the
// scenario's engine version), with the max_model_len vLLM derives from the model's config unless
// sp sets one. Either way a flag that neither the rows nor the scenario give takes vLLM's default
// for the row's GPU (deploy.Resolve).
func ScenarioQuestion(r *scenario.Resolved, ms *Models, w *workload.Spec, gpus []hardware.GPU, sp Space) *Question {
	chooser, ref := PolicyParams(r.Policy)
	q := &Question{Model: ms.Model, Drafter: ms.Drafter, ModelRef: ms.ModelRef, DrafterRef: ms.DrafterRef, Workload: w,
		GPUs: gpus, Space: sp, Seed: r.Scenario.Seed, Params: chooser, ParamsRef: ref,
		Uncertainty: ProvenanceWidths{}, Provenance: PolicyProvenance(r.Policy), ServeModel: ms.ServeRef}
	given := deploy.ArgsOf(r.Deployment.Engine)
	if r.Given != nil {
		given = r.Given.Engine.Clone()
	}
	if ms.Scenario {
		q.Base = r.Deployment.Engine
		q.Engine = &given
		q.Current = CurrentConfig(r.Deployment)
		if r.Given != nil && r.Given.Model.Name != "" {
			q.ServeModel = r.Given.Model.Name
		}
		return q
	}
	q.Engine = &deploy.EngineArgs{Version: given.Version}
	if sp.MaxModelLen == 0 && ms.Model.MaxModelLen > 0 {
		rule := ms.Model.MaxModelLenRule
		if rule == "" {
			rule = "the model description's max_model_len"
		}
		q.Notes = append(q.Notes, fmt.Sprintf("max_model_len %d for every row: what vLLM derives from the model's config (%s); --max-model-len to change", ms.Model.MaxModelLen, rule))
	}
	return q
}
