package main

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/scenario"
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
				s, err := sf.Scenario(e.stderr)
				if err != nil {
					return err
				}
				b, err := s.Build()
				var ns *deploy.NotSimulatedError
				switch {
				case err != nil && errors.As(err, &ns) && b != nil:
					fmt.Fprintf(e.stderr, "servesim import: warning: the scenario is recorded as given, but it cannot be simulated yet: %v\n", err)
				case err != nil:
					return err
				}
				for _, n := range b.Notes {
					fmt.Fprintln(e.stderr, "note: "+n)
				}
				pol, err := s.Policy(scenario.ResolveOptions{})
				if err != nil {
					return err
				}
				c, err := pol.Choose(b.Deployment)
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := scenario.EncodeBuilt(&buf, s, b, c.Params, &c.Provenance, fmt.Sprintf("%s: %s", c.Source, c.From), out.path); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
