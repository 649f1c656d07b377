package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/describe"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hf"
	"github.com/servesim/servesim/scenario"
)

func modelCmd() *command {
	return &command{
		Name:  "model",
		Args:  "list | show FILE|NAME",
		Short: "list the built-in models, or describe one: layers, parameters, weight bytes, quantization, max_model_len, KV bytes per token",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			quant := fs.String("quantization", "", "apply vLLM's --quantization `method` to the model (show only)")
			var out outFlag
			out.register(fs, "the description")
			return func(args []string) error {
				if len(args) == 0 {
					return usage.Errorf("want 'model list' or 'model show FILE|NAME'")
				}
				var buf bytes.Buffer
				switch args[0] {
				case "list":
					if len(args) > 1 {
						return usage.Errorf("unexpected argument %q after 'list'", args[1])
					}
					if *quant != "" {
						return usage.Errorf("--quantization applies to 'model show' only")
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
						return usage.Errorf("want 'model show FILE|NAME'")
					}
					if err := out.check(); err != nil {
						return err
					}
					a, ref, err := scenario.LoadModel(args[1])
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
					return usage.Errorf("unknown subcommand %q: want list or show FILE|NAME", args[0])
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
