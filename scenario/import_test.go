package scenario

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/servesim/servesim/vllmcmd"
)

// seedCommand is the launch command printed in the measured seed page.
func seedCommand(t *testing.T) []string {
	t.Helper()
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
	return words
}

// TestSeedLaunchCommandImports: the launch command printed in the measured seed page, imported
// into an empty scenario with the seed's GPU and engine version (a command carries neither),
// resolves to the embedded seed scenario: the same engine, model, drafter and hardware, and the
// same `servesim config` TOML, byte for byte, but for the scenario's name, the comments (which
// list the settings the command left to vLLM) and the [fit] table, which belongs to the seed's
// measurement, not to its deployment.
func TestSeedLaunchCommandImports(t *testing.T) {
	seed := Default()
	seed.Fit = FitSpec{}
	s := New()
	if _, err := s.ApplyVLLM(seedCommand(t)); err != nil {
		t.Fatal(err)
	}
	s.Hardware.GPU = "RTX-PRO-6000-Server"
	s.Engine.Version = seed.Engine.Version
	got, err := s.Resolve(ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := seed.Resolve(ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Deployment.Engine.Equal(&want.Deployment.Engine) {
		t.Errorf("imported engine differs from the seed scenario:\n got %+v\nwant %+v", got.Deployment.Engine, want.Deployment.Engine)
	}
	if !reflect.DeepEqual(got.Deployment.Model, want.Deployment.Model) || !reflect.DeepEqual(got.Deployment.Drafter, want.Deployment.Drafter) ||
		!reflect.DeepEqual(got.Deployment.Hardware, want.Deployment.Hardware) {
		t.Errorf("model, drafter or hardware differ: %s/%s on %+v, want %s/%s on %+v", got.Deployment.Model.Name, got.DrafterFrom,
			got.Deployment.Hardware, want.Deployment.Model.Name, want.DrafterFrom, want.Deployment.Hardware)
	}
	if got.Source != SourceCalibrated {
		t.Errorf("source %s, want calibrated (the seed's own calibration)", got.Source)
	}
	// Written and read back, both resolve to the same engine and parameters (the imported one
	// leaves to vLLM the flags its command does not give; the seed file gives them all).
	back := func(r *Resolved) *Resolved {
		var buf bytes.Buffer
		if err := r.Encode(&buf, ""); err != nil {
			t.Fatal(err)
		}
		s, err := Parse(buf.Bytes(), "written.toml")
		if err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		b, err := s.Resolve(ResolveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := back(got), back(want)
	if !a.Deployment.Engine.Equal(&b.Deployment.Engine) || a.Params != b.Params || a.Source != b.Source {
		t.Errorf("written and read back, the imported scenario differs from the seed's:\n got %+v (%s)\nwant %+v (%s)", a.Deployment.Engine, a.Source, b.Deployment.Engine, b.Source)
	}
	if len(got.Defaults) != 7 {
		// pipeline_parallel_size, enable_prefix_caching, block_size, async_scheduling,
		// enforce_eager, max_cudagraph_capture_size, quantization: the command leaves them to vLLM.
		t.Errorf("defaults applied: %+v", got.Defaults)
	}
}
