package scenario

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/vllmcmd"
)

// TestSeedLaunchCommandImports: the launch command printed in the measured seed page, imported,
// gives the engine section of the embedded seed scenario (the flags that matter to the simulation).
func TestSeedLaunchCommandImports(t *testing.T) {
	var cmd string
	for _, line := range strings.Split(string(SeedMeasured()), "\n") {
		if strings.HasPrefix(line, "env VLLM_") {
			cmd = strings.TrimSuffix(line, "Prefill")
		}
	}
	if cmd == "" {
		t.Fatal("no launch command in the embedded seed page")
	}
	words, err := vllmcmd.Split(cmd)
	if err != nil {
		t.Fatal(err)
	}
	res, err := vllmcmd.Parse(words, deploy.DefaultEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	got, want := res.Engine, Default().Engine
	// Informational fields the command does not carry.
	got.Version, got.Quantization = want.Version, want.Quantization
	if got != want {
		t.Errorf("imported engine differs from the seed scenario:\n got %+v\nwant %+v", got, want)
	}
	if res.Model != "nvidia/GLM-5.3-Flash-NVFP4" {
		t.Errorf("model %q", res.Model)
	}
	if _, err := BuiltinOrNil(res.Model); err != nil {
		t.Errorf("the command's model does not resolve to the built-in description: %v", err)
	}
}
