package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadReadsConfigJSON: a library user (no CLI set-up) loads a scenario whose model is a
// Hugging Face config.json, given as a file or as the directory holding it.
func TestLoadReadsConfigJSON(t *testing.T) {
	cfgDir, err := filepath.Abs(filepath.Join("..", "model", "hf", "testdata", "llama-3.1-70b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{filepath.Join(cfgDir, "config.json"), cfgDir} {
		dir := t.TempDir()
		p := filepath.Join(dir, "s.toml")
		body := "[hardware]\ngpu = \"H100-SXM\"\ncount = 4\n\n[model]\nname = \"\"\ndrafter = \"\"\nfile = " + tomlLiteral(file) +
			"\n\n[engine]\ntensor_parallel_size = 4\nkv_cache_dtype = \"auto\"\nmax_model_len = 131072\nquantization = \"\"\n\n[engine.speculative]\nmethod = \"\"\nmodel = \"\"\nnum_speculative_tokens = 0\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(ResolveOptions{Uncalibrated: true})
		if err != nil {
			t.Fatalf("model.file %s: %v", file, err)
		}
		if got := r.Deployment.Model.Name; got != "llama-3.1-70b" {
			t.Errorf("model.file %s: model %q, want llama-3.1-70b", file, got)
		}
	}
}

func TestLoadArch(t *testing.T) {
	if a, err := LoadArch("glm-5.3-flash"); err != nil || a.Name != "glm-5.3-flash" {
		t.Errorf("built-in: %v, %v", a, err)
	}
	if a, err := LoadArch(filepath.Join("..", "model", "hf", "testdata", "llama-3.1-70b")); err != nil || a.Name != "llama-3.1-70b" {
		t.Errorf("config.json directory: %v, %v", a, err)
	}
	_, err := LoadArch("gpt-7")
	if err == nil || !strings.Contains(err.Error(), `model "gpt-7": no description found offline`) || !strings.Contains(err.Error(), "--model-config PATH") {
		t.Errorf("unknown model: err = %v, want the unknown name and how to give a file", err)
	}
}

func tomlLiteral(s string) string { return "'" + s + "'" }
