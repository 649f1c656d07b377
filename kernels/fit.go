package kernels

import (
	"fmt"
	"github.com/servesim/servesim/internal/stats"
	"math"
	"sort"

	"gonum.org/v1/gonum/optimize"

	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/model/param"
)

// Fitted is a prior derived from kernel profiles: the parameter values that best reproduce one
// profile folder, and how well.
type Fitted struct {
	Group  string // compute SKU or network node
	GPU    string // catalog GPU
	Values map[param.ID]float64
	N      int     // points fitted
	MdAPE  float64 // median APE at the fitted values
}

// fitLoss is the objective: the sum of absolute log errors (robust, median-seeking).
func fitLoss(pred func(i int) float64, meas []float64) float64 {
	var s float64
	for i, m := range meas {
		s += math.Abs(math.Log(pred(i) / m))
	}
	return s
}

// minimize runs Nelder-Mead from x0 on f, with x mapped through to (bounded parameters), and
// returns the mapped optimum. It is deterministic (gonum's simplex has no randomness).
func minimize(f func(x []float64) float64, x0 []float64) []float64 {
	res, err := optimize.Minimize(optimize.Problem{Func: f}, x0, &optimize.Settings{MajorIterations: 4000, FuncEvaluations: 20000}, &optimize.NelderMead{})
	if err != nil && res == nil {
		return x0
	}
	return res.X
}

// bounded maps an unconstrained u into [lo, hi] (a logistic), and back.
func bounded(u, lo, hi float64) float64 { return lo + (hi-lo)/(1+math.Exp(-u)) }
func unbounded(v, lo, hi float64) float64 {
	t := (v - lo) / (hi - lo)
	t = math.Min(math.Max(t, 1e-6), 1-1e-6)
	return math.Log(t / (1 - t))
}

// FitCompute fits, per compute SKU, the GEMM parameters (mem_bw_eff, gemm_eff_bf16,
// gemm_half_m, kernel_fixed_us) to the four GEMM operators over every token count and TP degree,
// then elementwise_eff to mlp_act and input_layernorm (one norm, so that the activation and the
// norms weigh alike) at the fitted bandwidth (the elementwise kernels
// of vLLM's decoder layer: SiLU-and-mul and RMSNorm with the residual add fused into it, so the
// profiles' separate add is checked but not fitted).
func FitCompute(p *Profiles, o Options) ([]Fitted, error) {
	bySKU := map[string][]int{}
	var skus []string
	for i := range p.Compute {
		s := p.Compute[i].SKU
		if _, ok := bySKU[s]; !ok {
			skus = append(skus, s)
		}
		bySKU[s] = append(bySKU[s], i)
	}
	sort.Strings(skus)
	var out []Fitted
	for _, sku := range skus {
		g, err := o.gpu(sku)
		if err != nil {
			return nil, err
		}
		type obs struct {
			row *ComputeRow
			op  string
		}
		var gemms, elems []obs
		var gm, em []float64
		for _, i := range bySKU[sku] {
			r := &p.Compute[i]
			for _, op := range ComputeOps() {
				v, ok := r.Seconds[op]
				if !ok {
					continue
				}
				switch {
				case IsGEMM(op):
					gemms = append(gemms, obs{r, op})
					gm = append(gm, v)
				case op == "mlp_act" || op == "input_layernorm":
					elems = append(elems, obs{r, op})
					em = append(em, v)
				}
			}
		}
		base := o.Params(g, 1)
		ids := []param.ID{param.MemBWEff, param.GEMMEffBF16, param.GEMMHalfM, param.KernelFixedUS}
		los := []float64{0.5, 0.3, 4, 0.5}
		his := []float64{1.0, 0.95, 1024, 30}
		at := func(u []float64) param.Values {
			q := base
			for j, id := range ids {
				q[id] = bounded(u[j], los[j], his[j])
			}
			return q
		}
		u0 := make([]float64, len(ids))
		for j, id := range ids {
			u0[j] = unbounded(base[id], los[j], his[j])
		}
		u := minimize(func(u []float64) float64 {
			q := at(u)
			k := cost.NewKernels(g, &q)
			return fitLoss(func(i int) float64 { v, _ := computeSeconds(k, gemms[i].row, gemms[i].op); return v }, gm)
		}, u0)
		best := at(u)
		// Elementwise efficiency at the fitted bandwidth.
		ue := minimize(func(x []float64) float64 {
			q := best
			q[param.ElementwiseEff] = bounded(x[0], 0.05, 1.5)
			k := cost.NewKernels(g, &q)
			return fitLoss(func(i int) float64 { v, _ := computeSeconds(k, elems[i].row, elems[i].op); return v }, em)
		}, []float64{0})
		best[param.ElementwiseEff] = bounded(ue[0], 0.05, 1.5)
		k := cost.NewKernels(g, &best)
		apes := make([]float64, len(gemms))
		for i, x := range gemms {
			v, _ := computeSeconds(k, x.row, x.op)
			apes[i] = math.Abs(v/gm[i] - 1)
		}
		f := Fitted{Group: sku, GPU: g.Name, Values: map[param.ID]float64{}, N: len(gemms), MdAPE: stats.Median(apes)}
		for _, id := range append(ids, param.ElementwiseEff) {
			f.Values[id] = best[id]
		}
		out = append(out, f)
	}
	return out, nil
}

// FitNetwork fits, per network node and fabric (the GPU-GPU link inside the node's link domain,
// PCIe beyond it), nccl_latency_us and nccl_bw_eff to its single-node all-reduce rows.
func FitNetwork(p *Profiles, o Options) ([]Fitted, error) {
	type key struct {
		node   string
		fabric string
	}
	by := map[key][]NetRow{}
	var keys []key
	for _, r := range p.Network {
		if r.Collective != "all_reduce" || r.Workers > r.DevicesPerNode {
			continue
		}
		g, err := o.gpu(r.Node)
		if err != nil {
			return nil, err
		}
		k := key{r.Node, string(g.CollectiveFabric(r.Workers).Kind)}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].node != keys[j].node {
			return keys[i].node < keys[j].node
		}
		return keys[i].fabric < keys[j].fabric
	})
	var out []Fitted
	for _, k := range keys {
		rows := by[k]
		g, _ := o.gpu(k.node)
		meas := make([]float64, len(rows))
		for i, r := range rows {
			meas[i] = r.Seconds
		}
		base := o.Params(g, rows[0].Workers)
		at := func(u []float64) param.Values {
			q := base
			q[param.NCCLLatencyUS] = bounded(u[0], 1, 300)
			q[param.NCCLBWEff] = bounded(u[1], 0.05, 1.2)
			q[param.NCCLSmallLatencyUS] = bounded(u[2], 1, 300)
			return q
		}
		u := minimize(func(u []float64) float64 {
			q := at(u)
			kk := cost.NewKernels(g, &q)
			return fitLoss(func(i int) float64 { return kk.NCCLAllReduceSeconds(rows[i].Workers, rows[i].Bytes) }, meas)
		}, []float64{unbounded(base[param.NCCLLatencyUS], 1, 300), unbounded(base[param.NCCLBWEff], 0.05, 1.2), unbounded(base[param.NCCLSmallLatencyUS], 1, 300)})
		best := at(u)
		kk := cost.NewKernels(g, &best)
		apes := make([]float64, len(rows))
		for i, r := range rows {
			apes[i] = math.Abs(kk.NCCLAllReduceSeconds(r.Workers, r.Bytes)/r.Seconds - 1)
		}
		out = append(out, Fitted{Group: fmt.Sprintf("%s (%s)", k.node, k.fabric), GPU: g.Name, N: len(rows), MdAPE: stats.Median(apes),
			Values: map[param.ID]float64{param.NCCLLatencyUS: best[param.NCCLLatencyUS], param.NCCLBWEff: best[param.NCCLBWEff],
				param.NCCLSmallLatencyUS: best[param.NCCLSmallLatencyUS]}})
	}
	return out, nil
}
