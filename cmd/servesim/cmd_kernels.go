package main

import (
	"bytes"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/kernels"
	"github.com/servesim/servesim/model/hardware"
)

func kernelsCmd() *command {
	return &command{
		Name:  "kernels",
		Args:  "DIR",
		Short: "check the cost model's kernel times (GEMMs, elementwise, all-reduce) against Vidur profiles",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			fit := fs.Bool("fit", false, "fit the profiles' priors instead of checking the current ones")
			gpuFile := fs.String("gpu-catalog", "", "GPU catalog `file` adding or overriding entries")
			format := fs.String("format", "table", "output `format`: table or csv (every point)")
			var out outFlag
			out.register(fs, "the report")
			return func(args []string) error {
				if len(args) != 1 {
					return usage.Errorf("give one directory: the Vidur profiling tree (data/profiling)")
				}
				if *format != "table" && *format != "csv" {
					return usage.Errorf("--format %q: want table or csv", *format)
				}
				if err := out.check(); err != nil {
					return err
				}
				cat, err := hardware.LoadCatalog(*gpuFile)
				if err != nil {
					return err
				}
				p, err := kernels.LoadDir(args[0])
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := kernels.Run(&buf, p, kernels.Options{Catalog: cat}, *fit, *format == "csv"); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
