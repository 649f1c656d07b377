package main

import (
	"bytes"
	"strings"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/describe"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hf"
	"github.com/servesim/servesim/scenario"
)

func modelCmd() *command {
	return &command{
		Name:  "model",
		Args:  "show FILE|NAME",
		Short: "describe a model: layers by kind, parameters, active parameters, weight bytes and KV bytes per token",
		Long: `Reads a built-in model description (` + strings.Join(arch.BuiltinNames(), ", ") + `), a servesim model TOML
file, or a Hugging Face config.json (with hf_quant_config.json beside it, if any; a directory
holding config.json works too). Supported config.json families: ` + strings.Join(hf.Families(), ", ") + `.

Prints the decoder layers grouped by attention and MLP kind, the parameter count (total and active
per token), the weight bytes by storage format, the KV cache per token of context for bf16 and fp8
caches (the whole model on one GPU), and the recurrent state a request holds in linear-attention
layers.

Example:
  servesim model show glm-5.3-flash
  servesim model show ./Llama-3.1-70B/config.json`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var out outFlag
			out.register(fs, "the description")
			return func(args []string) error {
				if len(args) != 2 || args[0] != "show" {
					return usagef("want 'model show FILE|NAME'")
				}
				if err := out.check(); err != nil {
					return err
				}
				a, err := scenario.LoadArch(args[1])
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := describe.Model(&buf, a, args[1]); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
