package planner

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/workload"
)

// A plan file is read back by `plan --from`, `report` and `merge`; none of them may rank or show
// a row on figures the plan could not have produced. checkPlan holds a plan to what Run writes:
// the question behind its fingerprint, every row a configuration of that question's sweep with
// the price its GPUs cost, every figure finite and within what the hardware can do, every
// status the one its figures give, and the ranks, counts and frontier those figures give. What
// can be recomputed is recomputed and compared, never taken from the file.

// checkPlan checks the question and every row of p (read from name). Errors name the file, the
// row and the field.
func (p *Plan) checkPlan(name string) error {
	qi := &p.Question
	if fp := fingerprint(qi); fp != p.Fingerprint {
		return fmt.Errorf("%s: field \"fingerprint\" = %q, but its question gives %q: the question was edited after the plan was made", name, p.Fingerprint, fp)
	}
	gpus := map[string]*hardware.GPU{}
	for i := range qi.GPUs {
		g := &qi.GPUs[i]
		if err := checkGPU(g); err != nil {
			return fmt.Errorf("%s: question.gpus[%d]: %v", name, i, err)
		}
		if gpus[g.Name] != nil {
			return fmt.Errorf("%s: question.gpus[%d]: GPU %q given twice", name, i, g.Name)
		}
		gpus[g.Name] = g
	}
	sp := qi.Space
	sp.Counts = slices.Clone(sp.Counts) // normalize fills lists; the plan's own stay as read
	if err := sp.normalize(); err != nil {
		return fmt.Errorf("%s: question.space: %v", name, err)
	}
	var model *arch.Arch
	if qi.ModelArch != nil {
		a := *qi.ModelArch
		a.Layers = slices.Clone(a.Layers)
		if err := a.Normalize(); err != nil {
			return fmt.Errorf("%s: question.model_arch: %v", name, err)
		}
		model = &a
	}
	if qi.Workload != nil {
		if err := qi.Workload.SLO.Validate(); err != nil {
			return fmt.Errorf("%s: question.workload: %v", name, err)
		}
	}
	for k := range p.Results {
		r := &p.Results[k]
		where := fmt.Sprintf("%s: results[%d] (row %d)", name, k, r.Index)
		if err := checkRow(r, qi, &sp, model, gpus); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
	}
	return nil
}

// checkGPU bounds what the ranking and the physics bounds read of a GPU.
func checkGPU(g *hardware.GPU) error {
	if g.Name == "" {
		return fmt.Errorf("a GPU without a name")
	}
	for _, f := range []struct {
		n string
		v float64
	}{{"PricePerHour", g.PricePerHour}, {"MemoryGiB", g.MemoryGiB}, {"BF16TFLOPS", g.BF16TFLOPS}, {"FP8TFLOPS", g.FP8TFLOPS}, {"FP4TFLOPS", g.FP4TFLOPS}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("GPU %s: field %q = %v: want a finite number >= 0", g.Name, f.n, f.v)
		}
	}
	return nil
}

// fieldErr names a row's field and what was wanted.
func fieldErr(field string, v any, want string, args ...any) error {
	return fmt.Errorf("field %q = %v: %s", field, v, fmt.Sprintf(want, args...))
}

// checkRow checks one row against its question.
func checkRow(r *Result, qi *QuestionInfo, sp *Space, model *arch.Arch, gpus map[string]*hardware.GPU) error {
	c := &r.Config
	g := gpus[c.GPU]
	if g == nil {
		return fieldErr("config.gpu", fmt.Sprintf("%q", c.GPU), "not one of the question's GPUs")
	}
	if err := checkLayoutOf(c, sp, model); err != nil {
		return err
	}
	if want := float64(c.Count) * g.PricePerHour; r.PriceHour != want {
		return fieldErr("usd_per_hour", r.PriceHour, "%d x %s at $%g/h is $%g/h", c.Count, g.Name, g.PricePerHour, want)
	}
	switch r.Scope {
	case "":
		if err := checkFlags(c, sp); err != nil {
			return err
		}
	case "layout":
		if r.Status != StatusPruned {
			return fieldErr("status", fmt.Sprintf("%q", r.Status), "a layout-scope row is one no flags can load: want \"pruned\"")
		}
		if c.KVCacheDType != "" || c.SpecMethod != "" || c.SpecTokens != 0 || c.MaxNumBatchedTokens != 0 || c.MaxNumSeqs != 0 || c.GPUMemoryUtilization != 0 || c.MaxModelLen != 0 {
			return fmt.Errorf("field \"config\": a layout-scope row has no flags (they stand for every value swept)")
		}
	default:
		return fieldErr("scope", fmt.Sprintf("%q", r.Scope), "want \"layout\" or none")
	}
	if r.Current && (qi.Current == nil || !c.sameDeployment(qi.Current)) {
		return fieldErr("current", true, "the row is not the question's current configuration")
	}
	if r.KVTokens < 0 {
		return fieldErr("kv_cache_size_tokens", r.KVTokens, "want a token count >= 0")
	}
	if r.Status == StatusPruned {
		if !slices.Contains(pruneStages(), r.Stage) {
			return fieldErr("stage", fmt.Sprintf("%q", r.Stage), "want one of %v", pruneStages())
		}
		if r.Perf != nil || r.PMeet != nil || r.Queues != nil || len(r.Intervals) > 0 || r.CostPerMTok != 0 {
			return fmt.Errorf("field \"status\" = \"pruned\", but the row has figures (perf, p_meet, queues, intervals or cost): a pruned row was not simulated")
		}
		return nil
	}
	if statusRank(r.Status) > statusRank(StatusQueues) {
		return fieldErr("status", fmt.Sprintf("%q", r.Status), "want ok, marginal, missed, queues or pruned")
	}
	if r.Stage != "" {
		return fieldErr("stage", fmt.Sprintf("%q", r.Stage), "a row that was simulated has no pruning stage")
	}
	if qi.Workload == nil || model == nil {
		return fmt.Errorf("a simulated row, but the plan's question has no workload or model description")
	}
	if r.Perf == nil {
		return fmt.Errorf("field \"perf\": missing for a %s row", r.Status)
	}
	if r.KVTokens == 0 {
		return fieldErr("kv_cache_size_tokens", 0, "a row that was simulated has a KV cache")
	}
	if err := checkPerf(r.Perf, qi.Workload); err != nil {
		return err
	}
	if err := checkPhysics(r, g, model); err != nil {
		return err
	}
	if r.PMeet != nil && !(*r.PMeet >= 0 && *r.PMeet <= 1) {
		return fieldErr("p_meet", *r.PMeet, "want a probability in [0, 1]")
	}
	if q := r.Queues; q != nil {
		users := qi.Workload.MaxConcurrency()
		if !(q.Slots >= 0 && q.Slots < q.Users && q.Users <= users) || q.Binds == "" {
			return fmt.Errorf("field \"queues\" = %d of %d users (%q): want 0 <= slots < users <= the question's %d users, and the limit that binds", q.Slots, q.Users, q.Binds, users)
		}
	}
	for i, iv := range r.Intervals {
		if m, ok := planMetric(iv.Name); !ok {
			return fieldErr(fmt.Sprintf("intervals[%d].name", i), fmt.Sprintf("%q", iv.Name), "not a metric a plan gives an interval for")
		} else if iv.Metric != m {
			return fieldErr(fmt.Sprintf("intervals[%d].metric", i), fmt.Sprintf("%q", iv.Metric), "want %q, the class of %s", m, iv.Name)
		}
		if !(iv.Lo >= 0 && iv.Lo <= iv.Hi) || math.IsInf(iv.Hi, 0) {
			return fmt.Errorf("field \"intervals[%d]\" = [%v, %v]: want finite 0 <= lo <= hi", i, iv.Lo, iv.Hi)
		}
	}
	want := StatusOK
	switch {
	case r.Queues != nil:
		want = StatusQueues
	case !r.Perf.Met:
		want = StatusMissed
	case r.pMeet() < ConfidentP:
		want = StatusMarginal
	}
	if r.Status != want {
		return fieldErr("status", fmt.Sprintf("%q", r.Status), "its figures give %q (%s)", want, statusWhy(r))
	}
	var cost float64
	if r.Perf.OutputTokS > 0 {
		cost = r.PriceHour / (r.Perf.OutputTokS * 3600) * 1e6
	}
	if r.CostPerMTok != cost {
		return fieldErr("usd_per_m_output_tokens", r.CostPerMTok, "$%g/h at %g output tok/s is %v", r.PriceHour, r.Perf.OutputTokS, cost)
	}
	return nil
}

// statusWhy says which figure gives a row its status.
func statusWhy(r *Result) string {
	switch {
	case r.Queues != nil:
		return "queues: " + r.Queues.Text()
	case !r.Perf.Met:
		return "perf.met is false"
	case r.pMeet() < ConfidentP:
		return fmt.Sprintf("p_meet %.3g < %g", r.pMeet(), ConfidentP)
	}
	return fmt.Sprintf("meets every objective, p_meet %.3g >= %g", r.pMeet(), ConfidentP)
}

func pruneStages() []string {
	return []string{StageFormat, StageEngine, StageParallel, StageMemory, StageCapacity, StageSimulation}
}

// checkLayoutOf checks a row's hardware layout is one the question's sweep enumerates: a GPU
// count of the sweep, TP x DP = count with TP a swept size (or a power of two) and expert
// parallel only for a MoE model on more than one GPU.
func checkLayoutOf(c *Config, sp *Space, model *arch.Arch) error {
	if !slices.Contains(sp.Counts, c.Count) {
		return fieldErr("config.gpus", c.Count, "not a GPU count of the sweep %v", sp.Counts)
	}
	if c.TP < 1 || c.DP < 1 || c.TP*c.DP != c.Count {
		return fmt.Errorf("field \"config\": tp %d x dp %d: want tp x dp = gpus (%d)", c.TP, c.DP, c.Count)
	}
	if len(sp.TP) > 0 && !slices.Contains(sp.TP, c.TP) || len(sp.TP) == 0 && c.TP&(c.TP-1) != 0 {
		return fieldErr("config.tp", c.TP, "not a tensor-parallel size of the sweep")
	}
	if c.EP {
		moe := model == nil || model.IsMoE()
		if !moe || c.Count == 1 || len(sp.EP) > 0 && !slices.Contains(sp.EP, true) {
			return fieldErr("config.ep", true, "the sweep has no expert-parallel row of this layout")
		}
	}
	switch c.Weights {
	case "native", "fp8", "bf16":
	default:
		return fieldErr("config.weights", fmt.Sprintf("%q", c.Weights), "want native, fp8 or bf16")
	}
	return nil
}

// checkFlags checks a row's swept flags are values of the sweep.
func checkFlags(c *Config, sp *Space) error {
	switch {
	case !slices.Contains(sp.KVCacheDTypes, c.KVCacheDType):
		return fieldErr("config.kv_cache_dtype", fmt.Sprintf("%q", c.KVCacheDType), "not a KV-cache dtype of the sweep %v", sp.KVCacheDTypes)
	case !slices.Contains(sp.SpecTokens, c.SpecTokens):
		return fieldErr("config.spec_tokens", c.SpecTokens, "not a speculative setting of the sweep %v", sp.SpecTokens)
	case c.SpecTokens == 0 && c.SpecMethod != "":
		return fieldErr("config.spec_method", fmt.Sprintf("%q", c.SpecMethod), "a row without speculative tokens has no method")
	case !slices.Contains(sp.MaxNumBatchedTokens, c.MaxNumBatchedTokens):
		return fieldErr("config.max_num_batched_tokens", c.MaxNumBatchedTokens, "not a value of the sweep %v", sp.MaxNumBatchedTokens)
	case !slices.Contains(sp.MaxNumSeqs, c.MaxNumSeqs):
		return fieldErr("config.max_num_seqs", c.MaxNumSeqs, "not a value of the sweep %v", sp.MaxNumSeqs)
	case !slices.Contains(sp.GPUMemoryUtilization, c.GPUMemoryUtilization):
		return fieldErr("config.gpu_memory_utilization", c.GPUMemoryUtilization, "not a value of the sweep %v", sp.GPUMemoryUtilization)
	case c.MaxModelLen < 0:
		return fieldErr("config.max_model_len", c.MaxModelLen, "want a token count")
	}
	if c.SpecMethod != "" {
		if err := CheckSpecMethod(c.SpecMethod); err != nil {
			return fieldErr("config.spec_method", fmt.Sprintf("%q", c.SpecMethod), "%v", err)
		}
	}
	return nil
}

// checkPerf checks a simulated row's figures: finite, non-negative, fractions in [0, 1], the
// objectives' checks the question's objectives with the verdicts their values give, and Met
// the conjunction of those verdicts (and no overload), as perfOf sets it.
func checkPerf(p *Perf, w *workload.Spec) error {
	for _, f := range []struct {
		n string
		v float64
	}{{"output_tok_s", p.OutputTokS}, {"total_tok_s", p.TotalTokS}, {"req_s", p.RequestsPerS},
		{"ttft_ms_p50", p.TTFTp50}, {"ttft_ms_q", p.TTFTq}, {"tpot_ms_p50", p.TPOTp50}, {"tpot_ms_q", p.TPOTq}, {"e2e_ms_q", p.E2Eq},
		{"user_tok_s", p.UserTokS}, {"user_tok_s_q", p.UserTokSq}, {"kv_usage_peak", p.KVPeak}, {"goodput_fraction", p.Goodput}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fieldErr("perf."+f.n, f.v, "want a finite number >= 0")
		}
	}
	switch {
	case p.KVPeak > 1:
		return fieldErr("perf.kv_usage_peak", p.KVPeak, "a share of the KV cache is at most 1")
	case p.Goodput > 1:
		return fieldErr("perf.goodput_fraction", p.Goodput, "a share of the requests is at most 1")
	case p.Preemptions < 0:
		return fieldErr("perf.preemptions", p.Preemptions, "want a count >= 0")
	case p.OutputTokS > p.TotalTokS*(1+1e-12):
		return fieldErr("perf.output_tok_s", p.OutputTokS, "more than total_tok_s %v (input and output tokens)", p.TotalTokS)
	}
	if q := w.SLO.Q(); p.Quantile != q {
		return fieldErr("perf.quantile", p.Quantile, "the question's objectives are at quantile %g", q)
	}
	var userQ float64
	if p.TPOTq > 0 {
		userQ = 1000 / p.TPOTq
	}
	if p.UserTokSq != userQ {
		return fieldErr("perf.user_tok_s_q", p.UserTokSq, "1000 / tpot_ms_q (%v) is %v", p.TPOTq, userQ)
	}
	want := sloChecks(w.SLO)
	if len(p.Checks) != len(want) {
		return fmt.Errorf("field \"perf.checks\": %d checks, but the question has %d objectives", len(p.Checks), len(want))
	}
	met := true
	for i := range p.Checks {
		c := &p.Checks[i]
		f := fmt.Sprintf("perf.checks[%d]", i)
		if c.Name != want[i].Name || c.Limit != want[i].Limit || c.Quantile != want[i].Quantile {
			return fmt.Errorf("field %q: %s <= %g at quantile %g, but the question's objective is %s <= %g at %g", f, c.Name, c.Limit, c.Quantile, want[i].Name, want[i].Limit, want[i].Quantile)
		}
		if err := checkCheck(c); err != nil {
			return fmt.Errorf("field %q: %v", f, err)
		}
		met = met && c.Met
	}
	if met && p.Overload != nil {
		met = false
	}
	if p.Met != met {
		return fieldErr("perf.met", p.Met, "its checks and overload give %v", met)
	}
	return nil
}

// sloChecks are the checks a run under slo makes (names, limits, quantile), in workload.Run's
// order.
func sloChecks(slo workload.SLO) []workload.Check {
	var out []workload.Check
	for _, c := range []struct {
		n string
		v float64
	}{{"ttft_ms", slo.TTFTms}, {"tpot_ms", slo.TPOTms}, {"e2e_ms", slo.E2Ems}, {"user_tok_s", slo.UserTokS}} {
		if c.v > 0 {
			out = append(out, workload.Check{Name: c.n, Limit: c.v, Quantile: slo.Q()})
		}
	}
	return out
}

// checkCheck recomputes one objective's headroom and verdict from its value and limit, as
// workload.Run does.
func checkCheck(c *workload.Check) error {
	if !(c.Value >= 0) || math.IsInf(c.Value, 0) {
		return fmt.Errorf("value %v: want a finite number >= 0", c.Value)
	}
	if c.Undefined {
		if !c.Met || c.Value != 0 || c.Headroom != 0 {
			return fmt.Errorf("an undefined objective is met, with no value or headroom")
		}
		return nil
	}
	h := (c.Limit - c.Value) / c.Limit
	if c.Name == "user_tok_s" {
		h = (c.Value - c.Limit) / c.Limit
	}
	if c.Value == 0 && c.Headroom == -1 && c.Name != "user_tok_s" {
		h = -1 // no request gave the metric: missed
	}
	if c.Headroom != h {
		return fmt.Errorf("headroom %v: value %v against limit %v gives %v", c.Headroom, c.Value, c.Limit, h)
	}
	if c.Met != (h >= 0) {
		return fmt.Errorf("met %v: headroom %v says %v", c.Met, h, h >= 0)
	}
	return nil
}

// checkPhysics bounds a row's figures by its hardware: every output token passes through the
// model's active weights (two FLOPs per weight), so the row's GPUs at their fastest tensor-core
// rate make at most count x peak / (2 x active parameters) tokens a second, whatever the
// batching or speculation; and one replica's KV cache cannot hold more tokens than the row's
// memory stores at the smallest KV format (full-attention layers only: a sliding window or a
// recurrent state holds less).
func checkPhysics(r *Result, g *hardware.GPU, model *arch.Arch) error {
	c := &r.Config
	if active := model.Params().Active; active > 0 {
		peak := max(g.BF16TFLOPS, g.FP8TFLOPS, g.FP4TFLOPS) * 1e12
		if lim := float64(c.Count) * peak / (2 * float64(active)); peak > 0 && r.Perf.OutputTokS > lim {
			return fieldErr("perf.output_tok_s", r.Perf.OutputTokS, "above what %d x %s can compute for %s (%.4g tok/s: %.4g TFLOPS each, 2 FLOPs per active parameter per token)",
				c.Count, g.Name, model.Name, lim, peak/1e12)
		}
	}
	var perTok float64
	for _, l := range model.Layers {
		if s := l.Attn.Mixer().KVSpec(c.TP, arch.NVFP4); s.Kind == arch.SpecFull {
			perTok += float64(l.Count) * s.BytesPerToken
		}
	}
	if mem := float64(c.Count) * g.MemoryGiB * (1 << 30); perTok > 0 && mem > 0 && float64(r.KVTokens)*perTok > mem {
		return fieldErr("kv_cache_size_tokens", r.KVTokens, "more than %d x %s's %g GiB can hold (%.0f tokens at %.4g bytes a token per GPU)", c.Count, g.Name, g.MemoryGiB, mem/perTok, perTok)
	}
	return nil
}

// checkDerived checks what finalize derives from the rows (ranks, order, counts, frontier)
// against what the file says.
func (p *Plan) checkDerived(name string) error {
	cp := *p
	cp.Results = slices.Clone(p.Results)
	cp.finalize()
	for k := range cp.Results {
		got, want := &p.Results[k], &cp.Results[k]
		if got.Index != want.Index {
			return fmt.Errorf("%s: results[%d] is row %d, but the rows' figures rank row %d there", name, k, got.Index, want.Index)
		}
		if got.Rank != want.Rank {
			return fmt.Errorf("%s: results[%d] (row %d): field \"rank\" = %d, but the rows' figures rank it %d", name, k, got.Index, got.Rank, want.Rank)
		}
	}
	if !sameJSON(p.Counts, cp.Counts) {
		return fmt.Errorf("%s: field \"counts\" does not count the file's rows (they give %+v)", name, cp.Counts)
	}
	if !sameJSON(p.Frontier, cp.Frontier) {
		return fmt.Errorf("%s: field \"frontier\" is not the capacity frontier of the file's rows", name)
	}
	return nil
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// checkShared checks the rows that share another row's simulation (SameAs) against it, where
// both are in results: the representative is the lowest index of its class and differs only in
// max-num-seqs, and both carry the same outcome.
func checkShared(results []Result, names func(i int) string) error {
	at := make(map[int]int, len(results))
	for k := range results {
		at[results[k].Index] = k
	}
	for k := range results {
		r := &results[k]
		if r.SameAs == nil {
			continue
		}
		s := *r.SameAs
		if s >= r.Index {
			return fmt.Errorf("%s: row %d: field \"same_as\" = %d: a row shares the simulation of a lower row", names(k), r.Index, s)
		}
		j, ok := at[s]
		if !ok {
			continue
		}
		src := &results[j]
		a, b := r.Config, src.Config
		a.MaxNumSeqs, b.MaxNumSeqs = 0, 0
		switch {
		case src.SameAs != nil || src.Scope != "":
			return fmt.Errorf("%s: row %d: field \"same_as\" = %d, a row that does not simulate for others", names(k), r.Index, s)
		case a != b:
			return fmt.Errorf("%s: row %d: field \"same_as\" = %d, whose configuration differs in more than max-num-seqs", names(k), r.Index, s)
		case r.Status != src.Status || r.Stage != src.Stage || r.KVTokens != src.KVTokens || r.Source != src.Source ||
			!reflect.DeepEqual(r.Perf, src.Perf) || !reflect.DeepEqual(r.PMeet, src.PMeet) || !reflect.DeepEqual(r.Queues, src.Queues) || !reflect.DeepEqual(r.Intervals, src.Intervals):
			return fmt.Errorf("%s: row %d shares row %d's simulation (same_as) but not its status or figures (%s of %s)", names(k), r.Index, s, r.Status, names(j))
		}
	}
	return nil
}
