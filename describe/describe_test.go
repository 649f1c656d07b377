package describe

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hf"
)

func archs(t *testing.T) []*arch.Arch {
	t.Helper()
	var out []*arch.Arch
	for _, n := range arch.BuiltinNames() {
		a, err := arch.Builtin(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	dirs, _ := filepath.Glob(filepath.Join("..", "model", "hf", "testdata", "*", "config.json"))
	for _, p := range dirs {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		a, err := hf.Load(p)
		if err != nil {
			continue // testdata also holds configs that must be refused
		}
		out = append(out, a)
	}
	ms, err := hf.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		out = append(out, m.Arch)
	}
	if len(out) < 3 {
		t.Fatalf("only %d models to check", len(out))
	}
	return out
}

// TestWeightBytesByDTypeMatchesMemory: the by-format split of `model show` adds up to the weights
// the memory budget puts on one GPU at TP = 1.
func TestWeightBytesByDTypeMatchesMemory(t *testing.T) {
	for _, a := range archs(t) {
		var got float64
		for _, b := range a.WeightBytesByDType() {
			got += b
		}
		d := &deploy.Deployment{Model: a, Engine: deploy.EngineConfig{TensorParallel: 1}}
		want := d.WeightsPerGPU().Total()
		// Both sum the same products in a different order: equal to rounding.
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: by format %.0f bytes, memory budget %.0f", a.Name, got, want)
		}
	}
}

// TestStatePerRequest: only models with linear-attention layers hold recurrent state.
func TestStatePerRequest(t *testing.T) {
	for _, a := range archs(t) {
		bytes, layers := a.StateBytesPerRequest(1)
		if hasLinear := a.HasKind(arch.AttnLinear); hasLinear != (layers > 0) || (layers > 0) != (bytes > 0) {
			t.Errorf("%s: %d state layers, %.0f bytes; linear attention: %v", a.Name, layers, bytes, hasLinear)
		}
	}
}

// TestDeploymentKVCacheBytes: a deployment whose KV cache is given in bytes says so in its
// summary, in place of the gpu-memory-utilization vLLM does not use then.
func TestDeploymentKVCacheBytes(t *testing.T) {
	a, err := arch.Builtin("glm-5.3-flash")
	if err != nil {
		t.Fatal(err)
	}
	e := deploy.DefaultEngineConfig()
	d := &deploy.Deployment{Model: a, Engine: e}
	if s := Deployment(d); !strings.Contains(s, "gpu-memory-utilization 0.90") {
		t.Errorf("summary %q: want the utilization", s)
	}
	d.Engine.KVCacheMemoryBytes = 4 << 30
	if s := Deployment(d); !strings.Contains(s, "kv-cache-memory-bytes 4294967296 (4.00 GiB per GPU)") || strings.Contains(s, "gpu-memory-utilization") {
		t.Errorf("summary %q: want the KV cache's bytes and no utilization", s)
	}
}
