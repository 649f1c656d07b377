package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hf"
)

// FoundModel is a model description and where it was found.
type FoundModel struct {
	Arch *arch.Arch
	// From says where: "built-in description", "config.json PATH", "Hugging Face cache PATH", ...
	From string
	// Path is the file or directory read for a model given as a path (a file, a directory, a
	// model.file), "" otherwise.
	Path string
}

// FromFor is From as written in a file at dest: a path relative to its directory (absolute for
// "" : standard output), so that the record reads the same wherever the file is written from.
func (m *FoundModel) FromFor(dest string) string { return fromFor(m.From, m.Path, dest) }

func fromFor(from, path, dest string) string {
	if path == "" {
		return from
	}
	kind, _, _ := strings.Cut(from, " ")
	return kind + " " + relPath(path, dest)
}

// HFCacheDir is the Hugging Face hub cache the lookup reads, as huggingface_hub chooses it:
// $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub.
func HFCacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface", "hub")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".cache", "huggingface", "hub")
	}
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

// FindModel finds a model's description offline, in this order, and never substitutes another:
//
//  1. file, when given (--model-config, model.file): a servesim model .toml, a config.json, or a
//     directory holding one (with its hf_quant_config.json);
//  2. ref as a path: a directory holding config.json (as `vllm serve /path/to/model` takes it) or a
//     file;
//  3. a built-in model (hf.Builtin: the published configs embedded in the binary, by Hugging Face
//     id or alias, and servesim's own descriptions, such as nvidia/GLM-5.3-Flash-NVFP4 or
//     glm-5.3-flash; then model/arch's descriptions by name);
//  4. the local Hugging Face cache (HFCacheDir): models--ORG--NAME/snapshots/REV/config.json with
//     REV the commit refs/<revision> names (refs/main by default), else the newest snapshot.
//
// Anything else is an error that says how to give the model. revision is vllm serve's --revision
// ("" = main). A model read from a config is named by its Hugging Face id (as the built-ins are),
// else after its directory.
func FindModel(ref, file, revision string) (*FoundModel, error) {
	name := modelName(ref)
	if file != "" {
		a, err := loadArchFile(file, name)
		if err != nil {
			return nil, err
		}
		return &FoundModel{a, "file " + file, file}, nil
	}
	if ref == "" {
		return nil, fmt.Errorf("no model given: want a built-in name (%s), a Hugging Face id, or a config.json (--model-config PATH)", strings.Join(arch.BuiltinNames(), ", "))
	}
	if _, err := os.Stat(ref); err == nil {
		a, err := loadArchFile(ref, "")
		if err != nil {
			return nil, err
		}
		return &FoundModel{a, "path " + ref, ref}, nil
	}
	if a, prov, err := hf.Builtin(ref); err == nil {
		return &FoundModel{Arch: a, From: "built-in " + prov.ID + ": " + prov.String()}, nil
	} else if prov.ID != "" {
		return nil, err
	}
	if a, err := arch.Builtin(ref); err == nil {
		return &FoundModel{Arch: a, From: "built-in description " + a.Name}, nil
	}
	cache := HFCacheDir()
	m, why, err := hfCacheModel(cache, ref, name, revision)
	switch {
	case err != nil:
		return nil, err
	case m != nil:
		return m, nil
	case why == "":
		return nil, fmt.Errorf("model %q: no description found offline: not a file or directory, not a built-in (%s), and not a Hugging Face id (ORG/NAME) to look up in the Hugging Face cache (%s): "+
			"give a built-in name, a Hugging Face id, a directory holding config.json, or --model-config PATH", ref, strings.Join(hf.BuiltinIDs(), ", "), cache)
	}
	return nil, fmt.Errorf("model %q: no description found offline: not a file or directory, not a built-in (%s), not in the Hugging Face cache (%s). "+
		"Download its config with `huggingface-cli download %s config.json` (ModelOpt checkpoints: also hf_quant_config.json), "+
		"or pass --model-config PATH (a config.json or the directory holding it)",
		ref, strings.Join(hf.BuiltinIDs(), ", "), why, ref)
}

// hfCacheModel looks ref (ORG/NAME) up in the Hugging Face cache at cache: the config.json of the
// snapshot cachedSnapshot picks in models--ORG--NAME, named name. A ref that is not ORG/NAME gives
// nil and no reason; a repository the cache does not hold (or holds no usable snapshot of) gives
// nil and the reason; a config that does not read is an error.
func hfCacheModel(cache, ref, name, revision string) (*FoundModel, string, error) {
	org, repo, ok := strings.Cut(ref, "/")
	if !ok || org == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, "", nil
	}
	snap, err := cachedSnapshot(filepath.Join(cache, "models--"+org+"--"+repo), revision)
	if err != nil {
		return nil, err.Error(), nil
	}
	a, err := hf.LoadAs(filepath.Join(snap, "config.json"), name)
	if err != nil {
		return nil, "", err
	}
	return &FoundModel{Arch: a, From: "Hugging Face cache " + snap}, "", nil
}

// cachedSnapshot picks the snapshot of a cached repository: the one refs/<revision> names, a
// snapshot named revision, else (no revision given and no refs/main) the newest snapshot that holds
// a config.json.
func cachedSnapshot(repoDir, revision string) (string, error) {
	snaps := filepath.Join(repoDir, "snapshots")
	if _, err := os.Stat(snaps); err != nil {
		return "", fmt.Errorf("%s: no such directory", repoDir)
	}
	rev := revision
	if rev == "" {
		rev = "main"
	}
	refPath := filepath.Join(repoDir, "refs", rev)
	if !safeRevision(rev) {
		return "", fmt.Errorf("%s: revision %q: want a branch or tag name or a commit hash (no \"..\" or absolute path)", repoDir, rev)
	}
	b, err := fsutil.ReadFile(refPath, 4<<10)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("reading the Hugging Face cache's ref: %w", err)
	}
	if err == nil {
		commit := strings.TrimSpace(string(b))
		if !isCommitHash(commit) {
			return "", fmt.Errorf("%s: holds %q: a Hugging Face cache ref is a 40-character commit hash", refPath, truncate(commit, 60))
		}
		p := filepath.Join(snaps, commit)
		if _, err := os.Stat(filepath.Join(p, "config.json")); err != nil {
			return "", fmt.Errorf("%s: refs/%s names snapshot %s, which has no config.json", repoDir, rev, commit)
		}
		return p, nil
	}
	if revision != "" {
		p := filepath.Join(snaps, revision)
		if _, err := os.Stat(filepath.Join(p, "config.json")); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("%s: no refs/%s and no snapshot %s with a config.json", repoDir, revision, revision)
	}
	ents, err := os.ReadDir(snaps)
	if err != nil {
		return "", fmt.Errorf("%s: %v", snaps, err)
	}
	type cand struct {
		path string
		mod  int64
	}
	var cs []cand
	for _, e := range ents {
		p := filepath.Join(snaps, e.Name())
		st, err := os.Stat(filepath.Join(p, "config.json"))
		if err != nil {
			continue
		}
		cs = append(cs, cand{p, st.ModTime().UnixNano()})
	}
	if len(cs) == 0 {
		return "", fmt.Errorf("%s: no snapshot holds a config.json", snaps)
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].mod != cs[j].mod {
			return cs[i].mod > cs[j].mod
		}
		return cs[i].path < cs[j].path
	})
	return cs[0].path, nil
}

// modelName names a model read from a config by its reference, a Hugging Face id as the built-in
// models are named ("meta-llama/Llama-3.1-8B-Instruct"); "" for a path (named after its directory).
func modelName(ref string) string {
	if _, err := os.Stat(ref); err == nil {
		return ""
	}
	return ref
}

// loadArchFile reads a servesim model TOML file, or a Hugging Face config.json (with the
// hf_quant_config.json beside it, if any) or a directory holding one. name, when not empty,
// names the model; else the file's directory does.
func loadArchFile(path, name string) (*arch.Arch, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("model config %s: no such file or directory", path)
		}
		return nil, err
	}
	if st.IsDir() {
		path = filepath.Join(path, "config.json")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("model directory %s holds no config.json", filepath.Dir(path))
		}
	}
	if strings.HasSuffix(path, ".toml") {
		data, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
		if err != nil {
			return nil, err
		}
		return arch.Parse(data, path)
	}
	if name == "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		name = filepath.Base(filepath.Dir(abs))
	}
	return hf.LoadAs(path, name)
}

// LoadArch reads a model given by reference, as FindModel does: a file or directory (a servesim
// model TOML, a Hugging Face config.json, or a directory holding one), a built-in name, a built-in
// Hugging Face config, or the local Hugging Face cache.
func LoadArch(ref string) (*arch.Arch, error) {
	m, err := FindModel(ref, "", "")
	if err != nil {
		return nil, err
	}
	return m.Arch, nil
}

// isCommitHash reports whether s is a 40-character lowercase hexadecimal git commit hash, all a
// Hugging Face cache ref may hold.
func isCommitHash(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// safeRevision reports whether rev names something inside the repository's refs and snapshots
// (a branch, a tag, refs/pr/N, a commit): no "..", no absolute path, no empty element.
func safeRevision(rev string) bool {
	if rev == "" || strings.HasPrefix(rev, "/") || strings.Contains(rev, "\\") {
		return false
	}
	for _, e := range strings.Split(rev, "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}

// truncate shortens s to n bytes for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
