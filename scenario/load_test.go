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

// TestGivenContextsDropDefaultPrefill: a scenario that gives its decode contexts but not its
// prefill-only rows (as a written scenario of a model under 1M tokens does) keeps the default
// prefill rows that fit max_model_len, so the matrix runs instead of refusing a 1024K row the
// file never asked for.
func TestGivenContextsDropDefaultPrefill(t *testing.T) {
	s, err := Parse([]byte("[model]\nname = \"meta-llama/Llama-3.1-8B-Instruct\"\n[hardware]\ngpu = \"H100\"\n[engine]\nmax_model_len = 16384\n[protocol]\ncontexts = [\"8K\"]\n"), "given.toml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	p := b.Resolved.Protocol
	if len(p.PrefillOnly) != 0 || strings.Join(p.Contexts, ",") != "8K" {
		t.Errorf("contexts %v, prefill-only %v: want the given 8K and no 1024K prefill row", p.Contexts, p.PrefillOnly)
	}
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
	// Rows the file gives are kept as given.
	s, err = Parse([]byte("[model]\nname = \"meta-llama/Llama-3.1-8B-Instruct\"\n[hardware]\ngpu = \"H100\"\n[engine]\nmax_model_len = 16384\n[protocol]\ncontexts = [\"8K\"]\nprefill_only = [\"1024K\"]\n"), "given.toml")
	if err != nil {
		t.Fatal(err)
	}
	if b, err = s.Build(); err != nil || len(b.Resolved.Protocol.PrefillOnly) != 1 {
		t.Errorf("a prefill row the file gives: %v, %v", err, b.Resolved.Protocol.PrefillOnly)
	}
}

// TestModelPathFromFile: a model given as a path in a scenario file is found from the file's
// directory, wherever the command runs.
func TestModelPathFromFile(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join("..", "model", "hf", "testdata", "llama-3.1-8b", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "models", "llama"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models", "llama", "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "scenarios", "s.toml")
	if err := os.WriteFile(file, []byte("[model]\nname = \"../models/llama\"\n[hardware]\ngpu = \"H100\"\n[engine]\nmax_model_len = 8192\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatalf("model ../models/llama from %s: %v", file, err)
	}
	if want := filepath.Join(dir, "models", "llama"); !strings.Contains(b.ModelPath, want) && b.ModelPath != filepath.Join(dir, "scenarios", "..", "models", "llama") {
		t.Errorf("model read from %q, want %s", b.ModelPath, want)
	}
}
