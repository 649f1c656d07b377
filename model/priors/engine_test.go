package priors

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/deploy/deploytest"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

// TestEnginePriorsByGeneration: vLLM releases before 0.8 (the V0 engine) take the V0 per-step
// CPU priors, with their interval; 0.8 on (V1) and the default release keep the generic values;
// another engine gets none; the other parameters do not depend on the engine generation.
func TestEnginePriorsByGeneration(t *testing.T) {
	h100, _ := hardware.BuiltinCatalog().Find("H100-SXM")
	priors := func(engine, v string) (param.Values, param.Provenance) {
		d := &deploy.Deployment{Model: deploytest.Dense(4096), Hardware: hardware.Machine{GPU: h100, Count: 1},
			Engine: deploy.EngineConfig{Name: engine, Version: v, TensorParallel: 1}}
		return Of(d)
	}
	generic := param.Priors()
	for _, v := range []string{"0.6.3.post2.dev308+gb489fc3c", "0.7.4.dev181", "0.7.3"} {
		p, prov := priors("vllm", v)
		if p[param.CPUStepUS] != 2000 || p[param.CPUPerReqUS] != 25 {
			t.Errorf("%s: cpu_step_us %g cpu_per_req_us %g, want the V0 priors 2000 and 25", v, p[param.CPUStepUS], p[param.CPUPerReqUS])
		}
		if o := prov[param.CPUStepUS]; o.Kind != param.OriginPrior || o.Lo != 1000 || o.Hi != 4000 || !strings.Contains(o.Detail, "V0") {
			t.Errorf("%s: cpu_step_us provenance %+v, want the V0 prior's band [1000, 4000]", v, o)
		}
	}
	for _, v := range []string{"0.8.0", "0.28.0", "", "0.32.1rc1.dev96+g8c60cf07b"} {
		p, prov := priors("vllm", v)
		if p[param.CPUStepUS] != generic[param.CPUStepUS] || p[param.CPUPerReqUS] != generic[param.CPUPerReqUS] {
			t.Errorf("%q: cpu_step_us %g cpu_per_req_us %g, want the generic (V1) values %g and %g", v, p[param.CPUStepUS], p[param.CPUPerReqUS], generic[param.CPUStepUS], generic[param.CPUPerReqUS])
		}
		if o := prov[param.CPUPerReqUS]; !strings.Contains(o.Detail, "V1") || !(o.Lo < generic[param.CPUPerReqUS] && generic[param.CPUPerReqUS] < o.Hi) {
			t.Errorf("%q: cpu_per_req_us provenance %+v, want the V1 prior with a band around %g", v, o, generic[param.CPUPerReqUS])
		}
	}
	if p, _ := priors("tensorrt-llm", "1.0"); p[param.CPUStepUS] != generic[param.CPUStepUS] {
		t.Errorf("another engine: cpu_step_us %g, want the generic %g", p[param.CPUStepUS], generic[param.CPUStepUS])
	}
	a, _ := priors("vllm", "0.6.3")
	b, _ := priors("vllm", "0.9.0")
	for _, def := range param.Defs() {
		if def.ID != param.CPUStepUS && def.ID != param.CPUPerReqUS && a[def.ID] != b[def.ID] {
			t.Errorf("%s: V0 %g, V1 %g: only the per-step CPU priors depend on the engine generation", def.Name, a[def.ID], b[def.ID])
		}
	}
}
