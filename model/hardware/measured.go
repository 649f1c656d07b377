package hardware

// MeasuredData names the measured data a generation's GPU-level priors rest on: Vidur's kernel
// profiles for Hopper (H100) and Ampere (A100), fitted by servesim kernels --fit. The other
// generations' priors are published peak figures and the nearest profiled generation's values
// with wider intervals: "" (no measured data supports them; a calibration on one of their GPUs,
// such as the seed's on RTX PRO 6000 Server, does, through its calibrated or transferred values).
func (g Generation) MeasuredData() string {
	switch g {
	case GenHopper:
		return "Vidur H100 kernel profiles (GEMM, elementwise, NCCL over NVLink and PCIe)"
	case GenAmpere:
		return "Vidur A100 kernel profiles (GEMM, elementwise, NCCL over NVLink and PCIe)"
	}
	return ""
}
