package main

import (
	"io"
	"strings"
	"testing"
)

// TestEveryHelpHasExample: every command's --help ends its description with an Example block of
// servesim command lines.
func TestEveryHelpHasExample(t *testing.T) {
	for _, c := range commands() {
		code, out, errs := runCLI(c.Name, "--help")
		if code != 0 {
			t.Errorf("%s --help: exit %d: %s", c.Name, code, errs)
			continue
		}
		i := strings.Index(out, "\nExample")
		if i < 0 {
			t.Errorf("%s --help: no Example block", c.Name)
			continue
		}
		block, _, _ := strings.Cut(out[i:], "\nFlags:")
		if !strings.Contains(block, "\n  servesim "+c.Name) && !(c.Name == "version" && strings.Contains(block, "servesim --version")) {
			t.Errorf("%s --help: the Example block has no 'servesim %s' command line:\n%s", c.Name, c.Name, block)
		}
	}
}

// TestGPUFlagsOneMeaning: --gpus is a count wherever it exists, a catalog file is --gpu-catalog
// on every command that reads a scenario (and on hardware and kernels), the plan's candidate GPU
// kinds are --gpu-kinds, and no command keeps the old --catalog.
func TestGPUFlagsOneMeaning(t *testing.T) {
	for _, c := range commands() {
		fs := newFlagSet(c, io.Discard)
		c.Setup(fs, &env{stdout: io.Discard, stderr: io.Discard})
		if f := fs.Lookup("gpus"); f != nil {
			if err := f.Value.Set("H100,H200"); err == nil || !strings.Contains(err.Error(), "--gpu-kinds") {
				t.Errorf("%s --gpus H100,H200: %v, want a refusal naming --gpu-kinds", c.Name, err)
			}
			if err := f.Value.Set("my-gpus.toml"); err == nil || !strings.Contains(err.Error(), "--gpu-catalog") {
				t.Errorf("%s --gpus my-gpus.toml: %v, want a refusal naming --gpu-catalog", c.Name, err)
			}
			if err := f.Value.Set("8"); err != nil {
				t.Errorf("%s --gpus 8: %v", c.Name, err)
			}
		}
		if fs.Lookup("catalog") != nil {
			t.Errorf("%s has --catalog: the catalog file is --gpu-catalog", c.Name)
		}
		needs := fs.Lookup("config") != nil || c.Name == "hardware" || c.Name == "kernels"
		if needs && fs.Lookup("gpu-catalog") == nil {
			t.Errorf("%s reads GPUs but has no --gpu-catalog", c.Name)
		}
		if (fs.Lookup("gpu-kinds") != nil) != (c.Name == "plan") {
			t.Errorf("%s: --gpu-kinds belongs to plan only", c.Name)
		}
	}
}

// TestGPUCatalogReachesScenarioCommands: a GPU that exists only in a --gpu-catalog file serves
// the seed's engine on matrix, simulate, capacity and report.
func TestGPUCatalogReachesScenarioCommands(t *testing.T) {
	dir := t.TempDir()
	_, toml, _ := runCLI("hardware", "show", "RTX-PRO-6000-Server", "--format", "toml")
	block := toml[strings.Index(toml, "[[gpu]]"):]
	block = strings.Replace(block, `name = "RTX-PRO-6000-Server"`, `name = "RTX-PRO-6000-Lab"`, 1)
	if i := strings.Index(block, "aliases"); i >= 0 {
		j := strings.Index(block[i:], "\n")
		block = block[:i] + block[i+j+1:]
	}
	f := put(t, dir, "lab.toml", block)
	for _, args := range [][]string{
		{"capacity", "--gpu", "RTX-PRO-6000-Lab"},
		{"matrix", "--gpu", "RTX-PRO-6000-Lab", "--measured", "none", "--format", "csv"},
		{"simulate", "--gpu", "RTX-PRO-6000-Lab", "--workload", "bench-8Kx1"},
		{"report", "--gpu", "RTX-PRO-6000-Lab", "--out", dir + "/r.html"},
	} {
		code, _, errs := runCLI(append(args, "--quiet")...)
		if code == 0 || !strings.Contains(errs, "RTX-PRO-6000-Lab") {
			t.Errorf("%v without the catalog: exit %d, want a refusal naming the GPU: %s", args, code, errs)
		}
		code, out, errs := runCLI(append(args, "--quiet", "--gpu-catalog", f)...)
		if code != 0 {
			t.Errorf("%v --gpu-catalog: exit %d: %s", args, code, errs)
			continue
		}
		if args[0] == "capacity" && !strings.Contains(out, "RTX-PRO-6000-Lab") {
			t.Errorf("capacity --gpu-catalog: the GPU is not the one served:\n%s", out)
		}
	}
}
