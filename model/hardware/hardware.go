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
	// Generation is the GPU's architecture generation (ampere, hopper, blackwell,
	// blackwell-pcie, ada, cdna3, cdna4): it chooses the priors of the GPU-level parameters
	// (GenerationPriors). Empty: the generic priors of package param.
	Generation Generation `toml:"generation,omitempty"`
	// MemoryGiB is the device memory the driver reports (what vLLM's gpu_memory_utilization
	// multiplies), in GiB.
	MemoryGiB float64 `toml:"memory_gib"`
	// MemoryGB is the marketing capacity in GB, for display.
	MemoryGB      float64 `toml:"memory_gb"`
	MemoryKind    string  `toml:"memory_kind"`
	BandwidthGBps float64 `toml:"bandwidth_gbps"` // peak device-memory bandwidth, GB/s
	// MemoryRateMTps is the memory's stock transfer rate per pin in MT/s (28,000 for 28 Gbps
	// GDDR7), what a memory-clock offset adds to (WithMemoryOffset); 0: not known.
	MemoryRateMTps float64 `toml:"memory_rate_mtps,omitempty"`
	// MemoryOffsetMTps is a memory-clock offset applied to this card (nvidia-settings'
	// GPUMemoryTransferRateOffset, in MT/s of the transfer rate); BandwidthGBps includes it.
	MemoryOffsetMTps float64 `toml:"memory_offset_mtps,omitempty"`
	// PowerW is the board power the card runs at (its rating, or a cap set with nvidia-smi -pl);
	// 0: not known. A card run below its rating slows compute-bound kernels more than
	// memory-bound ones (the GPU-level parameter compute_power_ratio).
	PowerW float64 `toml:"power_w,omitempty"`
	// RatedPowerW is the board power the card is rated at when PowerW is a cap below it
	// (WithPowerCap); 0 otherwise.
	RatedPowerW float64 `toml:"rated_power_w,omitempty"`
	// FullPowerW is the board power of the full-power edition of the same chip when this card
	// is a lower-power edition (RTX PRO 6000 Max-Q: 600 W); 0 otherwise.
	FullPowerW float64 `toml:"full_power_w,omitempty"`
	BF16TFLOPS float64 `toml:"bf16_tflops"`
	FP8TFLOPS  float64 `toml:"fp8_tflops"`
	FP4TFLOPS  float64 `toml:"fp4_tflops"` // 0 = no FP4 tensor cores
	// FP4Formats lists the 4-bit formats with native tensor-core support ("nvfp4", "mxfp4").
	FP4Formats []string `toml:"fp4_formats,omitempty"`
	// GPU-GPU link: kind, per-GPU bandwidth per direction (GB/s), and one-hop latency (us).
	Link          LinkKind `toml:"link"`
	LinkGBps      float64  `toml:"link_gbps"`
	LinkLatencyUS float64  `toml:"link_latency_us"`
	// LinkDomain is the number of GPUs one NVLink (or Infinity Fabric) domain connects: 8 on an
	// HGX/DGX board, 2 for PCIe cards joined by an NVLink bridge, 0 for PCIe-only cards (and, when
	// absent from a catalog file, 8 for nvlink and xgmi links). Tensor-parallel groups larger
	// than the domain cross PCIe.
	LinkDomain int    `toml:"link_domain,omitempty"`
	HostLink   string `toml:"host_link"`
	// PCIeGBps is the host link's bandwidth per direction (GB/s); when absent, read from
	// HostLink ("PCIe 4.0 x16": 32, "PCIe 5.0 x16": 64, "PCIe 6.0 x16": 128).
	PCIeGBps float64 `toml:"pcie_gbps,omitempty"`
	// PricePerHour is an editable list price per GPU-hour in USD, for the planner's ranking.
	PricePerHour float64 `toml:"price_per_hour"`
	Notes        string  `toml:"notes,omitempty"`
}

// WithMemoryOffset is the card run with a memory-clock offset of mts MT/s on its transfer rate
// (nvidia-settings' GPUMemoryTransferRateOffset; "+6000" on a 28 Gbps GDDR7 card): the peak
// bandwidth scales with the transfer rate, (rate + offset) / rate, and the card gets its own
// name (NAME+memMTS), so that its GPU-level values are fitted apart. It fails when the catalog
// does not give the stock rate.
func (g GPU) WithMemoryOffset(mts float64) (GPU, error) {
	if mts == 0 {
		return g, nil
	}
	if !(g.MemoryRateMTps > 0) {
		return GPU{}, fmt.Errorf("GPU %s: a memory-clock offset needs the stock transfer rate (memory_rate_mtps), which the catalog does not give", g.Name)
	}
	if !(mts > -g.MemoryRateMTps/2 && mts <= g.MemoryRateMTps) {
		return GPU{}, fmt.Errorf("GPU %s: memory-clock offset %g MT/s outside (-%g, %g]", g.Name, mts, g.MemoryRateMTps/2, g.MemoryRateMTps)
	}
	out := g
	out.Aliases = nil
	out.Name = fmt.Sprintf("%s+mem%g", g.Name, mts)
	out.BandwidthGBps = g.BandwidthGBps * (g.MemoryRateMTps + mts) / g.MemoryRateMTps
	out.MemoryOffsetMTps = g.MemoryOffsetMTps + mts
	out.MemoryRateMTps = g.MemoryRateMTps + mts
	return out, nil
}

// BaseName is the catalog name of a card run off its stock settings (WithMemoryOffset's
// "NAME+memN", WithPowerCap's "NAME@NW"), and whether name is such a derived edition.
func BaseName(name string) (string, bool) {
	if i := strings.IndexAny(name, "+@"); i > 0 {
		return name[:i], true
	}
	return name, false
}

// WithPowerCap is the card run with its board power capped at w watts (nvidia-smi -pl): the
// same peaks (the catalog's are at the rating) under its own name (NAME@WW), so that its
// GPU-level values (compute_power_ratio: sustained compute under the cap) are fitted apart. A
// cap at or above the rating, or an unknown rating, changes nothing.
func (g GPU) WithPowerCap(w float64) GPU {
	if !(w > 0) || !(g.PowerW > 0) || w >= g.PowerW {
		return g
	}
	out := g
	out.Aliases = nil
	out.Name = fmt.Sprintf("%s@%gW", g.Name, w)
	if out.RatedPowerW == 0 {
		out.RatedPowerW = g.PowerW
	}
	out.PowerW = w
	return out
}

// PowerLimited reports whether the card runs below the board power of its chip's full-power
// edition (a Max-Q edition, or a cap below its rating): its sustained compute clock
// (compute_power_ratio) is then its own to fit.
func (g *GPU) PowerLimited() bool {
	return (g.FullPowerW > 0 && g.PowerW > 0 && g.PowerW < g.FullPowerW) || (g.RatedPowerW > 0 && g.PowerW < g.RatedPowerW)
}

// BandwidthBytesPerS is the peak memory bandwidth in bytes/s.
func (g *GPU) BandwidthBytesPerS() float64 { return g.BandwidthGBps * 1e9 }

// MemoryBytes is the device memory in bytes.
func (g *GPU) MemoryBytes() float64 { return g.MemoryGiB * (1 << 30) }

// LinkBytesPerS is the GPU-GPU bandwidth per direction in bytes/s.
func (g *GPU) LinkBytesPerS() float64 { return g.LinkGBps * 1e9 }

// PeakFLOPS is the dense tensor-core peak, in FLOP/s, of the class GEMMs with weights stored in
// d run at on this GPU (GEMMClass): fp4 or fp8 where the GPU has tensor cores for the format,
// else bf16 (weight-only kernels dequantise to bf16).
func (g *GPU) PeakFLOPS(d arch.DType) float64 {
	c, _ := g.GEMMClass(d)
	switch c {
	case arch.NVFP4:
		return g.FP4TFLOPS * 1e12
	case arch.FP8:
		return g.FP8TFLOPS * 1e12
	}
	return g.BF16TFLOPS * 1e12
}

// GEMMClass is the tensor-core class (arch.BF16, arch.FP8 or arch.NVFP4 for fp4) a GEMM with
// weights stored in d runs at on this GPU, and whether it gets there by dequantising the weights
// in the kernel (weight-only: vLLM's Marlin kernels for fp8, NVFP4 and MXFP4 on GPUs without
// tensor cores for the format, and the triton MoE kernels for MXFP4; bytes at the stored width,
// math at bf16). A format the GPU runs natively is never weight-only; 4-bit integer formats
// (GPTQ, AWQ) are weight-only by their Format already.
func (g *GPU) GEMMClass(d arch.DType) (class arch.DType, weightOnly bool) {
	f, err := d.Format()
	if err != nil {
		return arch.BF16, false
	}
	switch f.Compute {
	case arch.NVFP4:
		if g.FP4TFLOPS > 0 && g.SupportsFP4(d.Base()) {
			return arch.NVFP4, false
		}
		return arch.BF16, true
	case arch.FP8:
		if g.FP8TFLOPS > 0 {
			return arch.FP8, false
		}
		return arch.BF16, true
	}
	return arch.BF16, f.ElemBytes < 2
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

// SupportsWeights says whether vLLM runs a checkpoint whose weights are stored in d on this GPU;
// if not, the reason. Formats without tensor cores on the GPU run weight-only where vLLM has a
// kernel for them (NVIDIA Ampere and later: Marlin for fp8, NVFP4 and MXFP4; AMD: MXFP4 through
// the triton kernels, fp8 natively on CDNA3); vLLM refuses NVFP4 on AMD GPUs (ModelOpt FP4 is
// CUDA-only) and fp8 or fp4 below Ampere (Marlin needs compute capability 8.0).
func (g *GPU) SupportsWeights(d arch.DType) (bool, string) {
	f, err := d.Format()
	if err != nil {
		return false, err.Error()
	}
	_, weightOnly := g.GEMMClass(d)
	if !weightOnly || f.Compute == arch.BF16 {
		return true, ""
	}
	if g.Vendor == "amd" {
		if d.Base() == arch.NVFP4 {
			return false, fmt.Sprintf("vLLM does not run NVFP4 (ModelOpt FP4) checkpoints on %s: its kernels are CUDA-only", g.Name)
		}
		return true, ""
	}
	switch g.Generation {
	case "", GenAmpere, GenAda, GenHopper, GenBlackwell, GenBlackwellPCIe:
		return true, ""
	}
	return false, fmt.Sprintf("%s: vLLM's weight-only %s kernels (Marlin) need an NVIDIA GPU of compute capability 8.0 or later", g.Name, d)
}

// WeightNote says, for people, how a format runs on this GPU when it is not native ("" when it is).
func (g *GPU) WeightNote(d arch.DType) string {
	f, err := d.Format()
	if err != nil || f.Compute == arch.BF16 {
		return ""
	}
	if _, wo := g.GEMMClass(d); wo {
		return fmt.Sprintf("%s has no %s tensor cores: vLLM runs these weights weight-only (Marlin or triton kernels: %s bytes read, bf16 math at dequant_eff)", g.Name, d.Base(), d.Base())
	}
	return ""
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
	if len(g.FP4Formats) > 0 && g.FP4TFLOPS <= 0 {
		return fmt.Errorf("gpu %q: fp4_formats given without fp4_tflops", g.Name)
	}
	if g.Generation != "" {
		if _, ok := generationDef(g.Generation); !ok {
			return fmt.Errorf("gpu %q: generation = %q: want one of %s", g.Name, g.Generation, generationList())
		}
	}
	if g.LinkDomain < 0 || g.PCIeGBps < 0 {
		return fmt.Errorf("gpu %q: link_domain and pcie_gbps must not be negative", g.Name)
	}
	if g.pcieBytesPerS() <= 0 {
		return fmt.Errorf("gpu %q: pcie_gbps not given and host_link %q names no PCIe generation (PCIe 4.0, 5.0 or 6.0)", g.Name, g.HostLink)
	}
	return nil
}

// Domain is the number of GPUs the GPU-GPU link connects directly (LinkDomain, with its default).
func (g *GPU) Domain() int {
	switch {
	case g.LinkDomain > 0:
		return g.LinkDomain
	case g.Link == LinkPCIe:
		return 0
	}
	return 8
}

// pcieBytesPerS is the host link's bandwidth per direction.
func (g *GPU) pcieBytesPerS() float64 {
	if g.PCIeGBps > 0 {
		return g.PCIeGBps * 1e9
	}
	h := strings.ToLower(g.HostLink)
	switch {
	case strings.Contains(h, "pcie 4"):
		return 32e9
	case strings.Contains(h, "pcie 5"):
		return 64e9
	case strings.Contains(h, "pcie 6"):
		return 128e9
	case g.Link == LinkPCIe:
		return g.LinkBytesPerS()
	}
	return 0
}

// Fabric is the path a collective among ranks GPUs takes: the GPU-GPU link when the group fits
// in one link domain (or the link is PCIe), else PCIe through the host. BytesPerS is the
// per-direction bandwidth per GPU.
type Fabric struct {
	Kind      LinkKind
	BytesPerS float64
}

// CollectiveFabric is the fabric of a tensor-parallel group of ranks GPUs.
func (g *GPU) CollectiveFabric(ranks int) Fabric {
	if g.Link == LinkPCIe {
		return Fabric{Kind: LinkPCIe, BytesPerS: g.LinkBytesPerS()}
	}
	if ranks <= g.Domain() {
		return Fabric{Kind: g.Link, BytesPerS: g.LinkBytesPerS()}
	}
	return Fabric{Kind: LinkPCIe, BytesPerS: g.pcieBytesPerS()}
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
