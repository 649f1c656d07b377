package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/pflag"
)

func configCmd() *command {
	return &command{
		Name:  "config",
		Short: "print the resolved scenario as TOML, to copy, edit and load with --config",
		Long: `Prints every section of the scenario (hardware, model, engine flags, benchmark protocol, seed)
and the parameters the simulation would use, each with its unit, bounds and meaning. Loading a
file is strict: an unknown key is an error naming it.`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var out outFlag
			out.register(fs, "the scenario")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if err := out.check(); err != nil {
					return err
				}
				r, err := sf.load(e.stderr)
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := r.Scenario.Encode(&buf, r.Params, fmt.Sprintf("%s: %s", r.Source, r.ParamsFrom)); err != nil {
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
		Long: `Parses a 'vllm serve ...' command line (an 'env A=B' prefix, JSON --speculative-config and
--model-loader-extra-config included) into the engine section of the scenario. Flags that matter
to the simulation are mapped; the others are listed on stderr as ignored. A malformed value is an
error naming the flag. Pass the command after '--', or as one quoted string.

Example:
  servesim import vllm -- vllm serve nvidia/GLM-5.3-Flash-NVFP4 --tensor-parallel-size 4 \
      --enable-expert-parallel --max-model-len 1048576 --kv-cache-dtype fp8`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var out outFlag
			out.register(fs, "the scenario")
			return func(args []string) error {
				if len(args) == 0 || args[0] != "vllm" {
					return usagef("want 'import vllm -- <command>'")
				}
				words := args[1:]
				if len(words) == 0 {
					return usagef("no vllm command given after 'import vllm'")
				}
				if sf.vllmCmd != "" {
					return usagef("give the vllm command once: after 'import vllm', or with --vllm-cmd")
				}
				if len(words) == 1 {
					sf.vllmCmd = words[0] // one quoted string
				} else {
					sf.vllmWords = words
				}
				if err := out.check(); err != nil {
					return err
				}
				r, err := sf.load(e.stderr)
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := r.Scenario.Encode(&buf, r.Params, fmt.Sprintf("%s: %s", r.Source, r.ParamsFrom)); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
