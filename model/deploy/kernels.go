package deploy

import (
	"fmt"
	"strings"

	"github.com/servesim/servesim/model/hardware"
)

// CustomAllReduce reports whether vLLM runs the deployment's tensor-parallel all-reduces with its
// custom kernel (for messages up to 8 MiB; NCCL otherwise), and the rule that decided (vLLM
// vllm/distributed/device_communicators/custom_all_reduce.py, CustomAllreduce.__init__): off
// for one rank and with --disable-custom-all-reduce; only for 2, 4, 6 or 8 ranks; on PCIe
// (no NVLink, or a group larger than the NVLink domain) only for 2 ranks ("not supported on more
// than two PCIe-only GPUs").
func (d *Deployment) CustomAllReduce() (bool, string) {
	tp := d.Engine.TensorParallel
	g := &d.Hardware.GPU
	switch {
	case tp <= 1:
		return false, "one rank: no all-reduce"
	case d.Engine.DisableCustomAllReduce:
		return false, "--disable-custom-all-reduce: NCCL"
	case tp != 2 && tp != 4 && tp != 6 && tp != 8:
		return false, fmt.Sprintf("custom all-reduce supports 2, 4, 6 or 8 ranks, not %d: NCCL", tp)
	case g.CollectiveFabric(tp).Kind == "pcie" && tp > 2:
		return false, fmt.Sprintf("%d PCIe-connected ranks: vLLM disables its custom all-reduce on more than two PCIe-only GPUs, NCCL", tp)
	}
	return true, fmt.Sprintf("vLLM's custom all-reduce for messages up to 8 MiB over %s, NCCL above", g.CollectiveFabric(tp).Kind)
}

// SparsePrefillKernel reports whether the deployment's sparse-MLA (DSA) prefill kernel reads the
// cache its queries touch about once, with why. DeepSeek's FlashMLA sparse prefill kernel, which
// vLLM runs on sm90 and sm100 (Hopper, Blackwell datacenter), gathers the top-k latents of a
// chunk's queries through L2 and is compute-bound: about 640 TFLOPS of bf16 on an H800, two-thirds
// of its peak (FlashMLA's README for DeepSeek-V3.2, September 2025). Elsewhere (the sm120
// FlashInfer kernel of the RTX PRO 6000 and RTX 5090, ROCm) a prefill query is taken to gather one
// latent per selected token, as a decode query does: on the seed's GLM-5.3-Flash (sm120), reading
// the touched cache once instead makes the decode cells' tail recomputations 2-3x faster than
// measured (refitted, decode TTFT median APE 7 -> 18 %). An --attention-backend naming a FlashMLA
// kernel, or another, decides instead of the GPU.
func (d *Deployment) SparsePrefillKernel() (once bool, why string) {
	if b := strings.ToUpper(d.Engine.AttentionBackend); b != "" {
		if strings.Contains(b, "FLASHMLA") {
			return true, "attention backend " + d.Engine.AttentionBackend + ": FlashMLA's sparse prefill reads the touched cache about once"
		}
		return false, "attention backend " + d.Engine.AttentionBackend + ": sparse prefill gathers one latent per selected token"
	}
	g := &d.Hardware.GPU
	if g.Vendor != "amd" && (g.Generation == hardware.GenHopper || g.Generation == hardware.GenBlackwell) {
		return true, fmt.Sprintf("%s (%s): vLLM runs FlashMLA's sparse kernels, whose prefill reads the touched cache about once", g.Name, g.Generation.Label())
	}
	return false, fmt.Sprintf("%s (%s): no FlashMLA sparse kernel; sparse prefill gathers one latent per selected token", g.Name, g.Generation.Label())
}

// SparseMLAHeadTile is the number of query heads per rank the deployment's sparse-MLA (DSA)
// kernels compute, at least, with why: FlashMLA's sparse kernels take 64 query heads on sm90
// (Hopper) and 128 on sm100 (Blackwell datacenter), and vLLM pads a rank's heads up to that
// (vLLM vllm/v1/attention/backends/mla/flashmla_sparse.py: "kernel requires num_local_head to be
// a multiple of 64 on hopper and 128 on blackwell"), so GLM-5's 64 heads over TP 8 (8 a rank)
// compute as 64 on an H200. 0 where the kernel is not FlashMLA's (no padding is modelled).
func (d *Deployment) SparseMLAHeadTile() (heads int, why string) {
	once, _ := d.SparsePrefillKernel()
	if !once {
		return 0, "the sparse-MLA kernel is not FlashMLA's: the rank's own heads"
	}
	if d.Hardware.GPU.Generation == hardware.GenBlackwell {
		return 128, "FlashMLA's sparse kernels compute 128 query heads a rank on Blackwell (sm100)"
	}
	return 64, "FlashMLA's sparse kernels compute 64 query heads a rank on Hopper (sm90)"
}
