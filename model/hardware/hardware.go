package hardware

import (
	"fmt"
	"strings"

	"github.com/servesim/servesim/model/arch"
)

// LinkKind is a GPU-to-GPU interconnect family.
type LinkKind string

const (
	LinkPCIe   LinkKind = "pcie"
	LinkNVLink LinkKind = "nvlink"
	LinkXGMI   LinkKind = "xgmi" // AMD Infinity Fabric
)

// GPU is one accelerator model: published facts only (vendor datasheets). Peaks are dense
// (no 2:4 sparsity). Nothing here is calibrated.
type GPU struct {
	Name    string   `toml:"name"`
	Aliases []string `toml:"aliases,omitempty"`
	Vendor  string   `toml:"vendor"`
	// MemoryGiB is the device memory the driver reports (what vLLM's gpu_memory_utilization
	// multiplies), in GiB.
	MemoryGiB float64 `toml:"memory_gib"`
	// MemoryGB is the marketing capacity in GB, for display.
	MemoryGB      float64 `toml:"memory_gb"`
	MemoryKind    string  `toml:"memory_kind"`
	BandwidthGBps float64 `toml:"bandwidth_gbps"` // peak device-memory bandwidth, GB/s
	BF16TFLOPS    float64 `toml:"bf16_tflops"`
	FP8TFLOPS     float64 `toml:"fp8_tflops"`
	FP4TFLOPS     float64 `toml:"fp4_tflops"` // 0 = no FP4 tensor cores
	// FP4Formats lists the 4-bit formats with native tensor-core support ("nvfp4", "mxfp4").
	FP4Formats []string `toml:"fp4_formats,omitempty"`
	// GPU-GPU link: kind, per-GPU bandwidth per direction (GB/s), and one-hop latency (us).
	Link          LinkKind `toml:"link"`
	LinkGBps      float64  `toml:"link_gbps"`
	LinkLatencyUS float64  `toml:"link_latency_us"`
	HostLink      string   `toml:"host_link"`
	// PricePerHour is an editable list price per GPU-hour in USD, for the planner's ranking.
	PricePerHour float64 `toml:"price_per_hour"`
	Notes        string  `toml:"notes,omitempty"`
}

// BandwidthBytesPerS is the peak memory bandwidth in bytes/s.
func (g *GPU) BandwidthBytesPerS() float64 { return g.BandwidthGBps * 1e9 }

// MemoryBytes is the device memory in bytes.
func (g *GPU) MemoryBytes() float64 { return g.MemoryGiB * (1 << 30) }

// LinkBytesPerS is the GPU-GPU bandwidth per direction in bytes/s.
func (g *GPU) LinkBytesPerS() float64 { return g.LinkGBps * 1e9 }

// PeakFLOPS is the dense tensor-core peak, in FLOP/s, for GEMMs whose weights are stored in d.
// A 4-bit format the GPU does not support natively falls back to its bf16 rate (dequantise, then
// bf16 MMA); SupportsWeights tells the caller whether that is acceptable.
func (g *GPU) PeakFLOPS(d arch.DType) float64 {
	switch d.ComputeClass() {
	case arch.NVFP4:
		if g.FP4TFLOPS > 0 && g.SupportsFP4(d) {
			return g.FP4TFLOPS * 1e12
		}
		if g.FP8TFLOPS > 0 {
			return g.FP8TFLOPS * 1e12
		}
		return g.BF16TFLOPS * 1e12
	case arch.FP8:
		if g.FP8TFLOPS > 0 {
			return g.FP8TFLOPS * 1e12
		}
		return g.BF16TFLOPS * 1e12
	}
	return g.BF16TFLOPS * 1e12
}

// SupportsFP4 reports whether the GPU runs 4-bit format d on tensor cores.
func (g *GPU) SupportsFP4(d arch.DType) bool {
	for _, f := range g.FP4Formats {
		if f == string(d) {
			return true
		}
	}
	return false
}

// SupportsWeights says whether a checkpoint whose weights are stored in d runs natively; if not,
// the reason.
func (g *GPU) SupportsWeights(d arch.DType) (bool, string) {
	switch d {
	case arch.NVFP4, arch.MXFP4:
		if !g.SupportsFP4(d) {
			return false, fmt.Sprintf("%s has no %s tensor cores (it would run only through emulation or dequantisation, whose speed servesim does not invent)", g.Name, d)
		}
	case arch.FP8:
		if g.FP8TFLOPS == 0 {
			return false, fmt.Sprintf("%s has no fp8 tensor cores", g.Name)
		}
	}
	return true, ""
}

// Physical ranges of the catalog's numbers: every number must be finite and within its range,
// so a typo (or NaN, Inf, 1e300) is refused where it is read rather than reaching the engine.
// The ranges are wide (today's GPUs sit well inside them) and exist to catch nonsense.
const (
	MinMemoryGiB, MaxMemoryGiB         = 0.5, 4096    // device memory, GiB (the engine tests use ~1 GiB toy GPUs)
	MinBandwidthGBps, MaxBandwidthGBps = 10, 100_000  // device-memory bandwidth, GB/s
	MinTFLOPS, MaxTFLOPS               = 0.1, 100_000 // any dense peak, TFLOPS (fp8, fp4 also 0: none)
	MinLinkGBps, MaxLinkGBps           = 0.1, 10_000  // GPU-GPU link per direction, GB/s
	MinLinkLatencyUS, MaxLinkLatencyUS = 0.01, 1000   // one link hop, microseconds
	MaxPricePerHour                    = 10_000       // USD per GPU-hour (0: no price)
)

// checkRange refuses a NaN, an infinity or a value outside [lo, hi] (zeroOK: 0 is allowed too,
// meaning "none"), naming the key, the value and the range with its unit.
func (g *GPU) checkRange(key string, v, lo, hi float64, zeroOK bool, unit string) error {
	if (v >= lo && v <= hi) || (zeroOK && v == 0) {
		return nil
	}
	rng := fmt.Sprintf("in %v..%v %s", lo, hi, unit)
	if zeroOK {
		rng += ", or 0"
	}
	return fmt.Errorf("gpu %q: %s = %v: want a finite number %s", g.Name, key, v, rng)
}

// Validate checks that the facts needed by the cost model are present, finite and physical
// (the ranges above).
func (g *GPU) Validate() error {
	if g.Name == "" {
		return fmt.Errorf("gpu: name is empty")
	}
	checks := []struct {
		key    string
		v      float64
		lo, hi float64
		zeroOK bool
		unit   string
	}{
		{"memory_gib", g.MemoryGiB, MinMemoryGiB, MaxMemoryGiB, false, "GiB"},
		{"memory_gb", g.MemoryGB, 0, MaxMemoryGiB * 1.074, false, "GB (0: not given)"},
		{"bandwidth_gbps", g.BandwidthGBps, MinBandwidthGBps, MaxBandwidthGBps, false, "GB/s"},
		{"bf16_tflops", g.BF16TFLOPS, MinTFLOPS, MaxTFLOPS, false, "TFLOPS"},
		{"fp8_tflops", g.FP8TFLOPS, MinTFLOPS, MaxTFLOPS, true, "TFLOPS (0: no fp8 tensor cores)"},
		{"fp4_tflops", g.FP4TFLOPS, MinTFLOPS, MaxTFLOPS, true, "TFLOPS (0: no fp4 tensor cores)"},
		{"link_gbps", g.LinkGBps, MinLinkGBps, MaxLinkGBps, false, "GB/s (PCIe counts)"},
		{"link_latency_us", g.LinkLatencyUS, MinLinkLatencyUS, MaxLinkLatencyUS, false, "us"},
		{"price_per_hour", g.PricePerHour, 0, MaxPricePerHour, false, "USD per GPU-hour"},
	}
	for _, c := range checks {
		if err := g.checkRange(c.key, c.v, c.lo, c.hi, c.zeroOK, c.unit); err != nil {
			return err
		}
	}
	switch g.Link {
	case LinkPCIe, LinkNVLink, LinkXGMI:
	default:
		return fmt.Errorf("gpu %q: link = %q: want pcie, nvlink or xgmi", g.Name, g.Link)
	}
	for _, f := range g.FP4Formats {
		if f != string(arch.NVFP4) && f != string(arch.MXFP4) {
			return fmt.Errorf("gpu %q: fp4_formats has %q: want nvfp4 or mxfp4", g.Name, f)
		}
	}
	return nil
}

// Matches reports whether name (case-insensitive) is the GPU's name or an alias.
func (g *GPU) Matches(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	if strings.ToLower(g.Name) == n {
		return true
	}
	for _, a := range g.Aliases {
		if strings.ToLower(a) == n {
			return true
		}
	}
	return false
}

// Machine is the hardware a deployment runs on: Count GPUs of one kind.
type Machine struct {
	GPU   GPU `toml:"gpu"`
	Count int `toml:"count"`
}
