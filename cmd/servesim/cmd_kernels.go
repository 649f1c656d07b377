package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/kernels"
	"github.com/servesim/servesim/model/hardware"
)

func kernelsCmd() *command {
	return &command{
		Name:  "kernels",
		Args:  "DIR",
		Short: "check the cost model's kernel times (GEMMs, elementwise, all-reduce) against Vidur profiles",
		Long: `Reads a Vidur profiling tree (microsoft/vidur data/profiling: compute/<gpu>/<org>/<model>/mlp.csv
and network/<node>/{all_reduce,send_recv}.csv) and predicts every profiled kernel with servesim's
kernel formulas (package model/cost, Kernels) on the matching catalog GPU (h100: H100-SXM, a100:
A100-SXM-80GB; h100_dgx, a100_dgx: 8 NVSwitch GPUs; h100_pairwise_nvlink: H100-NVL and
a100_pairwise_nvlink: A100-PCIe-80GB, bridged pairs with PCIe between them) at its GPU
generation's priors. It prints the median and mean absolute percentage errors: GEMMs over token
counts and TP degrees, every operator, and the collectives by group and message size
(multi-node rows are skipped).

--fit fits the priors the profiles determine instead (mem_bw_eff, gemm_eff_bf16, gemm_half_m,
kernel_fixed_us and elementwise_eff per GPU; nccl_latency_us and nccl_bw_eff per node and
fabric): the Hopper and Ampere priors of 'servesim config' were derived this way.

The profiles are not shipped (about 12 MB): clone github.com/microsoft/vidur (MIT licence; the
priors were fitted at commit 7d47513) and give its data/profiling directory.

Example:
  servesim kernels vidur/data/profiling
  servesim kernels --fit vidur/data/profiling
  servesim kernels --format csv --out points.csv DIR`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			fit := fs.Bool("fit", false, "fit the profiles' priors instead of checking the current ones")
			gpuFile := fs.String("gpu-catalog", "", "GPU catalog `file` adding or overriding entries")
			format := fs.String("format", "table", "output `format`: table or csv (every point)")
			var out outFlag
			out.register(fs, "the report")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("give one directory: the Vidur profiling tree (data/profiling)")
				}
				if *format != "table" && *format != "csv" {
					return usagef("--format %q: want table or csv", *format)
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
				o := kernels.Options{Catalog: cat}
				var buf bytes.Buffer
				if *fit {
					fc, err := kernels.FitCompute(p, o)
					if err != nil {
						return err
					}
					fn, err := kernels.FitNetwork(p, o)
					if err != nil {
						return err
					}
					if err := kernels.WriteFitted(&buf, append(fc, fn...)); err != nil {
						return err
					}
					return out.write(e.stdout, &buf)
				}
				pts, err := kernels.Check(p, o)
				if err != nil {
					return err
				}
				rep := kernels.NewReport(pts)
				if *format == "csv" {
					err = rep.WriteCSV(&buf)
				} else {
					fmt.Fprintf(&buf, "servesim kernels: %d files, %d points, at the GPU generations' priors\n", len(p.Files), len(pts))
					err = rep.WriteTables(&buf)
				}
				if err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
