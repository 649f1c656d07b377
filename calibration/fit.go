package calibration

import (
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
	"github.com/servesim/servesim/protocol"
)

// Problem is what to fit: a deployment and protocol, the measured matrix, the starting
// parameters, which of them are free, and which cells train the fit.
type Problem struct {
	Deployment *deploy.Deployment
	Protocol   *protocol.Protocol
	Measured   *matrix.Matrix
	// Base is the starting point; parameters not in Free keep these values.
	Base param.Values
	// Free lists the fitted parameters; nil means DefaultFree.
	Free []param.ID
	// Train selects the training cells; the empty filter trains on every cell.
	Train Filter
	// Exclude lists measured cells the fit neither trains on nor judges: measurement outliers
	// such as a first-use warm-up no model of the steady engine should chase. A cell matching
	// any of the filters is excluded; Report.Excluded gives the errors on them.
	Exclude []Filter
	// KVTokens, when positive, is a measured kv_cache_size_tokens: the memory terms are fitted to
	// reproduce it.
	KVTokens int
	// Seed for the simulations' acceptance draws.
	Seed uint64
	// StepByStep simulates step by step (sim.Server.StepByStep).
	StepByStep bool
}

// Settings control the optimiser. The zero value means defaults.
type Settings struct {
	// Method: "lm" (Levenberg-Marquardt on the residual vector, default), "bfgs" (gonum's
	// quasi-Newton method on numeric gradients) or "nelder-mead" (gonum's simplex search).
	Method string
	// Starts is the number of seeded starting points (the first is Base); default DefaultStarts.
	Starts int
	// MaxIter bounds the iterations per start; default 12 (lm, bfgs) or 40 x free (nelder-mead).
	MaxIter int
	// Workers run simulations in parallel; default GOMAXPROCS.
	Workers int
	// Seed drives the random starting points.
	Seed    uint64
	Weights *Weights
	// Step is the forward-difference step in the unconstrained coordinates; default 0.05.
	Step float64
	// Progress, if set, is called after each batch of simulations.
	Progress func(Progress)
}

// Progress is a snapshot of a running fit.
type Progress struct {
	Stage       string
	Evaluations int
	Best        float64
	Elapsed     time.Duration
}

// Result is a finished fit.
type Result struct {
	Params     param.Values
	Free       []param.ID
	Report     Report
	Predicted  *matrix.Matrix // every cell, at the optimum
	Comparison *matrix.Comparison
	Elapsed    time.Duration
}

// excluded reports whether the cell matches one of the exclusion filters.
func (p *Problem) excluded(c *matrix.Cell) bool {
	for i := range p.Exclude {
		if p.Exclude[i].Match(c) {
			return true
		}
	}
	return false
}

// trains reports whether the cell is a training cell: selected by Train and not excluded.
func (p *Problem) trains(c *matrix.Cell) bool { return p.Train.Match(c) && !p.excluded(c) }

// DefaultFree chooses the parameters a fit moves for a deployment and a training set: the
// step-time efficiencies and overheads that the measurements can see. At the gpu level: the
// streaming bandwidth, the GEMM efficiency of each class the model's weights run at on this GPU
// (bf16, fp8, fp4; dequant_eff for weight-only formats) and its small-M curve, decode and
// prefill attention, the indexer for sparse MLA and the linear-attention scan for hybrid models,
// and with TP > 1 the all-reduce vLLM uses (its custom kernel or NCCL: latency and bandwidth).
// The kernels' fixed time is fitted beside the step overhead: both are paid once per step, but
// the kernels' share grows with the kernels a step runs (the drafter's only in emitting steps),
// and it is what transfers to other models on the GPU. act_passes, the model's elementwise work
// beyond what its architecture counts, stays at its prior (one GPU's measurements cannot tell
// it from elementwise_eff, which is fitted). Engine
// level: the step overhead and the API server's costs; the CPU's only without async scheduling
// (else hidden). Model level: the routing concentration of the measurement's prompts for MoE
// models (routing_alpha_same_prompt for the llm-inference-bench matrix, whose cells send one
// prompt; routing_alpha for workloads with different prompts); acceptance with speculative
// decoding. Memory terms only when a measured kv_cache_size_tokens pins them (non_torch_gib).
func DefaultFree(p *Problem) []param.ID {
	return defaultFree(p.Deployment, p.KVTokens, true)
}

func defaultFree(d *deploy.Deployment, kvTokens int, samePrompt bool) []param.ID {
	free := []param.ID{param.MemBWEff}
	classes := map[param.ID]bool{}
	for _, a := range []*arch.Arch{d.Model, d.Drafter} {
		if a == nil {
			continue
		}
		for _, dt := range a.WeightDTypes() {
			class, weightOnly := d.Hardware.GPU.GEMMClass(dt)
			switch {
			case class == arch.NVFP4:
				classes[param.GEMMEffFP4] = true
			case class == arch.FP8:
				classes[param.GEMMEffFP8] = true
			default:
				classes[param.GEMMEffBF16] = true
			}
			if weightOnly {
				classes[param.DequantEff] = true
			}
		}
	}
	for _, id := range []param.ID{param.GEMMEffBF16, param.GEMMEffFP8, param.GEMMEffFP4, param.DequantEff} {
		if classes[id] {
			free = append(free, id)
		}
	}
	free = append(free, param.GEMMHalfM, param.KernelFixedUS, param.AttnDecodeEff, param.AttnPrefillEff)
	if d.Hardware.GPU.PowerLimited() {
		free = append(free, param.ComputePowerRatio)
	}
	if d.Model.HasKind(arch.AttnSparseMLA) {
		free = append(free, param.IndexerEff)
	}
	if d.Model.HasKind(arch.AttnLinear) {
		free = append(free, param.LinearAttnEff)
	}
	if d.Engine.TensorParallel > 1 {
		if custom, _ := d.CustomAllReduce(); custom {
			free = append(free, param.CustomARLatencyUS, param.CustomARBWEff)
		} else {
			free = append(free, param.NCCLLatencyUS, param.NCCLBWEff, param.NCCLSmallLatencyUS)
		}
	}
	free = append(free, param.StepOverheadUS, param.FrontendUSPerTok, param.FrontendMSPerReq)
	if !d.Engine.AsyncScheduling {
		free = append(free, param.CPUStepUS, param.CPUPerReqUS)
	}
	if d.Model.HasKind(arch.AttnLinear) && d.Engine.PrefixCaching {
		free = append(free, param.StatePageScale)
	}
	if kvTokens > 0 {
		free = append(free, param.NonTorchGiB)
	}
	free = append(free, param.ElementwiseEff)
	if d.Model.IsMoE() {
		if samePrompt {
			free = append(free, param.RoutingAlphaSame)
		} else {
			free = append(free, param.RoutingAlpha)
		}
	}
	return append(free, acceptanceFree(d)...)
}

// acceptanceFree is what a fit can move of the deployment's speculative acceptance: the
// parameters deploy.Deployment.Acceptance reads. DFlash runs at accept_tau and accept_decay with
// the output's opening and late changes; a measured mean acceptance length leaves only the
// shape (accept_decay); measured per-position rates leave nothing, and so do the other methods,
// which run at their method's prior or the scenario's measured acceptance.
func acceptanceFree(d *deploy.Deployment) []param.ID {
	s := &d.Engine.Speculative
	switch {
	case s.Enabled() && s.Method == "mtp" && s.MeanAcceptanceLength == 0 && len(s.Acceptance) != d.Engine.SpecTokens():
		return []param.ID{param.MTPAcceptTau}
	case !s.Enabled() || s.Method != "dflash" || len(s.Acceptance) == d.Engine.SpecTokens():
		return nil
	case s.MeanAcceptanceLength > 0:
		return []param.ID{param.AcceptDecay}
	}
	return []param.ID{param.AcceptTau, param.AcceptDecay, param.AcceptLateRatio, param.AcceptSwitchTokens, param.AcceptOpenRatio, param.AcceptOpenTokens}
}

// ScanPoints is the grid a scanned parameter (param.Def.Scan) is chosen on: evenly spaced in the
// fit's coordinates (t in (0, 1) of the log or linear range), ScanPoints of them.
const ScanPoints = 48

// DefaultStarts is the number of seeded starting points of a fit by default.
const DefaultStarts = 4

// MaxFree is the largest number of fitted parameters allowed.
const MaxFree = 24

// ErrNoTrainingCells is returned when the filter leaves nothing to fit.
var ErrNoTrainingCells = errors.New("the training filter selects no measured cells")

// Fit moves the free parameters to minimise the weighted squared log errors of the training cells
// (plus status penalties), then reports the fit on training and test cells.
func Fit(p *Problem, s *Settings) (*Result, error) {
	free := p.Free
	if free == nil {
		free = DefaultFree(p)
	}
	prior, _ := priors.Of(p.Deployment)
	f, err := newFitSetup(s, p.Base, free, prior)
	if err != nil {
		return nil, err
	}
	st, w := &f.st, f.w
	ev := newEvaluator(p, w, st.Workers)
	if len(ev.train) == 0 {
		return nil, ErrNoTrainingCells
	}
	best, err := searchWith[outcome](f, ev, f.vc.toU(p.Base))
	if err != nil {
		return nil, err
	}
	res := &Result{Params: f.vc.params(best.u), Free: free}
	// Every cell at the optimum, for train and test errors, and under the deployment's priors
	// (the reference a fit should improve on; not counted as an evaluation of the fit).
	outs := ev.simulate([]param.Values{res.Params, prior})
	if outs[0].err != nil {
		return nil, fmt.Errorf("fitted parameters do not give a runnable server: %w", outs[0].err)
	}
	res.Predicted = outs[0].matrix
	res.Comparison = matrix.Compare(res.Predicted, p.Measured)
	rep := &res.Report
	rep.NParameters = len(free)
	rep.Parameters = f.estimates(res.Params, &best)
	rep.Train = CellErrors(res.Predicted, p.Measured, p.trains)
	rep.TrainFilter = p.Train.String()
	if !p.Train.Empty() {
		t := CellErrors(res.Predicted, p.Measured, func(c *matrix.Cell) bool { return !p.Train.Match(c) && !p.excluded(c) })
		rep.Test = &t
	}
	if len(p.Exclude) > 0 {
		x := CellErrors(res.Predicted, p.Measured, p.excluded)
		rep.Excluded = &x
		for i := range p.Exclude {
			rep.ExcludeFilters = append(rep.ExcludeFilters, p.Exclude[i].String())
		}
	}
	if outs[1].err == nil {
		pe := CellErrors(outs[1].matrix, p.Measured, p.trains)
		rep.Priors = &pe
		rep.Warnings = append(rep.Warnings, WorseThanPriors(&rep.Train, &pe, "training cells")...)
	}
	rep.Warnings = append(rep.Warnings, FarFromPrior(rep.Parameters)...)
	rep.Worst = worstCells(res.Comparison, 8)
	rep.Loss = best.loss
	rep.Evaluations = ev.evals - 1 // the priors' reference run
	rep.Starts = st.Starts
	rep.Seed = st.Seed
	rep.Converged = best.conv
	rep.Status = best.why
	rep.KVTokens = p.KVTokens
	res.Elapsed = time.Since(f.start)
	return res, nil
}

func iterOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// jacobian returns J (residuals x free) by forward differences, and the residuals at u. All
// len(u)+1 simulations run as one parallel batch.
func jacobian(u []float64, resid func([][]float64) [][]float64, h float64) (*mat.Dense, []float64) {
	n := len(u)
	us := make([][]float64, n+1)
	us[0] = u
	for i := 0; i < n; i++ {
		v := append([]float64(nil), u...)
		v[i] += h
		us[i+1] = v
	}
	rs := resid(us)
	m := len(rs[0])
	J := mat.NewDense(m, n, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < m; k++ {
			J.Set(k, i, (rs[i+1][k]-rs[0][k])/h)
		}
	}
	return J, rs[0]
}

// levenbergMarquardt minimises |r(u)|^2. Each iteration takes one Jacobian (a parallel batch of
// len(u)+1 simulations) and tries three damping values in one more batch.
func levenbergMarquardt(u []float64, resid func([][]float64) [][]float64, h float64, maxIter int, report func(float64)) ([]float64, float64, bool, string) {
	jac := func(u []float64) (*mat.Dense, []float64) { return jacobian(u, resid, h) }
	J, r := jac(u)
	u, loss, conv, why, _ := lmFrom(u, J, r, resid, jac, maxIter, report)
	return u, loss, conv, why
}

// lmFrom is the Levenberg-Marquardt loop from u with its Jacobian J and residuals r already
// computed; jac gives the Jacobian at a new point (a multi-source fit computes it column by
// column from the simulations each parameter touches). It also returns the last Jacobian.
func lmFrom(u []float64, J *mat.Dense, r []float64, resid func([][]float64) [][]float64, jac func([]float64) (*mat.Dense, []float64),
	maxIter int, report func(float64)) ([]float64, float64, bool, string, *mat.Dense) {
	n := len(u)
	lambda := 1e-2
	loss := sumSq(r)
	report(loss)
	for it := 0; it < maxIter; it++ {
		var JtJ mat.Dense
		JtJ.Mul(J.T(), J)
		g := mat.NewVecDense(n, nil)
		g.MulVec(J.T(), mat.NewVecDense(len(r), r))
		lambdas := []float64{lambda, lambda * 10, lambda * 100}
		var trials [][]float64
		for _, l := range lambdas {
			A := mat.NewDense(n, n, nil)
			A.Copy(&JtJ)
			for i := 0; i < n; i++ {
				A.Set(i, i, A.At(i, i)*(1+l)+1e-9)
			}
			var d mat.VecDense
			if err := d.SolveVec(A, g); err != nil {
				continue
			}
			t := make([]float64, n)
			for i := range t {
				step := -d.AtVec(i)
				t[i] = u[i] + math.Max(-2, math.Min(2, step))
			}
			trials = append(trials, t)
		}
		if len(trials) == 0 {
			return u, loss, false, "singular normal equations", J
		}
		rs := resid(trials)
		bi, bl := -1, loss
		for i, rr := range rs {
			if l := sumSq(rr); l < bl {
				bi, bl = i, l
			}
		}
		report(math.Min(bl, loss))
		if bi < 0 {
			lambda *= 1000
			if lambda > 1e6 {
				return u, loss, true, fmt.Sprintf("converged after %d iterations: no damped step improves the loss", it+1), J
			}
			continue
		}
		improve := (loss - bl) / math.Max(loss, 1e-12)
		u, loss = trials[bi], bl
		lambda = math.Max(lambdas[bi]/10, 1e-6)
		if improve < 1e-4 {
			return u, loss, true, fmt.Sprintf("converged after %d iterations: relative improvement %.1e", it+1, improve), J
		}
		if it == maxIter-1 {
			break // no further step: the Jacobian at the last point would not be used
		}
		J, r = jac(u)
	}
	return u, loss, false, fmt.Sprintf("stopped after %d iterations (not converged)", maxIter), J
}

// gonumMinimize runs gonum's BFGS (gradient from the parallel Jacobian: 2 J^T r) or Nelder-Mead.
func gonumMinimize(method string, u []float64, resid func([][]float64) [][]float64, h float64, maxIter int, report func(float64)) ([]float64, float64, bool, string, error) {
	f := func(x []float64) float64 {
		l := sumSq(resid([][]float64{x})[0])
		report(l)
		return l
	}
	prob := optimize.Problem{Func: f}
	var m optimize.Method
	set := &optimize.Settings{Converger: &optimize.FunctionConverge{Relative: 1e-4, Iterations: 5}}
	switch method {
	case "bfgs":
		prob.Grad = func(grad, x []float64) {
			J, r := jacobian(x, resid, h)
			var g mat.VecDense
			g.MulVec(J.T(), mat.NewVecDense(len(r), r))
			for i := range grad {
				grad[i] = 2 * g.AtVec(i)
			}
		}
		m = &optimize.BFGS{}
		set.MajorIterations = iterOr(maxIter, 12)
	default:
		m = &optimize.NelderMead{}
		set.FuncEvaluations = iterOr(maxIter, 40*len(u))
	}
	res, err := optimize.Minimize(prob, u, set, m)
	if res == nil {
		return nil, 0, false, "", fmt.Errorf("%s: %w", method, err)
	}
	conv := err == nil && res.Status != optimize.Failure
	why := res.Status.String()
	if err != nil {
		why += ": " + err.Error()
	}
	return res.X, res.F, conv, why, nil
}

// paramStdErr is the standard error of each free coordinate: sqrt(diag(s^2 (J^T J)^-1)) with
// s^2 = |r|^2 / (m - n) over the residuals that carry information. -1 where J^T J is singular.
func paramStdErr(J *mat.Dense, r []float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = -1
	}
	m := 0
	for _, v := range r {
		if v != 0 {
			m++
		}
	}
	if m <= n {
		return out
	}
	s2 := sumSq(r) / float64(m-n)
	var JtJ mat.Dense
	JtJ.Mul(J.T(), J)
	// Parameters the residuals do not see (zero columns) have no standard error; the rest come from
	// the pseudo-inverse of J^T J restricted to them.
	var keep []int
	for i := 0; i < n; i++ {
		if JtJ.At(i, i) > 1e-12 {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		return out
	}
	sub := mat.NewSymDense(len(keep), nil)
	for a, i := range keep {
		for b, j := range keep {
			sub.SetSym(a, b, JtJ.At(i, j))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sub, true) {
		return out
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	maxv := 0.0
	for _, v := range vals {
		maxv = math.Max(maxv, v)
	}
	for a, i := range keep {
		v := 0.0
		for k, lam := range vals {
			if lam > maxv*1e-10 {
				e := vecs.At(a, k)
				v += e * e / lam
			}
		}
		out[i] = math.Sqrt(v * s2)
	}
	return out
}
