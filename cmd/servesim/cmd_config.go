package main

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/scenario"
)

func configCmd() *command {
	return &command{
		Name:  "config",
		Short: "print the resolved scenario as TOML, to copy, edit and load with --config",
		Long: `Prints every section of the scenario (hardware, model, engine flags, benchmark protocol, seed)
and the parameters the simulation would use, each with its unit, bounds, meaning and source.
The engine flags are those given, with the version pinned; the ones left to vLLM are listed as
comments with the value vLLM chooses. The parameters are comments unless the scenario sets them
under [params]: loaded back, the file resolves to the same deployment and parameters, with the
same provenance, and prints the same bytes. Paths are written relative to the --out file's
directory (absolute on standard output). Loading a file is strict: an unknown key is an error
naming it.

Example:
  servesim config -o seed.toml
  servesim config --vllm-cmd "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 64" --gpu H100 -o llama.toml
  servesim matrix --config llama.toml`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			sf := scenarioFlags{matrix: true}
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
		Long: `Parses a 'vllm serve ...' command line (an 'env A=B' prefix, JSON --speculative-config and
--model-loader-extra-config included) into a scenario and prints it resolved. The command is the
whole launch: every flag it does not give takes vLLM's default for the engine version
(--vllm-version, default ` + deploy.DefaultVersion + `), the GPU (--gpu, required unless --config gives one) and the
model; the printed scenario lists those defaults with their rule and vLLM source in comments.
The model is found offline: --model-config, a directory given to vllm serve, a built-in
model ('servesim model list'), or the local Hugging Face cache ($HF_HUB_CACHE,
$HF_HOME/hub, ~/.cache/huggingface/hub); otherwise the error says how to provide it.
Flags that matter to the simulation are mapped; the others are listed on stderr as ignored or
unrecognised. A malformed value is an error naming the flag. A configuration vLLM runs but
servesim does not simulate yet (pipeline or data parallelism, MTP, ...) is printed with a
warning saying why; every simulating command refuses it. Pass the command after '--', or as one
quoted string.

Example:
  servesim import vllm --gpu H100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct
  servesim import vllm --gpu RTX-PRO-6000-Server --vllm-version 0.32.1rc1.dev96+g8c60cf07b -- \
      vllm serve nvidia/GLM-5.3-Flash-NVFP4 --tensor-parallel-size 4 --enable-expert-parallel \
      --max-model-len 1048576 --kv-cache-dtype fp8`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			sf := scenarioFlags{matrix: true}
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
				s, err := sf.scenario(e.stderr)
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
