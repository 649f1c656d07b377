package priors

import (
	"fmt"
	"strings"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// LevelKeys name what a deployment is made of, one key per parameter level: a gpu-level value
// belongs to a GPU, an engine-level one to an engine release series, a model-level one to a
// model. A multi-source fit keeps one value per key, and a parameter file of such values (sets)
// applies each to the deployments with the same key.
type LevelKeys struct {
	GPU    string // the GPU's catalog name
	Engine string // engine and release series, "vllm 0.7.x (V0)"
	Model  string // the model's name
}

// Keys returns the deployment's keys. The engine key is the engine and its release series
// ("vllm 0.7.x (V0)"): the engine-level values (per-step CPU and GPU overheads, memory
// reserves, the API server) belong to the engine loop's code, which changes between minor
// releases; patch releases and dev or nightly builds of one series share its values, so that
// two GPUs measured on one series (dstack's H100 and MI300X on 0.6.3, H200 and MI300X on 0.7.x)
// tell the engine's share of an error from the GPUs'. A version that does not parse is its own
// key.
func Keys(d *deploy.Deployment) LevelKeys {
	e := d.Engine.Name
	if e == "" {
		e = "vllm"
	}
	v := d.Engine.Version
	switch pv, err := deploy.ParseVersion(v); {
	case v == "":
		v = "(version not given)"
	case err == nil:
		v = fmt.Sprintf("%d.%d.x", pv.Major, pv.Minor)
		if strings.EqualFold(e, "vllm") {
			if d.RunsVLLMV0() {
				v += " (V0)"
			} else {
				v += " (V1)"
			}
		}
	}
	if s := d.Engine.Series; s != "" {
		// A build series of its own (a community fork): its engine-level values are its own.
		return LevelKeys{GPU: d.Hardware.GPU.Name, Engine: e + " " + s, Model: d.Model.Name}
	}
	return LevelKeys{GPU: d.Hardware.GPU.Name, Engine: e + " " + v, Model: d.Model.Name}
}

// Key returns the key of the level ("" for the workload level, which no fit keys).
func (k LevelKeys) Key(l param.Level) string {
	switch l {
	case param.LevelGPU:
		return k.GPU
	case param.LevelEngine:
		return k.Engine
	case param.LevelModel:
		return k.Model
	}
	return ""
}
