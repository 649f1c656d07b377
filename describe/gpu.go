package describe

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/BurntSushi/toml"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
)

func tflops(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%g", v)
}

// GPUTable writes the catalog listing of `servesim hardware list`: one row per GPU.
func GPUTable(w io.Writer, gs []hardware.GPU) error {
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
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "Peaks are dense (no 2:4 sparsity). Link bandwidth is per GPU per direction. Prices are editable list prices (--gpu-catalog FILE).")
	return err
}

// GPU writes one GPU as `servesim hardware show` prints it: facts, generation, native weight
// formats, the formats vLLM runs weight-only and those it cannot run, links and price.
func GPU(w io.Writer, g *hardware.GPU) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("name", g.Name)
	if len(g.Aliases) > 0 {
		row("aliases", strings.Join(g.Aliases, ", "))
	}
	row("vendor", g.Vendor)
	if g.Generation != "" {
		row("generation", g.Generation.Label()+" (the GPU-level parameters' priors; servesim config lists them)")
	}
	row("memory", fmt.Sprintf("%g GB %s (%.2f GiB reported to vLLM)", g.MemoryGB, g.MemoryKind, g.MemoryGiB))
	row("bandwidth", fmt.Sprintf("%g GB/s peak", g.BandwidthGBps))
	row("dense BF16", tflops(g.BF16TFLOPS)+" TFLOPS")
	row("dense FP8", tflops(g.FP8TFLOPS)+" TFLOPS")
	if g.FP4TFLOPS > 0 {
		row("dense FP4", tflops(g.FP4TFLOPS)+" TFLOPS")
	} else {
		row("dense FP4", "none (no fp4 tensor cores)")
	}
	formats := []string{"bf16", "fp16"}
	if g.FP8TFLOPS > 0 {
		formats = append(formats, "fp8")
	}
	formats = append(formats, g.FP4Formats...)
	row("native weight formats", strings.Join(formats, ", "))
	var not, wo []string
	for _, d := range []arch.DType{arch.FP8, arch.NVFP4, arch.MXFP4} {
		ok, _ := g.SupportsWeights(d)
		_, weightOnly := g.GEMMClass(d)
		switch {
		case !ok:
			not = append(not, string(d))
		case weightOnly:
			wo = append(wo, string(d))
		}
	}
	if len(wo) > 0 {
		row("weight-only formats", strings.Join(wo, ", ")+" (vLLM's Marlin or triton kernels: the stored bytes are read, the math runs at the bf16 rate x dequant_eff)")
	}
	if len(not) > 0 {
		row("not supported", strings.Join(not, ", ")+" (vLLM has no kernel for them here; the planner prunes such checkpoints rather than invent an emulated speed)")
	}
	link := fmt.Sprintf("%s, %g GB/s per direction, %g us per hop", g.Link, g.LinkGBps, g.LinkLatencyUS)
	if g.Link != hardware.LinkPCIe {
		link += fmt.Sprintf("; %d GPUs per link domain (larger TP groups cross PCIe)", g.Domain())
	}
	row("GPU-GPU link", link)
	row("host link", g.HostLink)
	row("price", fmt.Sprintf("$%.2f per GPU-hour (editable)", g.PricePerHour))
	if g.Notes != "" {
		row("notes", g.Notes)
	}
	return tw.Flush()
}

// CatalogTOML writes GPUs as catalog entries ([[gpu]] TOML) a user can edit and load with
// --gpu-catalog FILE or hardware.gpu_file.
func CatalogTOML(w io.Writer, gs []hardware.GPU) error {
	fmt.Fprintln(w, "# servesim GPU catalog entries: edit and pass with --gpu-catalog FILE (or hardware.gpu_file in a scenario).")
	enc := toml.NewEncoder(w)
	enc.Indent = ""
	return enc.Encode(hardware.Catalog{GPUs: gs})
}
