package kernels

import (
	"fmt"
	"github.com/servesim/servesim/internal/stats"
	"math"
	"sort"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

// GPUFor names the catalog GPU of a Vidur profile folder: compute SKUs (h100, a100) and network
// nodes (h100_dgx, a100_dgx: 8 NVSwitch-connected SXM GPUs; h100_pairwise_nvlink: 4 H100 NVL
// with bridged pairs; a100_pairwise_nvlink: 4 A100 80 GB PCIe with bridged pairs).
func GPUFor(folder string) (string, bool) {
	switch folder {
	case "h100", "h100_dgx":
		return "H100-SXM", true
	case "a100", "a100_dgx":
		return "A100-SXM-80GB", true
	case "h100_pairwise_nvlink":
		return "H100-NVL", true
	case "a100_pairwise_nvlink":
		return "A100-PCIe-80GB", true
	}
	return "", false
}

// Point is one measured kernel time beside servesim's prediction.
type Point struct {
	Group     string // compute SKU or network node
	Model     string // compute: org/name; network: the collective
	Op        string // compute operator, or all_reduce / send_recv
	Tokens    int    // compute: rows; network: 0
	TP        int    // compute: TP degree; network: GPUs taking part
	Bytes     float64
	Measured  float64 // seconds
	Predicted float64 // seconds
}

// APE is the absolute percentage error of the prediction, as a fraction.
func (p *Point) APE() float64 { return math.Abs(p.Predicted/p.Measured - 1) }

// Options choose what Check predicts with.
type Options struct {
	// Catalog names the GPUs (nil: the built-in catalog).
	Catalog *hardware.Catalog
	// Override, when non-nil, is applied after the GPU generation's priors (a fitted or user
	// parameter set; only its entries with Set true count).
	Override *Override
}

// Override is a partial parameter set.
type Override struct {
	Values param.Values
	Set    [param.Count]bool
}

// Params returns the parameters Check uses for GPU g with ranks GPUs in a group: the generic
// priors, the GPU generation's priors for the group's fabric, then the override.
func (o *Options) Params(g *hardware.GPU, ranks int) param.Values {
	p := param.Priors()
	ps, _ := g.Priors(ranks)
	for _, x := range ps {
		p[x.ID] = x.Value
	}
	if o.Override != nil {
		for i, set := range o.Override.Set {
			if set {
				p[i] = o.Override.Values[i]
			}
		}
	}
	return p
}

func (o *Options) gpu(folder string) (*hardware.GPU, error) {
	name, ok := GPUFor(folder)
	if !ok {
		return nil, fmt.Errorf("no catalog GPU for Vidur profile %q", folder)
	}
	c := o.Catalog
	if c == nil {
		c = hardware.BuiltinCatalog()
	}
	g, err := c.Find(name)
	if err != nil {
		return nil, err
	}
	return &g, nil
}

// computeSeconds predicts one operator of a compute row with kernels k (fp16 weights and
// activations, as Vidur profiles them):
//
//	attn_pre_proj   hidden x (heads + 2 kv_heads) head_dim / tp weights
//	attn_post_proj  heads head_dim / tp x hidden
//	mlp_up_proj     hidden x (2 if gated) intermediate / tp
//	mlp_down_proj   intermediate / tp x hidden
//	mlp_act         elementwise: read (2 if gated) and write one intermediate / tp per token
//	norms           elementwise: read and write hidden
//	add             elementwise: read two and write one hidden
//	attn_rope       elementwise: read and write q and k, (heads + kv_heads) head_dim / tp
//
// GEMMs are cost.Kernels.GEMMSeconds (with the kernel's fixed time), elementwise operators
// cost.Kernels.ElementwiseSeconds, each at 2 bytes per value. ok is false for an operator it
// does not predict (emb).
func computeSeconds(k *cost.Kernels, r *ComputeRow, op string) (float64, bool) {
	s := &r.Shape
	m := float64(r.Tokens)
	tp := float64(r.TP)
	hd := float64(s.Hidden) / float64(s.Heads)
	h := float64(s.Hidden)
	up := float64(s.Intermediate) / tp
	if s.Gated {
		up *= 2
	}
	switch op {
	case "attn_pre_proj":
		return k.GEMMSeconds(m, h*float64(s.Heads+2*s.KVHeads)*hd/tp, arch.FP16), true
	case "attn_post_proj":
		return k.GEMMSeconds(m, float64(s.Heads)*hd/tp*h, arch.FP16), true
	case "mlp_up_proj":
		return k.GEMMSeconds(m, h*up, arch.FP16), true
	case "mlp_down_proj":
		return k.GEMMSeconds(m, float64(s.Intermediate)/tp*h, arch.FP16), true
	case "mlp_act":
		return k.ElementwiseSeconds(m * (up + float64(s.Intermediate)/tp) * 2), true
	case "input_layernorm", "post_attention_layernorm":
		return k.ElementwiseSeconds(m * h * 2 * 2), true
	case "add":
		return k.ElementwiseSeconds(m * h * 3 * 2), true
	case "attn_rope":
		return k.ElementwiseSeconds(m * float64(s.Heads+s.KVHeads) * hd / tp * 2 * 2), true
	}
	return 0, false
}

// Check predicts every profiled kernel: each compute operator at its token count and TP degree
// on the profile's GPU, every single-node collective (multi-node rows, which cross InfiniBand,
// are skipped) with the parameters of its GPU and group size (Options.Params).
func Check(p *Profiles, o Options) ([]Point, error) {
	var out []Point
	kern := map[string]*cost.Kernels{}
	kernFor := func(folder string, ranks int) (*cost.Kernels, error) {
		key := fmt.Sprintf("%s/%d", folder, ranks)
		if k, ok := kern[key]; ok {
			return k, nil
		}
		g, err := o.gpu(folder)
		if err != nil {
			return nil, err
		}
		prm := o.Params(g, ranks)
		k := cost.NewKernels(g, &prm)
		kern[key] = k
		return k, nil
	}
	for i := range p.Compute {
		r := &p.Compute[i]
		k, err := kernFor(r.SKU, 1)
		if err != nil {
			return nil, err
		}
		for _, op := range ComputeOps() {
			meas, ok := r.Seconds[op]
			if !ok {
				continue
			}
			pred, ok := computeSeconds(k, r, op)
			if !ok {
				continue
			}
			out = append(out, Point{Group: r.SKU, Model: r.Model, Op: op, Tokens: r.Tokens, TP: r.TP, Measured: meas, Predicted: pred})
		}
	}
	for _, r := range p.Network {
		if r.Workers > r.DevicesPerNode {
			continue
		}
		k, err := kernFor(r.Node, r.Workers)
		if err != nil {
			return nil, err
		}
		var pred float64
		switch r.Collective {
		case "all_reduce":
			pred = k.NCCLAllReduceSeconds(r.Workers, r.Bytes)
		case "send_recv":
			pred = k.SendRecvSeconds(r.Bytes)
		default:
			continue
		}
		out = append(out, Point{Group: r.Node, Model: r.Collective, Op: r.Collective, TP: r.Workers, Bytes: r.Bytes, Measured: r.Seconds, Predicted: pred})
	}
	return out, nil
}

// Summary is the error of one group of points.
type Summary struct {
	Key   string
	N     int
	MdAPE float64 // median absolute percentage error, fraction
	MAPE  float64
	Bias  float64 // median of predicted / measured - 1
}

// Summarize groups points by key (points for which key returns "" are left out) and returns the
// groups sorted by key.
func Summarize(pts []Point, key func(*Point) string) []Summary {
	by := map[string][]*Point{}
	for i := range pts {
		if k := key(&pts[i]); k != "" {
			by[k] = append(by[k], &pts[i])
		}
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Summary, 0, len(keys))
	for _, k := range keys {
		ps := by[k]
		apes := make([]float64, len(ps))
		bias := make([]float64, len(ps))
		var sum float64
		for i, p := range ps {
			apes[i] = p.APE()
			bias[i] = p.Predicted/p.Measured - 1
			sum += apes[i]
		}
		out = append(out, Summary{Key: k, N: len(ps), MdAPE: stats.Median(apes), MAPE: sum / float64(len(ps)), Bias: stats.Median(bias)})
	}
	return out
}

// Standard groupings of Report.
func byGroupOp(p *Point) string { return p.Group + " " + p.Op }

func byGEMMTP(p *Point) string {
	if !IsGEMM(p.Op) {
		return ""
	}
	return fmt.Sprintf("%s GEMMs TP%d", p.Group, p.TP)
}

func byGEMM(p *Point) string {
	if !IsGEMM(p.Op) {
		return ""
	}
	return p.Group + " GEMMs (all)"
}

func byGEMMModel(p *Point) string {
	if !IsGEMM(p.Op) {
		return ""
	}
	return fmt.Sprintf("%s GEMMs %s", p.Group, p.Model)
}

func byTokenBand(p *Point) string {
	if !IsGEMM(p.Op) {
		return ""
	}
	band := "   1-16"
	switch {
	case p.Tokens > 1024:
		band = "1025-"
	case p.Tokens > 128:
		band = " 129-1024"
	case p.Tokens > 16:
		band = "  17-128"
	}
	return fmt.Sprintf("%s GEMMs tokens %s", p.Group, band)
}

func byNet(p *Point) string {
	if p.Tokens != 0 || p.Bytes == 0 {
		return ""
	}
	size := "< 1 MB"
	if p.Bytes >= 1<<20 {
		size = ">= 1 MB"
	}
	return fmt.Sprintf("%s %s n=%d %s", p.Group, p.Op, p.TP, size)
}

func byNetLarge(p *Point) string {
	if p.Tokens != 0 || p.Bytes < 1<<20 {
		return ""
	}
	return fmt.Sprintf("%s %s >= 1 MB (all n)", p.Group, p.Op)
}

// Report is the kernel check's tables.
type Report struct {
	Points []Point
	// ByOp: compute operators per SKU and network collectives per node, all sizes.
	ByOp []Summary
	// GEMM: the four GEMM operators per SKU, overall, by model file, by TP degree and by token
	// band.
	GEMM, GEMMByModel, GEMMByTP, GEMMByTokens []Summary
	// Network: per node, collective, group size and size band; NetworkLarge messages >= 1 MB.
	Network, NetworkLarge []Summary
}

// NewReport summarises points.
func NewReport(pts []Point) *Report {
	return &Report{Points: pts, ByOp: Summarize(pts, byGroupOp), GEMM: Summarize(pts, byGEMM), GEMMByModel: Summarize(pts, byGEMMModel), GEMMByTP: Summarize(pts, byGEMMTP),
		GEMMByTokens: Summarize(pts, byTokenBand), Network: Summarize(pts, byNet), NetworkLarge: Summarize(pts, byNetLarge)}
}
