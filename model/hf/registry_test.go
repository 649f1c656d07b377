package hf

import (
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
)

// TestRegistry checks the index against the embedded files: every config.json directory is
// indexed once, every entry loads and normalizes, ids and aliases are unique, and README.md
// records every directory.
func TestRegistry(t *testing.T) {
	dirs, err := fs.Glob(registryFS, "data/models/*/config.json")
	if err != nil {
		t.Fatal(err)
	}
	indexed := map[string]bool{}
	names := map[string]string{}
	readme := Readme()
	for _, e := range registry() {
		for _, n := range append([]string{e.prov.ID}, e.prov.Aliases...) {
			if prev, ok := names[normID(n)]; ok {
				t.Errorf("%q names both %s and %s", n, prev, e.prov.ID)
			}
			names[normID(n)] = e.prov.ID
		}
		switch {
		case e.dir != "" && e.toml == "":
			if e.dir != strings.Replace(e.prov.ID, "/", "--", 1) {
				t.Errorf("%s: dir %q, want the id with / as --", e.prov.ID, e.dir)
			}
			indexed["data/models/"+e.dir+"/config.json"] = true
			if !strings.Contains(readme, e.dir) {
				t.Errorf("README.md does not record %s", e.dir)
			}
			if e.prov.Note == "" && (e.prov.Repository == "" || e.prov.Path == "" || len(e.prov.Commit) != 40) {
				t.Errorf("%s: provenance %+v: want repository, path and a 40-hex commit, or a note", e.prov.ID, e.prov)
			}
		case e.toml != "" && e.dir == "":
		default:
			t.Errorf("%s: want exactly one of dir and toml", e.prov.ID)
		}
		a, p, err := Builtin(e.prov.ID)
		if err != nil {
			t.Errorf("%s: %v", e.prov.ID, err)
			continue
		}
		if !reflect.DeepEqual(p, e.prov) || a.NumLayers() == 0 {
			t.Errorf("%s: provenance %+v, %d layers", e.prov.ID, p, a.NumLayers())
		}
	}
	for _, d := range dirs {
		if !indexed[d] {
			t.Errorf("%s is not in registry.toml", d)
		}
	}
	if len(dirs) != len(indexed) {
		t.Errorf("%d config.json files, %d indexed", len(dirs), len(indexed))
	}
}

// TestBuiltinLookup: ids resolve case-insensitively, as org--name, through aliases and URLs; the
// servesim TOML descriptions are model/arch's built-ins unchanged; an unknown id is an error that
// lists the built-ins and substitutes nothing.
func TestBuiltinLookup(t *testing.T) {
	for _, id := range []string{"meta-llama/Llama-3.1-8B-Instruct", "META-LLAMA/llama-3.1-8b-instruct", " meta-llama--Llama-3.1-8B-Instruct ",
		"meta-llama/Meta-Llama-3.1-8B-Instruct", "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct", "models--meta-llama--Llama-3.1-8B-Instruct"} {
		a, p, err := Builtin(id)
		if err != nil || p.ID != "meta-llama/Llama-3.1-8B-Instruct" || a.Name != "meta-llama/Llama-3.1-8B-Instruct" || a.Family != "llama" {
			t.Errorf("Builtin(%q) = %v, %+v, %v", id, a, p, err)
		}
	}
	a, p, err := Builtin("zai-org/GLM-5-FP8")
	if err != nil || a.Family != "glm_moe_dsa" || p.Repository != "ai-dynamo/aiconfigurator" || p.Source != "config.json" {
		t.Errorf("GLM-5-FP8: %v %+v %v", a, p, err)
	}
	for _, id := range []string{"glm-5.3-flash", "nvidia/GLM-5.3-Flash-NVFP4"} {
		a, p, err := Builtin(id)
		want, werr := arch.Builtin("glm-5.3-flash")
		if err != nil || werr != nil || p.Source != "servesim TOML" || !reflect.DeepEqual(a, want) {
			t.Errorf("Builtin(%q): %v, %+v, %v; want arch.Builtin(glm-5.3-flash)", id, a, p, err)
		}
	}
	_, _, err = Builtin("meta-llama/Llama-3.1-405B-Instruct")
	if err == nil || !strings.Contains(err.Error(), "Llama-3.1-405B") || !strings.Contains(err.Error(), "meta-llama/Llama-3.1-8B-Instruct") {
		t.Errorf("unknown id: %v, want an error naming it and listing the built-ins", err)
	}
	ms, err := List()
	if err != nil || len(ms) != len(BuiltinIDs()) {
		t.Fatalf("List: %d models, %v", len(ms), err)
	}
	for i := 1; i < len(ms); i++ {
		if strings.ToLower(ms[i-1].Provenance.ID) >= strings.ToLower(ms[i].Provenance.ID) {
			t.Errorf("List not sorted: %s before %s", ms[i-1].Provenance.ID, ms[i].Provenance.ID)
		}
	}
}
