package main

import (
	"embed"
	"strings"

	"github.com/servesim/servesim/fleet"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hf"
	"github.com/servesim/servesim/workload"
)

// helpFiles are the commands' long help texts, help/<command>.txt: prose, then an Example block.
// A {{name}} in a file is a value a package owns, filled in when the help is printed (helpValues).
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpValues are the values the help files name as {{name}}.
func helpValues() map[string]func() string {
	return map[string]func() string{
		"policies":             fleet.PolicyNames,
		"presets":              workload.PresetHelp,
		"default-vllm-version": func() string { return deploy.DefaultVersion },
		"builtin-models":       func() string { return strings.Join(arch.BuiltinNames(), ", ") },
		"hf-families":          func() string { return strings.Join(hf.Families(), ", ") },
	}
}

// longHelp is the command's help file with its values filled in ("" when it has none).
func longHelp(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		return ""
	}
	s := string(b)
	for k, v := range helpValues() {
		if p := "{{" + k + "}}"; strings.Contains(s, p) {
			s = strings.ReplaceAll(s, p, v())
		}
	}
	return s
}
