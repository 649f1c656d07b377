package scenario

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
)

// Writing a scenario. A written scenario reads back to the same result: loaded, resolved and
// written again it gives the same bytes, and every parameter the same value and provenance
// (TestWrittenScenariosRoundTrip). So it holds what was given, not what was derived from it:
//
//   - the engine flags as given, with the engine version pinned; the flags left to vLLM are listed
//     as comments with their resolved value, rule and vLLM source (on reload they are left to
//     vLLM again, and resolve the same);
//   - the hardware (the GPU's catalog name, the count), the name and the benchmark protocol as
//     resolved (contexts fitted to max_model_len);
//   - under [params] only the scenario's own overrides; every other parameter is a comment with
//     its value and provenance (a prior, a built-in calibration, params_file): on reload the
//     same policy gives them again. Writing them as keys would turn priors and calibrations into
//     overrides, and the intervals would shrink as if the values were measured;
//   - paths (model.file, a model or drafter given as a path, hardware.gpu_file, params_file)
//     relative to the written file's directory, or absolute on standard output, whose place is
//     not known: they resolve from the file's directory wherever the file is loaded from.

// Encode writes the scenario as given, its parameters as comments (p, with source describing
// them), for a scenario that has not been resolved. Paths are written as given.
func (s *Scenario) Encode(w *bytes.Buffer, p param.Values, source string) error {
	return encodeScenario(w, s, nil, p, nil, source, "", false)
}

// Encode writes the resolved scenario for a file at dest ("" for standard output), preceded by
// comments that say where the model was found and which engine settings are vLLM's defaults,
// with the rule and the vLLM source of each (see the package's rules for writing).
func (r *Resolved) Encode(w *bytes.Buffer, dest string) error {
	b := &Built{Resolved: r.Scenario, Defaults: r.Defaults, ModelFrom: r.ModelFrom, DrafterFrom: r.DrafterFrom, ModelPath: r.ModelPath, DrafterPath: r.DrafterPath}
	return EncodeBuilt(w, r.Given, b, r.Params, &r.Provenance, fmt.Sprintf("%s: %s", r.Source, r.ParamsFrom), dest)
}

// EncodeBuilt writes the scenario given, as built into b (Scenario.Build), with parameters p of
// provenance prov, for a file at dest ("" for standard output): Resolved.Encode for scenarios
// that resolve but are not simulated.
func EncodeBuilt(w *bytes.Buffer, given *Scenario, b *Built, p param.Values, prov *param.Provenance, source, dest string) error {
	return encodeScenario(w, given, b, p, prov, source, dest, true)
}

func encodeScenario(w *bytes.Buffer, given *Scenario, b *Built, p param.Values, prov *param.Provenance, source, dest string, relocate bool) error {
	c := *given
	c.Engine = given.Engine.Clone()
	c.Params = nil
	var head bytes.Buffer
	if b != nil {
		r := b.Resolved
		c.Name, c.Hardware.GPU, c.Hardware.Count = r.Name, r.Hardware.GPU, r.Hardware.Count
		c.Engine.Version = r.Engine.Version
		c.Protocol = r.Protocol
		if b.ModelFrom != "" {
			fmt.Fprintf(&head, "# model: %s\n", fromFor(b.ModelFrom, b.ModelPath, dest))
		}
		if b.DrafterFrom != "" {
			fmt.Fprintf(&head, "# drafter: %s\n", fromFor(b.DrafterFrom, b.DrafterPath, dest))
		}
		var defs []deploy.Default
		for _, d := range b.Defaults {
			if d.Key != "version" { // pinned above
				defs = append(defs, d)
			}
		}
		if len(defs) > 0 {
			fmt.Fprintf(&head, "# Engine flags not given, as vLLM %s chooses them for this GPU and model (left to vLLM; give one under\n# [engine] to set it; rule; vLLM source):\n", c.Engine.Version)
			for _, d := range defs {
				fmt.Fprintf(&head, "#   %s = %s: %s (%s)\n", d.Key, d.Value, d.Rule, d.Source)
			}
		}
	}
	if relocate {
		c.relocate(given, dest)
	}
	fmt.Fprintln(w, "# servesim scenario. Edit and load with --config FILE (relative paths: from this file's directory).")
	w.Write(head.Bytes())
	enc := toml.NewEncoder(w)
	enc.Indent = ""
	if err := enc.Encode(c); err != nil {
		return err
	}
	// Provenance names a parameter file by its path from the current directory (displayPath);
	// in the file, from the file's directory, as params_file is.
	fileRef := func(text string) string { return text }
	if relocate && given.ParamsFile != "" {
		shown, written := displayPath(given.path(given.ParamsFile)), relPath(given.path(given.ParamsFile), dest)
		fileRef = func(text string) string {
			return strings.ReplaceAll(strings.ReplaceAll(text, "file "+shown+" ", "file "+written+" "), ": "+shown+" ", ": "+written+" ")
		}
	}
	fmt.Fprintf(w, "\n# Step-time and memory parameters (%s).\n", strings.TrimSuffix(fileRef(source+" "), " "))
	fmt.Fprintln(w, "# Each: value # unit [lo, hi] level; source: where the value comes from; meaning. Only the keys under")
	fmt.Fprintln(w, "# [params] are set by this file; the commented values follow from the priors and calibrations (and")
	fmt.Fprintln(w, "# params_file) when it is loaded: uncomment one to set it.")
	fmt.Fprintln(w, "[params]")
	for i, d := range param.Defs() {
		src := "as the scenario resolves it"
		if prov != nil {
			src = strings.TrimSuffix(fileRef(prov[i].Detail+" "), " ")
		}
		v, set := given.Params[d.Name]
		if !set {
			v = p[i]
		}
		lead := "# "
		if set {
			lead = ""
			if prov == nil {
				src = "set by the scenario's [params]"
			}
		}
		fmt.Fprintf(w, "%s%s = %s # %s [%g, %g] %s; source: %s; %s\n", lead, d.Name, fmtFloat(v), d.Unit, d.Lo, d.Hi, d.Level, src, d.Meaning)
	}
	return nil
}

// relocate rewrites c's paths (taken from given, which resolves them from its directory) for a
// file at dest: relative to dest's directory, or absolute when dest is "" (standard output).
// References that are not paths (Hugging Face ids, built-in names) stay as they are.
func (c *Scenario) relocate(given *Scenario, dest string) {
	file := func(p string) string {
		if p == "" {
			return ""
		}
		return relPath(given.path(p), dest)
	}
	ref := func(r string) string {
		if l := given.localRef(r); r != "" && exists(l) {
			return relPath(l, dest)
		}
		return r
	}
	c.Hardware.GPUFile = file(given.Hardware.GPUFile)
	c.Model.File = file(given.Model.File)
	c.ParamsFile = file(given.ParamsFile)
	c.Model.Name = ref(given.Model.Name)
	c.Model.Drafter = ref(given.Model.Drafter)
	if sp := given.Engine.Speculative; sp != nil && sp.Model != "" {
		spec := sp.Clone()
		spec.Model = ref(sp.Model)
		c.Engine.Speculative = &spec
	}
}

// relPath is path p (relative to the current directory, or absolute) as written in a file at
// dest: relative to dest's directory, or absolute for "" (standard output).
func relPath(p, dest string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if dest == "" {
		return abs
	}
	dir, err := filepath.Abs(filepath.Dir(dest))
	if err != nil {
		return abs
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return abs
	}
	return rel
}

// displayPath is a file's path for messages and provenance: relative to the current directory
// when it lies below it, else absolute; the same file reads the same however it was reached
// (--params FILE, or a scenario's params_file relative to the scenario).
func displayPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return abs
}
