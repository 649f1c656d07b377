package main

import (
	"bytes"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/usage"
)

func configCmd() *command {
	return &command{
		Name:   "config",
		NoArgs: true,
		Short:  "print the resolved scenario as TOML, to copy, edit and load with --config",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			sf := scenarioFlags{matrix: true}
			sf.register(fs)
			var out outFlag
			out.register(fs, "the scenario")
			return func(args []string) error {
				if err := out.check(); err != nil {
					return err
				}
				r, err := sf.load(e.stderr, e.info())
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := r.Encode(&buf, out.path); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}

func importCmd() *command {
	return &command{
		Name:  "import",
		Args:  "vllm -- <vllm serve command...>",
		Short: "import a vLLM launch command into a scenario (prints the scenario TOML)",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			sf := scenarioFlags{matrix: true}
			sf.register(fs)
			var out outFlag
			out.register(fs, "the scenario")
			return func(args []string) error {
				if len(args) == 0 || args[0] != "vllm" {
					return usage.Errorf("want 'import vllm -- <command>'")
				}
				words := args[1:]
				if len(words) == 0 {
					return usage.Errorf("no vllm command given after 'import vllm'")
				}
				if sf.VLLMCmd != "" {
					return usage.Errorf("give the vllm command once: after 'import vllm', or with --vllm-cmd")
				}
				if len(words) == 1 {
					sf.VLLMCmd = words[0] // one quoted string
				} else {
					sf.VLLMWords = words
				}
				if err := out.check(); err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := sf.Import(&buf, e.stderr, out.path); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
