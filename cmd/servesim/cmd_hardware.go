package main

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"github.com/servesim/servesim/model"
)

func hardwareCmd() *command {
	return &command{
		Name:  "hardware",
		Args:  "list | show NAME",
		Short: "list the GPU catalog, or show one GPU (memory, bandwidth, peaks, formats, links, price)",
		Long: `The catalog holds published facts (dense peaks, no 2:4 sparsity) and an editable list price per
GPU-hour used only to rank plans. A user file given with --gpus (the same [[gpu]] TOML layout as
'servesim hardware list --format toml') adds entries or overrides them by name; unknown keys are
errors naming the key.

Example:
  servesim hardware list
  servesim hardware show h100 --format toml > my-gpus.toml   # edit price_per_hour, then
  servesim hardware list --gpus my-gpus.toml`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			file := fs.String("gpus", "", "catalog `file` adding or overriding GPUs ([[gpu]] TOML)")
			format := fs.String("format", "table", "output `format`: table or toml")
			var out outFlag
			out.register(fs, "the listing")
			return func(args []string) error {
				if len(args) == 0 {
					return usagef("want 'hardware list' or 'hardware show NAME'")
				}
				if err := checkFormat(*format, "table", "toml"); err != nil {
					return err
				}
				var pick []model.GPU
				cat, err := model.LoadCatalog(*file)
				if err != nil {
					return fmt.Errorf("--gpus: %w", err)
				}
				switch args[0] {
				case "list":
					if len(args) > 1 {
						return usagef("unexpected argument %q after 'list'", args[1])
					}
					pick = cat.GPUs
				case "show":
					if len(args) != 2 {
						return usagef("want 'hardware show NAME' (one GPU name or alias)")
					}
					g, err := cat.Find(args[1])
					if err != nil {
						return usagef("%v", err)
					}
					pick = []model.GPU{g}
				default:
					return usagef("unknown subcommand %q: want list or show NAME", args[0])
				}
				if err := out.check(); err != nil {
					return err
				}
				var buf bytes.Buffer
				switch {
				case *format == "toml":
					fmt.Fprintln(&buf, "# servesim GPU catalog entries: edit and pass with --gpus FILE (or hardware.gpu_file in a scenario).")
					enc := toml.NewEncoder(&buf)
					enc.Indent = ""
					if err := enc.Encode(model.Catalog{GPUs: pick}); err != nil {
						return err
					}
				case args[0] == "show":
					writeGPU(&buf, &pick[0])
				default:
					writeGPUTable(&buf, pick)
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}

func tflops(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%g", v)
}

func writeGPUTable(w *bytes.Buffer, gs []model.GPU) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tvendor\tmemory\tGiB usable\tbandwidth GB/s\tBF16 TFLOPS\tFP8 TFLOPS\tFP4 TFLOPS\tFP4 formats\tGPU-GPU link\thost link\t$/GPU-hour\t")
	for _, g := range gs {
		formats := strings.Join(g.FP4Formats, ",")
		if formats == "" {
			formats = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%g GB %s\t%.2f\t%g\t%s\t%s\t%s\t%s\t%s %g GB/s\t%s\t%.2f\t\n", g.Name, g.Vendor, g.MemoryGB, g.MemoryKind, g.MemoryGiB,
			g.BandwidthGBps, tflops(g.BF16TFLOPS), tflops(g.FP8TFLOPS), tflops(g.FP4TFLOPS), formats, g.Link, g.LinkGBps, g.HostLink, g.PricePerHour)
	}
	tw.Flush()
	fmt.Fprintln(w, "Peaks are dense (no 2:4 sparsity). Link bandwidth is per GPU per direction. Prices are editable list prices (--gpus FILE).")
}

func writeGPU(w *bytes.Buffer, g *model.GPU) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("name", g.Name)
	if len(g.Aliases) > 0 {
		row("aliases", strings.Join(g.Aliases, ", "))
	}
	row("vendor", g.Vendor)
	row("memory", fmt.Sprintf("%g GB %s (%.2f GiB reported to vLLM)", g.MemoryGB, g.MemoryKind, g.MemoryGiB))
	row("bandwidth", fmt.Sprintf("%g GB/s peak", g.BandwidthGBps))
	row("dense BF16", tflops(g.BF16TFLOPS)+" TFLOPS")
	row("dense FP8", tflops(g.FP8TFLOPS)+" TFLOPS")
	row("dense FP4", tflops(g.FP4TFLOPS)+" TFLOPS")
	formats := []string{"bf16", "fp16"}
	if g.FP8TFLOPS > 0 {
		formats = append(formats, "fp8")
	}
	formats = append(formats, g.FP4Formats...)
	row("native weight formats", strings.Join(formats, ", "))
	var not []string
	for _, d := range []model.DType{model.FP8, model.NVFP4, model.MXFP4} {
		if ok, _ := g.SupportsWeights(d); !ok {
			not = append(not, string(d))
		}
	}
	if len(not) > 0 {
		row("not supported", strings.Join(not, ", ")+" (the planner prunes such checkpoints rather than invent an emulated speed)")
	}
	row("GPU-GPU link", fmt.Sprintf("%s, %g GB/s per direction, %g us per hop", g.Link, g.LinkGBps, g.LinkLatencyUS))
	row("host link", g.HostLink)
	row("price", fmt.Sprintf("$%.2f per GPU-hour (editable)", g.PricePerHour))
	if g.Notes != "" {
		row("notes", g.Notes)
	}
	tw.Flush()
}
