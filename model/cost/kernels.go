package cost

import (
	"math"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

// Kernels is one GPU's kernel-level times under a parameter set: the formulas the step model adds
// up, exported so that they can be checked one kernel at a time against profiles (package
// kernels, `servesim kernels`). Immutable after NewKernels.
type Kernels struct {
	gpu hardware.GPU
	p   param.Values
	bw  float64 // achieved streaming bandwidth, bytes/s (peak x mem_bw_eff)
}

// NewKernels prepares the kernel formulas of g under p.
// The compute peaks are the catalog's scaled by compute_power_ratio (the clock the card sustains
// at its board power); the bandwidth is not.
func NewKernels(g *hardware.GPU, p *param.Values) *Kernels {
	k := &Kernels{gpu: *g, p: *p, bw: g.BandwidthBytesPerS() * p[param.MemBWEff]}
	if r := p[param.ComputePowerRatio]; r > 0 && r != 1 {
		k.gpu.BF16TFLOPS *= r
		k.gpu.FP8TFLOPS *= r
		k.gpu.FP4TFLOPS *= r
	}
	return k
}

// GPU is the GPU as the kernels run it: the catalog's entry with its compute peaks at the
// sustained clock (compute_power_ratio).
func (k *Kernels) GPU() *hardware.GPU { return &k.gpu }

// BandwidthBytesPerS is the achieved streaming bandwidth (peak x mem_bw_eff).
func (k *Kernels) BandwidthBytesPerS() float64 { return k.bw }

// GEMMRate is the achieved FLOP/s of a large GEMM whose weights are stored in dt: the dense peak
// of the class it runs at on this GPU times that class's efficiency (gemm_eff_bf16, _fp8 or
// _fp4); a weight-only path (the GPU has no tensor cores for the format: Marlin, triton)
// dequantises to bf16 and runs at the bf16 rate times dequant_eff.
func (k *Kernels) GEMMRate(dt arch.DType) float64 {
	class, weightOnly := k.gpu.GEMMClass(dt)
	var r float64
	switch class {
	case arch.NVFP4:
		r = k.gpu.FP4TFLOPS * 1e12 * k.p[param.GEMMEffFP4]
	case arch.FP8:
		r = k.gpu.FP8TFLOPS * 1e12 * k.p[param.GEMMEffFP8]
	default:
		r = k.gpu.BF16TFLOPS * 1e12 * k.p[param.GEMMEffBF16]
	}
	if weightOnly {
		r *= k.p[param.DequantEff]
	}
	return r
}

// GEMMBandwidth is the weight bandwidth of a memory-bound GEMM whose weights are stored in dt:
// the achieved streaming bandwidth, times gemm_bw_eff_fp8 for fp8 weights with fine-grained
// (group or block) scales that run on the fp8 tensor cores (DeepGEMM-class kernels: on a GPU
// without block-scaled MMA instructions the scales are applied on the CUDA cores, and
// decode-sized shapes leave SMs idle; DeepGEMM's published small-M rows reach 45-80 % of the
// H800's peak bandwidth).
func (k *Kernels) GEMMBandwidth(dt arch.DType) float64 {
	if blockScaledFP8(&k.gpu, dt) {
		return k.bw * k.p[param.GEMMBWEffFP8]
	}
	return k.bw
}

// blockScaledFP8 reports whether weights in dt run on g's fp8 tensor cores with group or block
// scales (not per tensor or per row).
func blockScaledFP8(g *hardware.GPU, dt arch.DType) bool {
	f, err := dt.Format()
	if err != nil || f.Compute != arch.FP8 || f.GroupBytesPerParam == 0 {
		return false
	}
	class, weightOnly := g.GEMMClass(dt)
	return class == arch.FP8 && !weightOnly
}

// newGEMM is a set of params weights stored in dt, with the bandwidth and rate it runs at.
func (k *Kernels) newGEMM(dt arch.DType, params float64) gemm {
	return gemm{bytes: params * dt.BytesPerParam(), params: params, rate: k.GEMMRate(dt), bw: k.GEMMBandwidth(dt)}
}

// SmallM is the fraction of the large-M efficiency a GEMM with m rows and weights of
// bytesPerParam bytes reaches: m / (m + h), a saturating curve fitted to small-M fp16 GEMM
// profiles (Vidur), with h = gemm_half_m for 16-bit weights and gemm_half_m x bytesPerParam / 2
// for narrower ones. The curve carries the GEMM's transition from the memory roof to the compute
// roof; a format with fewer bytes per weight reaches its memory roof at proportionally fewer
// rows, so its curve is scaled with its arithmetic intensity (an assumption: the profiles are
// fp16 only).
func (k *Kernels) SmallM(m, bytesPerParam float64) float64 {
	h := k.p[param.GEMMHalfM] * math.Min(bytesPerParam, 2) / 2
	return m / (m + h)
}

// roof is the roofline time of a GEMM reading bytes of weights (params of them) at bandwidth bw
// and doing 2 m params FLOPs at rate x SmallM (Williams, Waterman and Patterson, "Roofline", CACM
// 2009): the two sides.
func (k *Kernels) roof(bytes, params, rate, bw, m float64) (bytesSeconds, flopsSeconds float64) {
	return bytes / bw, 2 * m * params / (rate * k.SmallM(m, bytes/params))
}

// KernelFixedSeconds is the fixed time of one GEMM or attention kernel (kernel_fixed_us).
func (k *Kernels) KernelFixedSeconds() float64 { return k.p[param.KernelFixedUS] * 1e-6 }

// ElementwiseFixedSeconds is the fixed time of one small elementwise kernel: kernel_fixed_us x
// elementwise_fixed_ratio.
func (k *Kernels) ElementwiseFixedSeconds() float64 {
	return k.p[param.KernelFixedUS] * k.p[param.ElementwiseFixedRatio] * 1e-6
}

// SmallKernelSeconds is the fixed time of the small kernels a's decoder layers launch per step
// (arch.Arch.ElementwiseKernels: norms, rotary, cache writes, routing, and the activation
// quantisation of GEMMs that run on this GPU's fp8 or fp4 tensor cores).
func (k *Kernels) SmallKernelSeconds(a *arch.Arch) float64 {
	quantizes := func(dt arch.DType) bool {
		if dt == "" {
			return false
		}
		class, weightOnly := k.gpu.GEMMClass(dt)
		return class != arch.BF16 && !weightOnly
	}
	return float64(a.ElementwiseKernels(quantizes)) * k.ElementwiseFixedSeconds()
}

// GEMMSeconds is one GEMM kernel: m rows times a weight matrix of params weights stored in dt,
// kernel_fixed_us + max(weight bytes / GEMMBandwidth, 2 m params / (GEMMRate x SmallM(m))).
func (k *Kernels) GEMMSeconds(m, params float64, dt arch.DType) float64 {
	if m <= 0 || params <= 0 {
		return 0
	}
	b, f := k.roof(params*dt.BytesPerParam(), params, k.GEMMRate(dt), k.GEMMBandwidth(dt), m)
	return k.KernelFixedSeconds() + math.Max(b, f)
}

// ElementwiseSeconds is a memory-bound elementwise kernel moving bytes (reads plus writes), at
// elementwise_eff of the achieved streaming bandwidth.
func (k *Kernels) ElementwiseSeconds(bytes float64) float64 {
	return bytes / (k.bw * k.p[param.ElementwiseEff])
}

// Custom all-reduce limits (vLLM vllm/distributed/device_communicators/custom_all_reduce.py:
// max_size 8 MiB; csrc/custom_all_reduce.cuh: one-shot for 2 ranks, or below 512 KiB on up to 4
// and 256 KiB on up to 8 fully connected ranks, else two-shot).
const (
	CustomARMaxBytes = 8 << 20
)

func customOneShot(ranks int, bytes float64) bool {
	return ranks == 2 || (ranks <= 4 && bytes < 512<<10) || (ranks <= 8 && bytes < 256<<10)
}

// NCCLSmallMaxBytes is where NCCL leaves its low-latency protocol for an all-reduce: in Vidur's
// H100 pairwise-NVLink profile at 4 ranks (cross-pair traffic over PCIe 5.0) the time runs from
// 28 us at 2 KB to 48 us at 632,832 bytes and jumps to 67 us at 641,024 bytes, then grows along
// the large messages' line (intercept about 48 us).
const NCCLSmallMaxBytes = 640 << 10

// NCCLAllReduceSeconds is one NCCL all-reduce of bytes among ranks GPUs: its fixed time
// (nccl_small_latency_us below NCCLSmallMaxBytes, nccl_latency_us from it) plus the ring's
// 2 (n - 1) / n of the message through each rank's link at nccl_bw_eff of the fabric's bandwidth
// (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations",
// JPDC 2009; NCCL's bus bandwidth).
func (k *Kernels) NCCLAllReduceSeconds(ranks int, bytes float64) float64 {
	if ranks <= 1 || bytes <= 0 {
		return 0
	}
	n := float64(ranks)
	f := k.gpu.CollectiveFabric(ranks)
	return k.ncclFixedSeconds(bytes) + bytes*2*(n-1)/n/(f.BytesPerS*k.p[param.NCCLBWEff])
}

// ncclFixedSeconds is the fixed time of an NCCL all-reduce of bytes: nccl_small_latency_us below
// NCCLSmallMaxBytes (its low-latency protocol), nccl_latency_us from there.
func (k *Kernels) ncclFixedSeconds(bytes float64) float64 {
	if bytes < NCCLSmallMaxBytes {
		return k.p[param.NCCLSmallLatencyUS] * 1e-6
	}
	return k.p[param.NCCLLatencyUS] * 1e-6
}

// CustomAllReduceSeconds is one all-reduce of bytes (at most CustomARMaxBytes) with vLLM's custom
// kernel: custom_ar_latency_us plus the bytes each rank reads, every peer's whole buffer in
// one-shot mode ((n - 1) x bytes) or 2 (n - 1) / n of it in two-shot mode, at custom_ar_bw_eff of
// the link.
func (k *Kernels) CustomAllReduceSeconds(ranks int, bytes float64) float64 {
	if ranks <= 1 || bytes <= 0 {
		return 0
	}
	n := float64(ranks)
	moved := 2 * (n - 1) / n * bytes
	if customOneShot(ranks, bytes) {
		moved = (n - 1) * bytes
	}
	f := k.gpu.CollectiveFabric(ranks)
	return k.p[param.CustomARLatencyUS]*1e-6 + moved/(f.BytesPerS*k.p[param.CustomARBWEff])
}

// AllReduceSeconds is one tensor-parallel all-reduce of bytes as vLLM runs it: the custom kernel
// when it is enabled and the message fits its buffer, else NCCL.
func (k *Kernels) AllReduceSeconds(ranks int, bytes float64, custom bool) float64 {
	if custom && bytes <= CustomARMaxBytes {
		return k.CustomAllReduceSeconds(ranks, bytes)
	}
	return k.NCCLAllReduceSeconds(ranks, bytes)
}

// AllGatherSeconds is one NCCL all-gather leaving bytes (the gathered whole) on every rank: half
// an all-reduce's fixed time for the same bytes and (n - 1) / n of the bytes through each link.
func (k *Kernels) AllGatherSeconds(ranks int, bytes float64) float64 {
	return k.AllGatherAcross(ranks, ranks, bytes)
}

// AllGatherAcross is AllGatherSeconds for a group of ranks GPUs spread over gpus GPUs (the
// data-parallel ranks of one tensor-parallel rank: their fabric is that of all gpus GPUs). An
// NCCL reduce-scatter of the same whole moves the same bytes through each link and is priced
// alike.
func (k *Kernels) AllGatherAcross(ranks, gpus int, bytes float64) float64 {
	if ranks <= 1 || bytes <= 0 {
		return 0
	}
	n := float64(ranks)
	f := k.gpu.CollectiveFabric(gpus)
	return k.ncclFixedSeconds(bytes)/2 + bytes*(n-1)/n/(f.BytesPerS*k.p[param.NCCLBWEff])
}

// AllToAllSeconds is one all-to-all among ranks GPUs spread over gpus GPUs in which every rank
// holds bytes and sends the (n - 1) / n of them that belong to its peers (an expert-parallel
// dispatch or combine), as concurrent point-to-point transfers to every peer (NCCL's grouped
// send/recv): SendRecvSeconds' model, a copy kernel's fixed time and the bytes leaving each rank
// at nccl_bw_eff of the fabric. An assumption: no all-to-all profile checks it (DeepEP's and
// NIXL's kernels are not NCCL's).
func (k *Kernels) AllToAllSeconds(ranks, gpus int, bytes float64) float64 {
	if ranks <= 1 {
		return 0
	}
	n := float64(ranks)
	return k.SendRecvAcross(gpus, bytes*(n-1)/n)
}

// SendRecvSeconds is one NCCL point-to-point transfer of bytes between two GPUs of one fabric:
// a copy kernel (its fixed time) moving the bytes at nccl_bw_eff of the link.
func (k *Kernels) SendRecvSeconds(bytes float64) float64 {
	return k.SendRecvAcross(2, bytes)
}

// SendRecvAcross is SendRecvSeconds between two GPUs of a group of gpus GPUs (a pipeline's
// stages: over the GPU link when the group fits in one link domain, else PCIe).
func (k *Kernels) SendRecvAcross(gpus int, bytes float64) float64 {
	if bytes <= 0 {
		return 0
	}
	f := k.gpu.CollectiveFabric(gpus)
	return k.KernelFixedSeconds() + bytes/(f.BytesPerS*k.p[param.NCCLBWEff])
}
