package main

import (
	"bytes"
	"fmt"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/model/hardware"
	"github.com/spf13/pflag"
)

func hardwareCmd() *command {
	return &command{
		Name:  "hardware",
		Args:  "list | show NAME",
		Short: "list the GPU catalog, or show one GPU (memory, bandwidth, peaks, formats, links, price)",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			file := fs.String("gpu-catalog", "", "catalog `file` adding or overriding GPUs ([[gpu]] TOML)")
			var format formatFlag[gpuResult]
			format.register(fs, gpuFormats())
			var out outFlag
			out.register(fs, "the listing")
			return func(args []string) error {
				if len(args) == 0 {
					return usage.Errorf("want 'hardware list' or 'hardware show NAME'")
				}
				if err := format.check(); err != nil {
					return err
				}
				var pick []hardware.GPU
				cat, err := hardware.LoadCatalog(*file)
				if err != nil {
					return fmt.Errorf("--gpu-catalog: %w", err)
				}
				switch args[0] {
				case "list":
					if len(args) > 1 {
						return usage.Errorf("unexpected argument %q after 'list'", args[1])
					}
					pick = cat.GPUs
				case "show":
					if len(args) != 2 {
						return usage.Errorf("want 'hardware show NAME' (one GPU name or alias)")
					}
					g, err := cat.Find(args[1])
					if err != nil {
						return usage.Errorf("%v", err)
					}
					pick = []hardware.GPU{g}
				default:
					return usage.Errorf("unknown subcommand %q: want list or show NAME", args[0])
				}
				if err := out.check(); err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := format.write(&buf, gpuResult{pick, args[0] == "show"}); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
