package report

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/sim"
)

// Capacity is a server's memory and benchmark capacity as data (the report's capacity table).
type Capacity struct {
	// KVTokens is kv_cache_size_tokens; MaxNumSeqs the engine's limit of running requests.
	KVTokens   int
	MaxNumSeqs int
	MaxOutput  int
	// Memory is the per-GPU memory breakdown, GiB.
	Memory []MemoryRow
	// Contexts is the benchmark's capacity by context.
	Contexts []ContextCapacity
}

// MemoryRow is one line of the per-GPU memory breakdown.
type MemoryRow struct {
	Name string
	GiB  float64
	Note string
}

// ContextCapacity is the most streams the benchmark runs at a context: by its rule
// C x (context + max output) <= kv_cache_size_tokens, and at once (also within max-num-seqs).
type ContextCapacity struct {
	Context      string
	Tokens       int
	Fits         bool // the context fits max_model_len
	MaxByRule    int
	MaxAtOnce    int
	LimitedBySeq bool // max-num-seqs, not the KV cache, limits it
}

// CapacityOf computes srv's capacity under the protocol's contexts.
func CapacityOf(srv *sim.Server, proto *protocol.Protocol) *Capacity {
	d := srv.Deployment
	m := &srv.Memory
	l := srv.Layout
	gib := func(b float64) float64 { return b / (1 << 30) }
	wb := m.Weights
	c := &Capacity{KVTokens: l.KVCacheSizeTokens, MaxNumSeqs: d.Engine.MaxNumSeqs, MaxOutput: proto.MaxOutput}
	c.Memory = []MemoryRow{
		{"device memory", gib(m.TotalBytes), ""},
		{"usable (x gpu_memory_utilization)", gib(m.RequestedBytes), fmt.Sprintf("%.2f", d.Engine.GPUMemoryUtilization)},
		{"weights", gib(wb.Total()), fmt.Sprintf("routed experts %.1f, attention %.1f, dense MLP %.1f, shared experts %.1f, embedding and lm_head %.1f, drafter %.1f GiB",
			gib(wb.RoutedExperts), gib(wb.Attention), gib(wb.DenseMLP), gib(wb.SharedExperts), gib(wb.Embedding+wb.LMHead), gib(wb.Drafter))},
		{"activations (profile run)", gib(m.ActivationPeak), ""},
		{"non-torch and CUDA graphs", gib(m.NonTorch + m.CUDAGraphs), ""},
		{"KV cache", gib(m.AvailableKV), fmt.Sprintf("%s tokens", fnum(float64(l.KVCacheSizeTokens), 0))},
	}
	for _, label := range proto.Contexts {
		n, err := matrix.ParseContext(label)
		if err != nil {
			continue
		}
		cc := ContextCapacity{Context: label}
		t, ok := proto.Fit(n, d.Engine.MaxModelLen, proto.MaxOutput)
		if ok {
			cc.Fits, cc.Tokens, cc.Context = true, t, matrix.Label(t)
			cc.MaxByRule = proto.MaxConcurrencyFor(t, l.KVCacheSizeTokens)
			cc.MaxAtOnce = min(cc.MaxByRule, d.Engine.MaxNumSeqs)
			cc.LimitedBySeq = d.Engine.MaxNumSeqs < cc.MaxByRule
		}
		c.Contexts = append(c.Contexts, cc)
	}
	return c
}

// capacityTable is the benchmark's capacity by context.
func capacityTable(c *Capacity) *table {
	t := &table{ID: "table-capacity", Caption: fmt.Sprintf("Streams by context: the benchmark runs C streams when C × (context + %s output tokens) ≤ kv_cache_size_tokens %s; at most max-num-seqs %d run at once",
		fnum(float64(c.MaxOutput), 0), fnum(float64(c.KVTokens), 0), c.MaxNumSeqs),
		Head: []string{"context", "prompt tokens", "most streams (KV rule)", "run at once", "limited by"}}
	for _, cc := range c.Contexts {
		if !cc.Fits {
			t.Rows = append(t.Rows, []cellView{{Text: cc.Context, Class: "name"}, {Text: "does not fit max_model_len", Class: "st-oc"}, {}, {}, {}})
			continue
		}
		by := "KV cache"
		if cc.LimitedBySeq {
			by = "max-num-seqs"
		}
		t.Rows = append(t.Rows, []cellView{{Text: cc.Context, Class: "name"}, {Text: fnum(float64(cc.Tokens), 0), Class: "num"},
			{Text: strconv.Itoa(cc.MaxByRule), Class: "num"}, {Text: strconv.Itoa(cc.MaxAtOnce), Class: "num"}, {Text: by}})
	}
	return t
}

// memoryTable is the per-GPU memory breakdown.
func memoryTable(c *Capacity) *table {
	t := &table{ID: "table-memory", Caption: "Per-GPU memory as vLLM accounts it at start-up", Head: []string{"", "GiB", ""}}
	for _, r := range c.Memory {
		t.Rows = append(t.Rows, []cellView{{Text: r.Name, Class: "name"}, {Text: fnum(r.GiB, 2), Class: "num"}, {Text: r.Note, Class: "meaning"}})
	}
	return t
}

// answerRows is the report's opening: what a buyer asks of a deployment, answered from the
// predicted matrix (and the measured one, when given).
func answerRows(in *Input) []kv {
	r := in.Resolved
	d := r.Deployment
	g := d.Hardware.GPU
	pred := in.Predicted
	var rows []kv
	price := g.PricePerHour * float64(d.Hardware.Count)
	setup := fmt.Sprintf("%s on %d × %s, TP %d", d.Model.Name, d.Hardware.Count, g.Name, d.Engine.TensorParallel)
	if d.Engine.ExpertParallel {
		setup += " + expert parallel"
	}
	if k := d.Engine.SpecTokens(); k > 0 {
		setup += fmt.Sprintf(", %s with %d speculative tokens", d.Engine.Speculative.Method, k)
	}
	// The question given (a plan, a workload) is answered first; the matrix's peak follows.
	rows = append(rows, planAnswer(in.Plan)...)
	rows = append(rows, workloadAnswer(in.Workload, price)...)
	rows = append(rows, kv{"Deployment", setup})
	peak, costKey := "Peak throughput", "Cost"
	if in.Plan != nil || in.Workload != nil {
		peak, costKey = "Benchmark peak", "Cost at the benchmark peak"
	}
	// The best decode cell that ran without queueing.
	var best *matrix.Cell
	for i := range pred.Decode {
		c := &pred.Decode[i]
		if c.Status == matrix.Valid && !math.IsNaN(c.TotalTokS) && (best == nil || c.TotalTokS > best.TotalTokS) {
			best = c
		}
	}
	if best != nil {
		s := fmt.Sprintf("%s output tok/s at %s context × %d streams (%s tok/s per stream)", fnum(best.TotalTokS, 0), best.Context, best.Concurrency, fnum(best.PerRequestTokS, 1))
		rows = append(rows, kv{peak, s})
		if price > 0 {
			rows = append(rows, kv{costKey, fmt.Sprintf("$%s per hour at catalog prices; $%s per million output tokens at the peak", fnum(price, 2), fnum(price/(best.TotalTokS*3600)*1e6, 2))})
		}
	}
	// Single-stream speed and time to first token, shortest and longest context.
	var single []*matrix.Cell
	for i := range pred.Decode {
		if c := &pred.Decode[i]; c.Concurrency == 1 && c.Status.Ran() {
			single = append(single, c)
		}
	}
	if n := len(single); n > 0 {
		a, b := single[0], single[n-1]
		s := fmt.Sprintf("%s tok/s at %s", fnum(a.PerRequestTokS, 1), a.Context)
		if b != a {
			s += fmt.Sprintf(", %s tok/s at %s", fnum(b.PerRequestTokS, 1), b.Context)
		}
		rows = append(rows, kv{"One user's speed", s})
	}
	var pf []*matrix.Cell
	for i := range pred.Prefill {
		if c := &pred.Prefill[i]; c.Status.Ran() && !math.IsNaN(c.TTFTms) {
			pf = append(pf, c)
		}
	}
	if n := len(pf); n > 0 {
		a, b := pf[0], pf[n-1]
		s := fmt.Sprintf("%s for a cold %s prompt", latency(a.TTFTms), a.Context)
		if b != a {
			s += fmt.Sprintf(", %s for %s", latency(b.TTFTms), b.Context)
		}
		rows = append(rows, kv{"Time to first token", s})
	}
	if c := in.CapacityData; c != nil && len(c.Contexts) > 0 {
		var first, last *ContextCapacity
		for i := range c.Contexts {
			if cc := &c.Contexts[i]; cc.Fits {
				if first == nil {
					first = cc
				}
				last = cc
			}
		}
		if first != nil {
			s := fmt.Sprintf("%d streams at %s, %d at %s (KV cache %s tokens)", first.MaxAtOnce, first.Context, last.MaxAtOnce, last.Context, fnum(float64(c.KVTokens), 0))
			rows = append(rows, kv{"Capacity", s})
		}
	}
	queued := 0
	for i := range pred.Decode {
		if pred.Decode[i].Status == matrix.RequestsQueued {
			queued++
		}
	}
	if queued > 0 {
		rows = append(rows, kv{"Past capacity", fmt.Sprintf("%d of %d decode cells queue requests (more streams than run at once)", queued, len(pred.Decode))})
	}
	if in.Measured != nil {
		cmp := matrix.Compare(pred, in.Measured)
		s := fmt.Sprintf("statuses %d/%d", cmp.Summary.StatusMatched, cmp.Summary.DecodeCells)
		for _, m := range cmp.Summary.Columns {
			if m.Column == matrix.DecodeTotalTokS && m.N > 0 {
				s += fmt.Sprintf("; decode total tok/s within %s %% on average (MAPE over %d cells)", fnum(m.MAPEPct, 1), m.N)
			}
		}
		rows = append(rows, kv{"Against the measurement", s})
	}
	rows = append(rows, kv{"Parameters", fmt.Sprintf("%s (%s)", r.ParamsFrom, r.Source)}, howSure(r))
	return rows
}

// latency writes milliseconds for people: "682 ms", "2.44 s", "1 min 13 s".
func latency(ms float64) string {
	switch {
	case ms < 1000:
		return fnum(ms, 0) + " ms"
	case ms < 60_000:
		return fnum(ms/1000, 2) + " s"
	}
	s := int(math.Round(ms / 1000))
	return fmt.Sprintf("%d min %02d s", s/60, s%60)
}

// planAnswer is a plan's answer: its question, the first-ranked configuration with its verdict,
// cost, probability of meeting the objectives and latencies, and the runner-up.
func planAnswer(p *planner.Plan) []kv {
	if p == nil {
		return nil
	}
	q := p.Question.Model
	if p.Question.WorkloadDesc != "" {
		q += " for " + p.Question.WorkloadDesc
	}
	rows := []kv{{"Your plan", q}}
	var ranked []*planner.Result
	for i := range p.Results {
		if r := &p.Results[i]; r.Rank > 0 {
			ranked = append(ranked, r)
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].Rank < ranked[j].Rank })
	if len(ranked) == 0 {
		return append(rows, kv{"Best configuration", fmt.Sprintf("none of the %d configurations loads", p.Rows)})
	}
	for i, r := range ranked[:min(2, len(ranked))] {
		key := "Best configuration"
		if i == 1 {
			key = "Runner-up"
		}
		rows = append(rows, kv{key, planRowText(r)})
	}
	return rows
}

// planRowText is one plan row for the answer: layout, flags, price, verdict, P(meet), latencies.
func planRowText(r *planner.Result) string {
	c := &r.Config
	s := c.Label()
	if c.Weights != "" && c.Weights != "native" {
		s += ", " + c.Weights + " weights"
	}
	if c.MaxNumSeqs > 0 {
		s += fmt.Sprintf(", max-num-seqs %d", c.MaxNumSeqs)
	}
	if c.SpecTokens > 0 {
		s += fmt.Sprintf(", %s k=%d", c.SpecMethod, c.SpecTokens)
	}
	s += fmt.Sprintf(": $%s per hour, %s", fnum(r.PriceHour, 2), verdict(r.Status))
	if r.PMeet != nil {
		s += fmt.Sprintf(" (P(meet) %.2f)", *r.PMeet)
	}
	if p := r.Perf; p != nil {
		q := fmt.Sprintf("p%.0f", 100*p.Quantile)
		s += fmt.Sprintf("; %s output tok/s, TTFT p50 %s / %s %s, TPOT p50 %s / %s %s ms", fnum(p.OutputTokS, 0), latency(p.TTFTp50), q, latency(p.TTFTq),
			fnum(p.TPOTp50, 1), q, fnum(p.TPOTq, 1))
	}
	return s
}

func verdict(status string) string {
	switch status {
	case "ok":
		return "meets the objectives"
	case "marginal":
		return "meets them inside the uncertainty (marginal)"
	case "missed":
		return "misses an objective"
	case "queues":
		return "queues some users"
	}
	return status
}

// workloadAnswer is a workload run's answer: throughput, latencies, the objectives and the cost
// per million output tokens at the run's rate.
func workloadAnswer(w *WorkloadRun, price float64) []kv {
	if w == nil || w.Metrics == nil {
		return nil
	}
	m := w.Metrics
	desc := m.Workload
	if w.Spec != nil {
		desc = w.Spec.Describe()
		if w.Spec.Name != "" {
			desc = w.Spec.Name + ": " + desc
		}
	}
	key := "Your workload"
	if w.Measured != nil {
		key, desc = "Your measured run", filepath.Base(w.Measured.Name)
		if w.Spec != nil {
			desc += ": " + w.Spec.Describe()
		}
	}
	rows := []kv{{key, desc}}
	rows = append(rows, kv{"Throughput", fmt.Sprintf("%s output tok/s, %s req/s; %d of %d requests completed", fnum(m.OutputTokS, 0), fnum(m.RequestsPerS, 2), m.Completed, m.Requests)})
	rows = append(rows, kv{"Latency", fmt.Sprintf("TTFT p50 %s, p90 %s; TPOT p50 %s ms, p90 %s ms; end to end p50 %s", latency(m.TTFT.P50), latency(m.TTFT.P90),
		fnum(m.TPOT.P50, 1), fnum(m.TPOT.P90, 1), latency(m.E2E.P50))})
	if r := w.Measured; r != nil {
		vs := func(name string, pred, meas float64, unit string) string {
			if math.IsNaN(meas) || meas == 0 {
				return ""
			}
			return fmt.Sprintf("%s %s predicted, %s measured (%+.1f %%)", name, fnum(pred, 1)+unit, fnum(meas, 1)+unit, 100*(pred/meas-1))
		}
		var parts []string
		for _, p := range []string{vs("output", m.OutputTokS, r.OutputThroughput, " tok/s"), vs("TTFT median", m.TTFT.P50, r.TTFT.Median, " ms"),
			vs("TPOT median", m.TPOT.P50, r.TPOT.Median, " ms"), vs("ITL mean", m.ITL.Mean, r.ITL.Mean, " ms")} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		rows = append(rows, kv{"Against the run", strings.Join(parts, "; ")})
	}
	if g := m.Goodput; g != nil {
		var parts []string
		for _, c := range g.Checks {
			mark := "met"
			if !c.Met {
				mark = "missed"
			}
			parts = append(parts, fmt.Sprintf("%s p%.0f %s against %s (%s)", c.Name, 100*c.Quantile, fnum(c.Value, 1), fnum(c.Limit, 1), mark))
		}
		s := "every objective met"
		if !g.Met {
			s = "an objective missed"
		}
		rows = append(rows, kv{"Objectives", fmt.Sprintf("%s: %s; goodput %s %% of requests", s, strings.Join(parts, ", "), fnum(100*g.Fraction, 1))})
	}
	if price > 0 && m.OutputTokS > 0 {
		rows = append(rows, kv{"Cost", fmt.Sprintf("$%s per hour at catalog prices; $%s per million output tokens at this workload's rate", fnum(price, 2), fnum(price/(m.OutputTokS*3600)*1e6, 2))})
	}
	return rows
}
