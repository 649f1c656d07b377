package hardware

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/servesim/servesim/model/param"
)

// Generation is a GPU architecture generation: the unit the GPU-level parameters' priors are
// given for.
type Generation string

// The generations the catalog names.
const (
	GenAmpere        Generation = "ampere"         // A100, A10, A40 (sm80/86)
	GenAda           Generation = "ada"            // L4, L40, L40S (sm89)
	GenHopper        Generation = "hopper"         // H100, H200, H20, GH200 (sm90)
	GenBlackwell     Generation = "blackwell"      // B200, B300, GB200 (sm100/103, HBM3e, NVLink 5)
	GenBlackwellPCIe Generation = "blackwell-pcie" // RTX PRO 6000, RTX 5090 (sm120, GDDR7, PCIe only)
	GenCDNA3         Generation = "cdna3"          // MI300X, MI325X
	GenCDNA4         Generation = "cdna4"          // MI350X, MI355X
)

// Prior is a GPU-level parameter's prior for a generation: the value, the interval it is
// believed to lie in (wider where no kernel data exists) and where both come from.
type Prior struct {
	ID     param.ID
	Value  float64
	Lo, Hi float64
	Source string
}

// genDef is one generation's priors: kernel efficiencies, and the collectives over its GPU-GPU
// link (NVLink or Infinity Fabric) and over PCIe.
type genDef struct {
	gen    Generation
	label  string
	kernel []Prior
	link   []Prior // collectives inside the link domain (nvlink, xgmi)
	pcie   []Prior // collectives over PCIe (PCIe-only cards, groups beyond the link domain)
}

// Sources cited by the priors.
const (
	srcVidurH100            = "Vidur H100 profiles (microsoft/vidur 7d47513, data/profiling/compute/h100; fit: servesim kernels --fit)"
	srcVidurA100            = "Vidur A100 profiles (microsoft/vidur 7d47513, data/profiling/compute/a100; fit: servesim kernels --fit)"
	srcVidurH100DGX         = "Vidur h100_dgx NCCL all-reduce (microsoft/vidur 7d47513; fit: servesim kernels --fit)"
	srcVidurA100DGX         = "Vidur a100_dgx NCCL all-reduce (microsoft/vidur 7d47513; fit: servesim kernels --fit)"
	srcVidurH100PCIe        = "Vidur h100_pairwise_nvlink NCCL all-reduce at 4 ranks, whose cross-pair traffic crosses PCIe 5.0 (microsoft/vidur 7d47513; fit: servesim kernels --fit)"
	srcVidurA100PCIe        = "Vidur a100_pairwise_nvlink NCCL all-reduce at 4 ranks, whose cross-pair traffic crosses PCIe 4.0 (microsoft/vidur 7d47513; fit: servesim kernels --fit)"
	srcFA2                  = "FlashAttention-2 (Dao 2023): forward pass at 50-73 % of A100 peak; short causal prompts at the low end"
	srcFA3                  = "FlashAttention-3 (Shah et al. 2024): fp16 forward up to 740 TFLOPS, 75 % of H100 peak, at long sequences; vLLM's prompts are shorter"
	srcPagedAttention       = "decode attention is memory-bound: paged kernels (FlashAttention with paged KV, FlashInfer) read the cache at most of the streaming bandwidth; PagedAttention (Kwon et al., SOSP 2023, sec. 7) measured vLLM's first kernel 20-26 % slower than a contiguous-cache one, the interval's low end"
	srcDeepGEMM             = "DeepGEMM README (deepseek-ai, 2025): block-scaled fp8 GEMMs up to 1,550 TFLOPS on H800 (0.78 of the dense peak) at its best shapes, lower at serving shapes"
	srcMarlin               = "Marlin (Frantar et al., PPoPP 2025): weight-only 4-bit GEMMs near the ideal 4x speed-up while memory-bound, approaching fp16 cuBLAS at large batch; no per-GPU profile, wide interval"
	srcGDDR                 = "reference/hardware.md: achievable bandwidth about 0.8 of peak on GDDR7 in public system files"
	srcNoProfile            = "no public kernel profile for this generation: the Hopper value, with a wider interval"
	srcNoProfileAmpere      = "no public kernel profile for this generation: the Ampere value (the same tensor-core design, sm80/sm89), with a wider interval"
	srcCustomAR             = "no public profile of vLLM's custom all-reduce: one-shot over the link is a flag barrier and one read of each peer's buffer, a few link hops plus a kernel; order-of-magnitude prior, wide interval"
	srcDeepGEMMSmallM       = "DeepGEMM README tables (deepseek-ai/DeepGEMM a9967bc, H800 SXM5): fine-grained-scaled fp8 GEMMs of 64 and 128 rows reach 1,509-2,668 GB/s (median 2,299) of the H800's 3,350, relative to the streaming bandwidth the Vidur fit gives (mem_bw_eff 0.923); servesim kernels --fit DIR reads them"
	srcNativeBlockScale     = "block-scaled MMA instructions in the tensor cores (Blackwell's microscaling formats): no scale promotion on the CUDA cores; no public per-shape table, so 1 with a wide interval"
	srcFlashMLASparse       = "FlashMLA (deepseek-ai/FlashMLA 9241ae3): FP8-cache sparse decode at 410 TFLOPS on an H800 in a compute-bound shape (250 with the earlier kernel, up to 460 at top-k 32768), of the 989 TFLOPS dense bf16 peak; servesim kernels --fit DIR reads them"
	srcFlashMLASparseB200   = "FlashMLA (deepseek-ai/FlashMLA 9241ae3): FP8-cache sparse decode up to 350 TFLOPS on a B200 ('not really optimized yet') of its 2,250 TFLOPS dense bf16 peak"
	srcNoSparseKernel       = "no published figure for this generation's sparse-MLA decode kernel: the Hopper value's fraction, with a wide interval"
	srcElementwiseFixedH100 = "Vidur H100 profiles: RMSNorm, rotary, SiLU-and-mul and residual-add kernels of 1-16 tokens, whose bytes take well under a microsecond, run 2-6 us (median 4 us, quartiles 2 and 6), against the GEMMs' fixed 6.74 us (kernel_fixed_us): 0.59 (0.30-0.89); fit: servesim kernels --fit"
	srcElementwiseFixedA100 = "Vidur A100 profiles: RMSNorm, rotary, SiLU-and-mul and residual-add kernels of 1-16 tokens run 3-7 us (median 4 us, quartiles 3 and 7), against the GEMMs' fixed 6.76 us (kernel_fixed_us): 0.59 (0.44-1.04); fit: servesim kernels --fit"
	srcIndexer              = "no public throughput figure for DeepGEMM's fp8 MQA-logits kernel; wide interval"
	srcPowerClock           = "the catalog's peaks are at each card's rated power and boost clock; a card run at a lower power (a Max-Q edition or a cap) sustains a lower core clock under compute-bound load, dynamic power growing about as the cube of the clock (voltage following frequency); no public sustained-clock figure, so 1 with an interval down to 0.8, fitted per card edition"
	srcLinearAttn           = "no public throughput figure for the chunked delta-rule scan (flash-linear-attention triton kernels) relative to peak; wide interval"
	srcElementwiseHopper    = "Vidur H100 profiles: SiLU-and-mul and RMSNorm against the fitted streaming bandwidth (fit: servesim kernels --fit)"
	srcElementwiseAmpere    = "Vidur A100 profiles: SiLU-and-mul and RMSNorm against the fitted streaming bandwidth (fit: servesim kernels --fit)"
)

// generations is the prior table, one entry per generation, built once (every Choose of a
// deployment's priors reads it; nobody changes it: GenerationPriors hands out copies). Hopper and Ampere GEMM, bandwidth and NCCL priors are fitted to Vidur's
// kernel profiles (servesim kernels --fit reproduces them); the other generations take published
// figures or, where none exists, the nearest profiled generation's value with a wider interval.
var generations = sync.OnceValue(func() []genDef {
	hopperNCCL := []Prior{
		{param.NCCLLatencyUS, 27.9, 15, 60, srcVidurH100DGX},
		{param.NCCLBWEff, 0.776, 0.6, 0.95, srcVidurH100DGX},
		{param.NCCLSmallLatencyUS, 37.7, 15, 80, srcVidurH100DGX},
	}
	hopperPCIe := []Prior{
		{param.NCCLLatencyUS, 50.0, 20, 100, srcVidurH100PCIe},
		{param.NCCLBWEff, 0.777, 0.55, 0.95, srcVidurH100PCIe},
		{param.NCCLSmallLatencyUS, 24.3, 10, 60, srcVidurH100PCIe},
	}
	ampereNCCL := []Prior{
		{param.NCCLLatencyUS, 49.2, 20, 100, srcVidurA100DGX},
		{param.NCCLBWEff, 0.579, 0.4, 0.8, srcVidurA100DGX},
		{param.NCCLSmallLatencyUS, 41.7, 20, 100, srcVidurA100DGX},
	}
	amperePCIe := []Prior{
		{param.NCCLLatencyUS, 58.5, 25, 120, srcVidurA100PCIe},
		{param.NCCLBWEff, 0.740, 0.5, 0.95, srcVidurA100PCIe},
		{param.NCCLSmallLatencyUS, 57.6, 25, 120, srcVidurA100PCIe},
	}
	customLink := []Prior{
		{param.CustomARLatencyUS, 10, 3, 40, srcCustomAR},
		{param.CustomARBWEff, 0.6, 0.2, 0.9, srcCustomAR},
	}
	customPCIe := []Prior{
		{param.CustomARLatencyUS, 20, 5, 80, srcCustomAR},
		{param.CustomARBWEff, 0.5, 0.2, 0.9, srcCustomAR},
	}
	widen := func(ps []Prior, f float64, src string) []Prior {
		out := make([]Prior, len(ps))
		for i, p := range ps {
			d := p.ID.Def()
			lo, hi := p.Value-(p.Value-p.Lo)*f, p.Value+(p.Hi-p.Value)*f
			if d.Log {
				lo, hi = p.Value*math.Pow(p.Lo/p.Value, f), p.Value*math.Pow(p.Hi/p.Value, f)
			}
			out[i] = Prior{p.ID, p.Value, max(lo, d.Lo), min(hi, d.Hi), src}
		}
		return out
	}
	cat := func(xs ...[]Prior) []Prior {
		var out []Prior
		for _, x := range xs {
			out = append(out, x...)
		}
		return out
	}
	elemFixedHopper := Prior{param.ElementwiseFixedRatio, 0.59, 0.3, 0.89, srcElementwiseFixedH100}
	elemFixedAmpere := Prior{param.ElementwiseFixedRatio, 0.59, 0.44, 1.04, srcElementwiseFixedA100}
	blockFP8Hopper := Prior{param.GEMMBWEffFP8, 0.743, 0.49, 0.86, srcDeepGEMMSmallM}
	blockFP8Native := Prior{param.GEMMBWEffFP8, 1, 0.7, 1, srcNativeBlockScale}
	sparseHopper := Prior{param.SparseDecodeEff, 0.41, 0.25, 0.47, srcFlashMLASparse}
	sparseOther := Prior{param.SparseDecodeEff, 0.41, 0.15, 0.8, srcNoSparseKernel}
	shared := func(attnPrefill, attnPrefillLo, attnPrefillHi float64, srcPrefill string) []Prior {
		return []Prior{
			{param.AttnPrefillEff, attnPrefill, attnPrefillLo, attnPrefillHi, srcPrefill},
			{param.AttnDecodeEff, 0.85, 0.6, 1.0, srcPagedAttention},
			{param.DequantEff, 0.75, 0.4, 1.0, srcMarlin},
			{param.IndexerEff, 0.5, 0.1, 0.9, srcIndexer},
			{param.LinearAttnEff, 0.03, 0.005, 0.3, srcLinearAttn},
			{param.ComputePowerRatio, 1, 0.8, 1.0, srcPowerClock},
		}
	}
	hopperGEMM := []Prior{
		{param.MemBWEff, 0.923, 0.85, 0.97, srcVidurH100},
		{param.GEMMEffBF16, 0.756, 0.65, 0.85, srcVidurH100},
		{param.GEMMEffFP8, 0.6, 0.4, 0.8, srcDeepGEMM},
		{param.GEMMEffFP4, 0.5, 0.2, 0.8, "no fp4 tensor cores (fp4 weights run weight-only at the bf16 rate)"},
		{param.GEMMHalfM, 157, 80, 300, srcVidurH100},
		{param.KernelFixedUS, 6.74, 4, 10, srcVidurH100},
		{param.ElementwiseEff, 0.46, 0.25, 0.9, srcElementwiseHopper},
	}
	ampereGEMM := []Prior{
		{param.MemBWEff, 0.798, 0.72, 0.9, srcVidurA100},
		{param.GEMMEffBF16, 0.743, 0.65, 0.85, srcVidurA100},
		{param.GEMMEffFP8, 0.6, 0.3, 0.9, "no fp8 tensor cores (fp8 weights run weight-only at the bf16 rate)"},
		{param.GEMMEffFP4, 0.5, 0.2, 0.8, "no fp4 tensor cores (fp4 weights run weight-only at the bf16 rate)"},
		{param.GEMMHalfM, 80.7, 40, 160, srcVidurA100},
		{param.KernelFixedUS, 6.76, 4, 10, srcVidurA100},
		{param.ElementwiseEff, 0.52, 0.25, 0.9, srcElementwiseAmpere},
	}
	return []genDef{
		{gen: GenAmpere, label: "Ampere (A100)",
			kernel: cat(ampereGEMM, []Prior{elemFixedAmpere, {param.GEMMBWEffFP8, 1, 0.7, 1, "no fp8 tensor cores: fp8 weights run weight-only at the bf16 rate, where this does not apply"}, sparseOther}, shared(0.55, 0.35, 0.75, srcFA2)),
			link:   cat(ampereNCCL, customLink), pcie: cat(amperePCIe, customPCIe)},
		{gen: GenAda, label: "Ada (L4, L40S)",
			kernel: cat([]Prior{{param.MemBWEff, 0.8, 0.65, 0.92, srcGDDR}}, widen(ampereGEMM[1:2], 2, srcNoProfileAmpere),
				[]Prior{{param.GEMMEffFP8, 0.6, 0.3, 0.85, srcNoProfileAmpere + "; fp8 tensor cores at twice the bf16 rate"}},
				widen(ampereGEMM[3:], 2, srcNoProfileAmpere), widen([]Prior{elemFixedAmpere}, 1.5, srcNoProfileAmpere), widen([]Prior{blockFP8Hopper}, 1.5, srcNoProfile), []Prior{sparseOther}, shared(0.5, 0.3, 0.75, srcFA2)),
			link: cat(widen(amperePCIe, 1.5, srcNoProfileAmpere), customPCIe), pcie: cat(widen(amperePCIe, 1.5, srcNoProfileAmpere), customPCIe)},
		{gen: GenHopper, label: "Hopper (H100, H200, H20)",
			kernel: cat(hopperGEMM, []Prior{elemFixedHopper, blockFP8Hopper, sparseHopper}, shared(0.6, 0.35, 0.8, srcFA3)),
			link:   cat(hopperNCCL, customLink), pcie: cat(hopperPCIe, customPCIe)},
		{gen: GenBlackwell, label: "Blackwell datacenter (B200, B300)",
			kernel: cat([]Prior{{param.MemBWEff, 0.88, 0.75, 0.96, srcNoProfile}}, widen(hopperGEMM[1:3], 2, srcNoProfile),
				[]Prior{{param.GEMMEffFP4, 0.55, 0.25, 0.85, "no public kernel profile: about the fp8 fraction, wide interval"}},
				widen(hopperGEMM[4:], 2, srcNoProfile), widen([]Prior{elemFixedHopper}, 1.5, srcNoProfile), []Prior{blockFP8Native, {param.SparseDecodeEff, 0.156, 0.1, 0.41, srcFlashMLASparseB200}}, shared(0.55, 0.3, 0.8, srcNoProfile)),
			link: cat(widen(hopperNCCL, 2, srcNoProfile), customLink), pcie: cat(widen(hopperPCIe, 2, srcNoProfile), customPCIe)},
		{gen: GenBlackwellPCIe, label: "Blackwell PCIe and workstation (RTX PRO 6000, RTX 5090)",
			kernel: cat([]Prior{{param.MemBWEff, 0.8, 0.65, 0.92, srcGDDR}}, widen(hopperGEMM[1:3], 2, srcNoProfile),
				[]Prior{{param.GEMMEffFP4, 0.5, 0.2, 0.85, "no public kernel profile: below the fp8 fraction, wide interval"}},
				widen(hopperGEMM[4:], 2, srcNoProfile), widen([]Prior{elemFixedHopper}, 1.5, srcNoProfile), []Prior{blockFP8Native, sparseOther}, shared(0.5, 0.25, 0.8, srcNoProfile)),
			link: cat(widen(hopperPCIe, 2, srcNoProfile), customPCIe), pcie: cat(widen(hopperPCIe, 2, srcNoProfile), customPCIe)},
		{gen: GenCDNA3, label: "CDNA3 (MI300X, MI325X)",
			kernel: cat([]Prior{{param.MemBWEff, 0.8, 0.6, 0.95, "no public kernel profile at hand: wide interval"},
				{param.GEMMEffBF16, 0.55, 0.3, 0.85, "no public kernel profile at hand: wide interval"},
				{param.GEMMEffFP8, 0.45, 0.2, 0.8, "no public kernel profile at hand: wide interval"},
				{param.GEMMEffFP4, 0.45, 0.2, 0.8, "no fp4 tensor cores (MXFP4 weights run weight-only at the bf16 rate)"}},
				widen(hopperGEMM[4:], 2, srcNoProfile), widen([]Prior{elemFixedHopper}, 1.5, srcNoProfile), widen([]Prior{blockFP8Hopper}, 1.5, "no public fp8 GEMM table: no block-scaled MMA instructions either, so the Hopper value, wider"), []Prior{sparseOther}, shared(0.45, 0.2, 0.75, "no public kernel profile (CK FlashAttention): wide interval")),
			link: cat(widen(hopperNCCL, 2, "no RCCL profile: the NVLink value, wider"), customLink), pcie: cat(widen(hopperPCIe, 2, srcNoProfile), customPCIe)},
		{gen: GenCDNA4, label: "CDNA4 (MI350X, MI355X)",
			kernel: cat([]Prior{{param.MemBWEff, 0.8, 0.6, 0.95, "no public kernel profile at hand: wide interval"},
				{param.GEMMEffBF16, 0.55, 0.3, 0.85, "no public kernel profile at hand: wide interval"},
				{param.GEMMEffFP8, 0.45, 0.2, 0.8, "no public kernel profile at hand: wide interval"},
				{param.GEMMEffFP4, 0.45, 0.2, 0.8, "no public kernel profile at hand: wide interval"}},
				widen(hopperGEMM[4:], 2, srcNoProfile), widen([]Prior{elemFixedHopper}, 1.5, srcNoProfile), widen([]Prior{blockFP8Hopper}, 1.5, "no public fp8 GEMM table: no block-scaled MMA instructions either, so the Hopper value, wider"), []Prior{sparseOther}, shared(0.45, 0.2, 0.75, "no public kernel profile (CK FlashAttention): wide interval")),
			link: cat(widen(hopperNCCL, 2, "no RCCL profile: the NVLink value, wider"), customLink), pcie: cat(widen(hopperPCIe, 2, srcNoProfile), customPCIe)},
	}
})

func generationDef(g Generation) (genDef, bool) {
	for _, d := range generations() {
		if d.gen == g {
			return d, true
		}
	}
	return genDef{}, false
}

func generationList() string {
	var names []string
	for _, d := range generations() {
		names = append(names, string(d.gen))
	}
	return strings.Join(names, ", ")
}

// CheckGeneration refuses a generation name the prior table does not know.
func CheckGeneration(g Generation) error {
	if _, ok := generationDef(g); !ok {
		return fmt.Errorf("generation %q: want one of %s", g, generationList())
	}
	return nil
}

// Generations lists the known generations with a label for people.
func Generations() [][2]string {
	var out [][2]string
	for _, d := range generations() {
		out = append(out, [2]string{string(d.gen), d.label})
	}
	return out
}

// GenerationPriors returns the priors of the GPU-level parameters for generation g, with the
// collectives over fabric kind (the GPU-GPU link, or PCIe). An unknown generation is an error.
func GenerationPriors(g Generation, fabric LinkKind) ([]Prior, error) {
	d, ok := generationDef(g)
	if !ok {
		return nil, fmt.Errorf("unknown GPU generation %q (want one of %s)", g, generationList())
	}
	out := append([]Prior(nil), d.kernel...)
	if fabric == LinkPCIe {
		out = append(out, d.pcie...)
	} else {
		out = append(out, d.link...)
	}
	return out, nil
}

// Priors returns the GPU-level priors for a tensor-parallel group of tp of these GPUs: its
// generation's, with the collectives of the fabric the group uses (CollectiveFabric). A GPU
// without a generation gets none (the generic priors of package param apply) and a note.
func (g *GPU) Priors(tp int) ([]Prior, string) {
	if g.Generation == "" {
		return nil, fmt.Sprintf("GPU %s names no generation: its GPU-level parameters take servesim's generic priors", g.Name)
	}
	ps, err := GenerationPriors(g.Generation, g.CollectiveFabric(tp).Kind)
	if err != nil {
		return nil, err.Error()
	}
	if g.RatedPowerW > 0 && g.PowerW > 0 && g.PowerW < g.RatedPowerW {
		// A card capped below its rating: the core clock about as the cube root of the power.
		r := math.Cbrt(g.PowerW / g.RatedPowerW)
		for i := range ps {
			if ps[i].ID == param.ComputePowerRatio {
				ps[i] = Prior{param.ComputePowerRatio, r, max(r-0.15, 0.6), min(r+0.1, 1),
					fmt.Sprintf("capped at %g W of its %g W rating: the sustained core clock about (%g/%g)^(1/3) = %.3f of the rated boost (dynamic power about as the cube of the clock); fitted per card edition", g.PowerW, g.RatedPowerW, g.PowerW, g.RatedPowerW, r)}
			}
		}
	}
	return ps, ""
}

// Label is the generation's name for people ("Hopper (H100, H200, H20)").
func (g Generation) Label() string {
	if d, ok := generationDef(g); ok {
		return d.label
	}
	return string(g)
}
