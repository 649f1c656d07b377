package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/describe"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hf"
	"github.com/servesim/servesim/scenario"
)

func modelCmd() *command {
	return &command{
		Name:  "model",
		Args:  "list | show FILE|NAME",
		Short: "list the built-in models, or describe one: layers, parameters, weight bytes, quantization, max_model_len, KV bytes per token",
		Long: `'model list' lists the built-in models: published Hugging Face config.json files embedded in the
binary (looked up offline by their id, such as meta-llama/Llama-3.1-8B-Instruct or zai-org/GLM-5-FP8),
and servesim's own descriptions (` + strings.Join(arch.BuiltinNames(), ", ") + `), with where each
comes from.

'model show' reads a built-in model by id, a servesim model TOML file, or a Hugging Face
config.json (with hf_quant_config.json beside it, if any; a directory holding config.json works
too). Supported config.json families: ` + strings.Join(hf.Families(), ", ") + `.

It prints the decoder layers grouped by attention and MLP kind, the parameter count (total and
active per token), the weight bytes by storage format (scales included), the quantization method
vLLM resolves from the checkpoint, the max_model_len it derives, the KV cache per token of context
for bf16 and fp8 caches (the whole model on one GPU), the recurrent state a request holds in
linear-attention layers, and multi-token-prediction layers. --quantization applies vLLM's flag of
that name (fp8 or ptpc_fp8 quantize an unquantized checkpoint at load time; on a quantized one it
must name the checkpoint's own method).

Example:
  servesim model list
  servesim model show meta-llama/Llama-3.1-8B-Instruct --quantization fp8
  servesim model show glm-5.3-flash
  servesim model show ./Llama-3.1-70B/config.json`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			quant := fs.String("quantization", "", "apply vLLM's --quantization `method` to the model (show only)")
			var out outFlag
			out.register(fs, "the description")
			return func(args []string) error {
				if len(args) == 0 {
					return usagef("want 'model list' or 'model show FILE|NAME'")
				}
				var buf bytes.Buffer
				switch args[0] {
				case "list":
					if len(args) > 1 {
						return usagef("unexpected argument %q after 'list'", args[1])
					}
					if *quant != "" {
						return usagef("--quantization applies to 'model show' only")
					}
					if err := out.check(); err != nil {
						return err
					}
					ms, err := hf.List()
					if err != nil {
						return err
					}
					rows := make([]describe.ModelSummary, len(ms))
					for i, m := range ms {
						rows[i] = describe.ModelSummary{ID: m.Provenance.ID, Arch: m.Arch, Source: m.Provenance.String()}
					}
					if err := describe.ModelList(&buf, rows); err != nil {
						return err
					}
				case "show":
					if len(args) != 2 {
						return usagef("want 'model show FILE|NAME'")
					}
					if err := out.check(); err != nil {
						return err
					}
					a, ref, err := loadModel(args[1])
					if err != nil {
						return err
					}
					if a, err = deploy.ApplyQuantization(a, *quant); err != nil {
						return fmt.Errorf("--quantization: %w", err)
					}
					if err := describe.Model(&buf, a, ref); err != nil {
						return err
					}
				default:
					return usagef("unknown subcommand %q: want list or show FILE|NAME", args[0])
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}

// loadModel reads a model given by reference, as every command does (scenario.FindModel: a file
// or directory, a built-in id, the local Hugging Face cache). It returns where the model came from.
func loadModel(ref string) (*arch.Arch, string, error) {
	m, err := scenario.FindModel(ref, "", "")
	if err != nil {
		return nil, "", err
	}
	if _, err := os.Stat(ref); err == nil {
		return m.Arch, ref, nil
	}
	return m.Arch, m.From, nil
}
