package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzHFCacheLookup: whatever a Hugging Face cache holds (a refs/main of any content, a snapshot
// of any name with any config.json) and whatever reference and revision are asked for, the lookup
// reads a config from a snapshot of the repository asked for or refuses; it never reads one from
// elsewhere (a config one directory up, outside the cache, is there to be found) and never panics.
func FuzzHFCacheLookup(f *testing.F) {
	commit := strings.Repeat("ab", 20)
	cfg := `{"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"max_position_embeddings":8192}`
	f.Add("org/m", "", commit, commit, cfg)
	f.Add("org/m", "", "../../../elsewhere", commit, cfg)
	f.Add("org/m", "../elsewhere", "", commit, cfg)
	f.Add("org/m", "v1", "", "v1", cfg)
	f.Add("org/m", "", "", "snap", "{")
	f.Add("org/../m", "", commit, commit, cfg)
	f.Fuzz(func(t *testing.T, ref, revision, refMain, snapName, config string) {
		root := t.TempDir()
		cache := filepath.Join(root, "hub")
		repo := filepath.Join(cache, "models--org--m")
		for _, d := range []string{filepath.Join(repo, "refs"), filepath.Join(repo, "snapshots"), filepath.Join(root, "elsewhere"), filepath.Join(cache, "elsewhere")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// Configs outside the repository's snapshots, where a lookup must not read.
		for _, d := range []string{filepath.Join(root, "elsewhere"), filepath.Join(cache, "elsewhere"), repo} {
			if err := os.WriteFile(filepath.Join(d, "config.json"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if refMain != "" {
			if err := os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(refMain), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// The snapshot directory, when its name is one path element the setup can create.
		if snapName != "" && snapName != "." && snapName != ".." && len(snapName) < 200 && !strings.ContainsAny(snapName, "/\\\x00") {
			d := filepath.Join(repo, "snapshots", snapName)
			if os.Mkdir(d, 0o755) == nil {
				if err := os.WriteFile(filepath.Join(d, "config.json"), []byte(config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		m, why, err := hfCacheModel(cache, ref, "", revision)
		if m == nil {
			if err == nil && why == "" && strings.Count(ref, "/") == 1 && !strings.HasPrefix(ref, "/") && !strings.HasSuffix(ref, "/") {
				t.Fatalf("ref %q: no model, no reason, no error", ref)
			}
			return
		}
		snap, ok := strings.CutPrefix(m.From, "Hugging Face cache ")
		if !ok || m.Arch == nil {
			t.Fatalf("ref %q: found %+v", ref, m)
		}
		rel, err := filepath.Rel(cache, snap)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if err != nil || len(parts) != 3 || !strings.HasPrefix(parts[0], "models--") || parts[1] != "snapshots" || parts[2] == ".." || parts[2] == "." {
			t.Fatalf("ref %q, revision %q, refs/main %q: read %s, outside a snapshot of the cache", ref, revision, refMain, snap)
		}
	})
}
