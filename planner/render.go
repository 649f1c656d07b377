package planner

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/workload"
)

// TableOptions control the text rendering.
type TableOptions struct {
	// Top is the number of hardware layouts shown (0: 25).
	Top int
	// All shows every row that loaded instead of the best per layout.
	All bool
	// Commands prints the launch commands of every row shown (else of the best row only).
	Commands bool
	// Wide prints every column (each swept flag, latencies at p50 and the quantile, headroom,
	// parameter source, interval) instead of the compact table.
	Wide bool
}

func money(v float64) string {
	if v == 0 {
		return "-"
	}
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func num(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 1000:
		return commas(int64(math.Round(v)))
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func commas(n int64) string { return numfmt.Commas(strconv.FormatInt(n, 10)) }

// mnsSets collects, per simulation class, the max-num-seqs values that share it.
func (p *Plan) mnsSets() map[int][]int {
	m := map[int][]int{}
	for i := range p.Results {
		r := &p.Results[i]
		if r.Scope != "" {
			continue
		}
		k := r.Index
		if r.SameAs != nil {
			k = *r.SameAs
		}
		m[k] = append(m[k], r.Config.MaxNumSeqs)
	}
	for k := range m {
		m[k] = uniqSorted(m[k])
	}
	return m
}

func mnsText(r *Result, sets map[int][]int) string {
	k := r.Index
	if r.SameAs != nil {
		k = *r.SameAs
	}
	v := sets[k]
	switch {
	case len(v) <= 1:
		return strconv.Itoa(r.Config.MaxNumSeqs)
	case len(v) == 2:
		return fmt.Sprintf("%d,%d", v[0], v[1])
	}
	return fmt.Sprintf("%d..%d", v[0], v[len(v)-1])
}

func kvText(s string) string {
	if s == "auto" {
		return "auto(bf16)"
	}
	return s
}

// specLabel is a row's speculative setting: "off", or its method and draft tokens ("mtp k3").
func (c *Config) specLabel() string {
	if c.SpecTokens == 0 || c.SpecMethod == "" {
		return specText(c.SpecTokens)
	}
	return c.SpecMethod + " " + specText(c.SpecTokens)
}

func specText(k int) string {
	if k == 0 {
		return "off"
	}
	return "k" + strconv.Itoa(k)
}

func pct(h float64) string { return fmt.Sprintf("%+.0f%%", 100*h) }

// objectives describes the SLOs.
func (p *Plan) objectives() string {
	w := p.Question.Workload
	if w == nil || !w.SLO.Any() {
		return "none (rows rank by cost only)"
	}
	s := w.SLO
	q := fmt.Sprintf("p%g", 100*s.Q())
	var parts []string
	if s.TTFTms > 0 {
		parts = append(parts, fmt.Sprintf("TTFT %s <= %g ms", q, s.TTFTms))
	}
	if s.TPOTms > 0 {
		parts = append(parts, fmt.Sprintf("TPOT %s <= %g ms", q, s.TPOTms))
	}
	if s.E2Ems > 0 {
		parts = append(parts, fmt.Sprintf("E2E %s <= %g ms", q, s.E2Ems))
	}
	if s.UserTokS > 0 {
		parts = append(parts, fmt.Sprintf("per-user %g tok/s for %s of users", s.UserTokS, q))
	}
	return strings.Join(parts, ", ")
}

// WriteTable prints the plan for a person: the question, the best configuration of each hardware
// layout, the user's current configuration, the capacity frontier and what was pruned.
// rankingText says how rows are ranked, for the table's heading.
const rankingText = "meets, marginal, misses, queues; then $/h, P(meet), $/M output tokens"

func (p *Plan) WriteTable(w io.Writer, o TableOptions) error {
	top := o.Top
	if top <= 0 {
		top = 25
	}
	qi := &p.Question
	fmt.Fprintf(w, "Question     %s: %s\n", qi.Model, qi.WorkloadDesc)
	fmt.Fprintf(w, "Objectives   %s\n", p.objectives())
	if s := p.Search; s != nil && !s.Exhaustive {
		fmt.Fprintf(w, "Search       fast: every row screened on its first %d of %d requests; %s in full (the rows that could reach the top %d or lead their layout); --exhaustive for all\n",
			s.ScreenRequests, s.Requests, commas(int64(s.Full)), s.Exact)
	}
	c := p.Counts
	var stages []string
	for _, s := range []string{StageFormat, StageEngine, StageParallel, StageMemory, StageCapacity, StageSimulation} {
		if n := c.ByStage[s]; n > 0 {
			stages = append(stages, fmt.Sprintf("%s %s", s, commas(int64(n))))
		}
	}
	verdicts := []string{commas(int64(c.Met)) + " meet the objectives"}
	if c.Marginal > 0 {
		verdicts = append(verdicts, commas(int64(c.Marginal))+" marginal")
	}
	verdicts = append(verdicts, commas(int64(c.Missed))+" miss")
	if c.Queued > 0 {
		verdicts = append(verdicts, commas(int64(c.Queued))+" queue users")
	}
	pruned := commas(int64(c.Pruned)) + " pruned"
	if len(stages) > 0 {
		pruned += " (" + strings.Join(stages, ", ") + ")"
	}
	fmt.Fprintf(w, "Sweep        %s; %s, %s: %s, %s\n",
		plural(len(qi.GPUs), "GPU kind", "GPU kinds"), plural(c.Rows, "row", "rows"), plural(c.Simulated, "simulation", "simulations"), strings.Join(verdicts, ", "), pruned)
	if p.Shard != nil {
		fmt.Fprintf(w, "Shard        %d/%d (rows with index mod %d = %d); merge the shards with 'servesim merge'\n", p.Shard.Index, p.Shard.Count, p.Shard.Count, p.Shard.Index)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "Note         %s\n", n)
	}
	fmt.Fprintln(w)

	sets := p.mnsSets()
	var rows, others []*Result
	seen := map[string]bool{}
	gpuShown := map[string]bool{}
	var current *Result
	for i := range p.Results {
		r := &p.Results[i]
		if r.Current && current == nil {
			current = r
		}
		if r.Status == StatusPruned {
			continue
		}
		if !o.All {
			k := groupKey(&r.Config)
			if seen[k] {
				continue
			}
			seen[k] = true
			if len(rows) >= top {
				// Past the top layouts, still show the best of each GPU kind not shown yet.
				if !gpuShown[r.Config.GPU] {
					gpuShown[r.Config.GPU] = true
					others = append(others, r)
				}
				continue
			}
			gpuShown[r.Config.GPU] = true
		}
		rows = append(rows, r)
	}
	hasIntervals := false
	for _, r := range append(rows, others...) {
		hasIntervals = hasIntervals || len(r.Intervals) > 0
	}
	q := 0.9
	if qi.Workload != nil {
		q = qi.Workload.SLO.Q()
	}
	qs := fmt.Sprintf("p%g", 100*q)
	if len(rows) == 0 {
		fmt.Fprintln(w, "No configuration loads: see the pruned rows below.")
	} else {
		if o.All {
			fmt.Fprintf(w, "Every configuration that loads, ranked (%s):\n", rankingText)
		} else {
			fmt.Fprintf(w, "Best configuration of each hardware layout, ranked (%s); --all for every row:\n", rankingText)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		checks := p.checkNames()
		var head string
		var line func(tw io.Writer, r *Result)
		if o.Wide {
			head, line = p.wideColumns(checks, qs, hasIntervals, sets)
		} else {
			head, line = p.compactColumns(checks, qs, sets)
		}
		fmt.Fprintln(tw, head)
		for _, r := range rows {
			line(tw, r)
		}
		if len(others) > 0 {
			// A row of empty cells keeps the columns aligned across the separator.
			fmt.Fprintf(tw, "\t(best of other GPUs)%s\n", strings.Repeat("\t", strings.Count(head, "\t")-1))
			for _, r := range others {
				line(tw, r)
			}
		}
		tw.Flush()
		if qi.Workload != nil && qi.Workload.SLO.Any() {
			fmt.Fprintf(w, "  P(meet): the probability of meeting every objective, from each prediction's 80 %% interval; meets: P >= %.1f (the limits lie\n", ConfidentP)
			fmt.Fprintf(w, "  outside the intervals); marginal: the prediction meets them, with a lower P; queues: some users wait for a slot.\n")
		}
		if p.anyWideEP(append(rows, others...)) {
			fmt.Fprintf(w, "  DPn EPm: one engine, attention data-parallel over n ranks, experts over all m GPUs (--data-parallel-size n --enable-expert-parallel).\n")
		}
		if o.Wide {
			fmt.Fprintf(w, "  weights: the routed-expert (or MLP) format; mbt: max-num-batched-tokens; mns: max-num-seqs (a range: values the workload never reaches simulate alike);\n")
			fmt.Fprintf(w, "  user tok/s: 1000 / TPOT %s; headroom: each objective's margin as a share of its limit; source: parameters calibrated on this GPU, transferred from another, or priors.\n", qs)
		} else {
			fmt.Fprintf(w, "  flags: weights if not the checkpoint's, KV-cache dtype, speculative method and tokens, max-num-batched-tokens (mbt), max-num-seqs\n")
			fmt.Fprintf(w, "  (mns: a range simulates alike), gpu-memory-utilization; --wide for every column (p50s, headroom, parameter source, intervals),\n")
			fmt.Fprintf(w, "  --explain-row N for one row in full.\n")
		}
		if sr := p.screenedShown(append(rows, others...)); sr > 0 && p.Search != nil {
			s := p.Search
			fmt.Fprintf(w, "  ~: judged from a screen of the first %d requests, not the full %d (%d rows shown); ranks 1-%d are simulated in full and ranked as\n", s.ScreenRequests, s.Requests, sr, s.Exact)
			fmt.Fprintf(w, "  --exhaustive ranks them, rows below may move.\n")
		}
		if note := unsupportedNote(rows, others); note != "" {
			fmt.Fprintln(w, note)
		}
		p.writeLaunches(w, rows, others, o.Commands)
		if current != nil {
			fmt.Fprintln(w)
			if current.Status == StatusPruned {
				fmt.Fprintf(w, "Current configuration (%s, %s KV, %s, %d batched tokens, max-num-seqs %d, utilization %.2f): pruned: %s\n",
					current.Config.Label(), current.Config.KVCacheDType, current.Config.specLabel(), current.Config.MaxNumBatchedTokens,
					current.Config.MaxNumSeqs, current.Config.GPUMemoryUtilization, current.Reason)
			} else {
				fmt.Fprintf(w, "Current configuration (the scenario's), rank %d of %d:\n", current.Rank, c.Met+c.Marginal+c.Missed+c.Queued)
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, head)
				line(tw, current)
				tw.Flush()
				if current.Perf != nil {
					pf := current.Perf
					fmt.Fprintf(w, "  predicted: %s output tok/s, TTFT p50 %s ms, TPOT p50 %s ms (%s tok/s per user), kv_cache_size_tokens %s, %s\n",
						num(pf.OutputTokS), num(pf.TTFTp50), num(pf.TPOTp50), num(pf.UserTokS), commas(int64(current.KVTokens)), pf.Status)
				}
			}
		}
	}
	if len(p.Frontier) > 0 {
		fmt.Fprintln(w)
		out := p.Frontier[0].OutputTokens
		fmt.Fprintf(w, "Capacity frontier from the KV cache (C x (context + %d output tokens) <= kv_cache_size_tokens, per replica; DP replicas add up):\n", out)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		var ctxs []string
		for _, f := range p.Frontier {
			for _, c := range f.ByContext {
				if !contains(ctxs, c.Context) {
					ctxs = append(ctxs, c.Context)
				}
			}
		}
		fmt.Fprintf(tw, "max concurrency by context\t%s\t\n", strings.Join(ctxs, "\t"))
		for _, f := range p.Frontier {
			cells := make([]string, len(ctxs))
			for i, name := range ctxs {
				cells[i] = "-"
				for _, c := range f.ByContext {
					if c.Context == name {
						cells[i] = strconv.Itoa(c.MaxConcurrency)
					}
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t\n", f.Label, strings.Join(cells, "\t"))
		}
		tw.Flush()
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		var concs []string
		for _, n := range frontierConcurrency() {
			concs = append(concs, strconv.Itoa(n))
		}
		fmt.Fprintf(tw, "max context (K tokens) by concurrency\t%s\t\n", strings.Join(concs, "\t"))
		for _, f := range p.Frontier {
			cells := make([]string, len(concs))
			for i := range cells {
				cells[i] = "-"
				if i < len(f.ByConcurrency) {
					cells[i] = strconv.Itoa(f.ByConcurrency[i].MaxContext / 1024)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t\n", f.Label, strings.Join(cells, "\t"))
		}
		tw.Flush()
	}
	if c.Pruned > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Pruned (first reason of each kind per GPU; --format csv lists every row):")
		type ex struct{ gpu, stage string }
		shown := map[ex]bool{}
		var lines []string
		for i := range p.Results {
			r := &p.Results[i]
			if r.Status != StatusPruned {
				continue
			}
			k := ex{r.Config.GPU, r.Stage}
			if shown[k] {
				continue
			}
			shown[k] = true
			lines = append(lines, fmt.Sprintf("  %-9s %-26s %s", r.Stage, r.Config.GPU, firstLine(r.Reason, r)))
		}
		sort.Strings(lines)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

// plural is "1 GPU kind", "18 GPU kinds".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return commas(int64(n)) + " " + many
}

func firstLine(reason string, r *Result) string {
	prefix := ""
	if r.Scope == "" {
		prefix = fmt.Sprintf("e.g. %s: ", r.Config.Label())
	} else {
		prefix = r.Config.Label() + ": "
	}
	if i := strings.IndexByte(reason, '\n'); i >= 0 {
		reason = reason[:i]
	}
	return prefix + reason
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

// checkNames lists the objectives the plan checks, in the workload's order.
func (p *Plan) checkNames() []string {
	w := p.Question.Workload
	if w == nil {
		return nil
	}
	var out []string
	for _, c := range []struct {
		n string
		v float64
	}{{"ttft_ms", w.SLO.TTFTms}, {"tpot_ms", w.SLO.TPOTms}, {"e2e_ms", w.SLO.E2Ems}, {"user_tok_s", w.SLO.UserTokS}} {
		if c.v > 0 {
			out = append(out, c.n)
		}
	}
	return out
}

func checkLabel(name string) string {
	if name == "user_tok_s" {
		return "user tok/s"
	}
	return strings.ToUpper(strings.TrimSuffix(name, "_ms"))
}

func headroomOf(p *Perf, name string) string {
	for _, c := range p.Checks {
		if c.Name == name {
			if c.Undefined {
				return "n/a"
			}
			return pct(c.Headroom)
		}
	}
	return "-"
}

func headroomValue(p *Perf, name string) string {
	for _, c := range p.Checks {
		if c.Name == name {
			if c.Undefined {
				return ""
			}
			return strconv.FormatFloat(c.Headroom, 'f', 4, 64)
		}
	}
	return ""
}

func missedText(p *Perf) string {
	var parts []string
	for _, c := range p.Checks {
		if !c.Met {
			parts = append(parts, strings.TrimSuffix(strings.ToUpper(c.Name), "_MS"))
		}
	}
	if len(parts) == 0 {
		if p.Overload != nil {
			return "RATE"
		}
		return p.Status
	}
	return strings.Join(parts, "+")
}

// CSVHeader lists WriteCSV's columns.
func CSVHeader() []string {
	return []string{"rank", "index", "status", "stage", "gpu", "gpus", "tp", "dp", "ep", "weights", "weight_format", "kv_cache_dtype",
		"spec_tokens", "max_num_batched_tokens", "max_num_seqs", "gpu_memory_utilization", "max_model_len", "same_as", "current", "source",
		"usd_per_hour", "usd_per_m_output_tokens", "kv_cache_size_tokens", "output_tok_s", "total_tok_s", "req_s",
		"ttft_ms_p50", "ttft_ms_q", "tpot_ms_p50", "tpot_ms_q", "user_tok_s", "user_tok_s_q", "preemptions", "goodput_fraction",
		"min_headroom", "headroom_ttft", "headroom_tpot", "headroom_e2e", "headroom_user_tok_s", "intervals", "p_meet", "queued_users", "slots", "note", "reason",
		"vllm_serve", "vllm_bench_serve"}
}

// WriteCSV writes every row, ranked, under CSVHeader. Layout-level pruned rows have empty flag
// columns.
func (p *Plan) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader())
	f := func(v float64, prec int) string {
		if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	itoa0 := func(v int) string {
		if v == 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	for i := range p.Results {
		r := &p.Results[i]
		c := &r.Config
		rank := ""
		if r.Rank > 0 {
			rank = strconv.Itoa(r.Rank)
		}
		same := ""
		if r.SameAs != nil {
			same = strconv.Itoa(*r.SameAs)
		}
		row := []string{rank, strconv.Itoa(r.Index), r.Status, r.Stage, c.GPU, strconv.Itoa(c.Count), strconv.Itoa(c.TP), strconv.Itoa(c.DP),
			strconv.FormatBool(c.EP), c.Weights, c.WeightFormat, c.KVCacheDType, strconv.Itoa(c.SpecTokens), itoa0(c.MaxNumBatchedTokens),
			itoa0(c.MaxNumSeqs), f(c.GPUMemoryUtilization, 2), itoa0(c.MaxModelLen), same, strconv.FormatBool(r.Current), r.Source,
			f(r.PriceHour, 2), f(r.CostPerMTok, 4), itoa0(r.KVTokens)}
		if r.Scope != "" {
			row[12] = ""
		}
		if pf := r.Perf; pf != nil {
			var iv []string
			for _, x := range r.Intervals {
				iv = append(iv, fmt.Sprintf("%s:%g:%g", x.Name, x.Lo, x.Hi))
			}
			row = append(row, f(pf.OutputTokS, 3), f(pf.TotalTokS, 3), f(pf.RequestsPerS, 6), f(pf.TTFTp50, 3), f(pf.TTFTq, 3),
				f(pf.TPOTp50, 3), f(pf.TPOTq, 3), f(pf.UserTokS, 3), f(pf.UserTokSq, 3), strconv.Itoa(pf.Preemptions), strconv.FormatFloat(pf.Goodput, 'f', 4, 64),
				strconv.FormatFloat(headroomMin(pf), 'f', 4, 64), headroomValue(pf, "ttft_ms"), headroomValue(pf, "tpot_ms"),
				headroomValue(pf, "e2e_ms"), headroomValue(pf, "user_tok_s"), strings.Join(iv, ";"))
		} else {
			row = append(row, "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "")
		}
		pm, users, slots := "", "", ""
		if r.PMeet != nil {
			pm = strconv.FormatFloat(*r.PMeet, 'f', 4, 64)
		}
		if g := r.Queues; g != nil {
			users, slots = strconv.Itoa(g.Users), strconv.Itoa(g.Slots)
		}
		row = append(row, pm, users, slots)
		row = append(row, r.Note, r.Reason)
		if l := r.Launch; l != nil {
			row = append(row, l.Serve, l.VLLMBenchServe)
		} else {
			row = append(row, "", "")
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// writeLaunches prints the launch commands of the best row, or of every row shown.
func (p *Plan) writeLaunches(w io.Writer, rows, others []*Result, all bool) {
	show := rows[:1]
	if all {
		show = append(append([]*Result(nil), rows...), others...)
	}
	fmt.Fprintln(w)
	if all {
		fmt.Fprintln(w, "Launch commands (one replica each; --explain-row N for a row's details):")
	} else {
		fmt.Fprintln(w, "Launch the best configuration (--show-commands for every row, --explain-row N for one):")
	}
	for _, r := range show {
		l := r.Launch
		if l == nil {
			var err error
			if l, err = p.Launch(r); err != nil {
				fmt.Fprintf(w, "  rank %d (row %d): %v\n", r.Rank, r.Index, err)
				continue
			}
		}
		fmt.Fprintf(w, "  rank %d (row %d, %s): %s\n", r.Rank, r.Index, r.Config.Label(), l.Serve)
		if l.VLLMBenchServe != "" {
			fmt.Fprintf(w, "    benchmark: %s\n", l.VLLMBenchServe)
		}
		for _, n := range l.Notes {
			fmt.Fprintf(w, "    note: %s\n", n)
		}
	}
}

// screenedShown counts the shown rows whose figures come from a screen.
func (p *Plan) screenedShown(rows []*Result) int {
	n := 0
	for _, r := range rows {
		if r.Screened {
			n++
		}
	}
	return n
}

// wideColumns is the table with every column: each swept flag, throughput, latencies at the
// quantile, per-user rate, each objective's headroom, the parameter source, the interval.
func (p *Plan) wideColumns(checks []string, qs string, hasIntervals bool, sets map[int][]int) (string, func(io.Writer, *Result)) {
	head := "rank\thardware\tweights\tkv\tspec\tmbt\tmns\tutil\t$/h\t$/M tok\tout tok/s\tTTFT p50\tTTFT " + qs + "\tTPOT " + qs + "\tuser tok/s\t"
	for _, c := range checks {
		head += checkLabel(c) + " headroom\t"
	}
	slo := len(checks) > 0
	if slo {
		head += "P(meet)\t"
	}
	head += "source\t"
	if hasIntervals {
		head += "out tok/s interval\t"
		for _, c := range checks {
			if c == "ttft_ms" || c == "tpot_ms" {
				head += checkLabel(c) + " " + qs + " interval\t"
			}
		}
	}
	head += "status\t"
	line := func(tw io.Writer, r *Result) {
		cf := &r.Config
		pf := r.Perf
		status := r.Status
		switch status {
		case StatusOK:
			status = "meets"
		case StatusMissed:
			status = "misses " + missedText(pf)
			if pf.Overload != nil {
				status += " (" + pf.Overload.Binds + ")"
			}
		case StatusQueues:
			status = "queues " + r.Queues.Text()
		}
		if r.Screened {
			status += " ~"
		}
		if r.Current {
			status += " (current)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", r.Rank, cf.Label(), cf.WeightFormat, kvText(cf.KVCacheDType),
			cf.specLabel(), cf.MaxNumBatchedTokens, mnsText(r, sets), cf.GPUMemoryUtilization, money(r.PriceHour), money(r.CostPerMTok),
			num(pf.OutputTokS), num(pf.TTFTp50), num(pf.TTFTq), num(pf.TPOTq), num(pf.UserTokSq))
		for _, c := range checks {
			fmt.Fprintf(tw, "%s\t", headroomOf(pf, c))
		}
		if slo {
			fmt.Fprintf(tw, "%s\t", pMeetText(r))
		}
		fmt.Fprintf(tw, "%s\t", r.SourceLabel())
		if hasIntervals {
			fmt.Fprintf(tw, "%s\t", intervalText(r, "output_tok_s"))
			for _, c := range checks {
				switch c {
				case "ttft_ms":
					fmt.Fprintf(tw, "%s\t", intervalText(r, "ttft_ms_q"))
				case "tpot_ms":
					fmt.Fprintf(tw, "%s\t", intervalText(r, "tpot_ms_q"))
				}
			}
		}
		fmt.Fprintf(tw, "%s\t\n", status)
	}
	return head, line
}

// compactColumns is the default table: rank, hardware, the row's key flags, cost, throughput,
// the objectives' metrics and the answer (meets, or what it misses and which limit binds).
func (p *Plan) compactColumns(checks []string, qs string, sets map[int][]int) (string, func(io.Writer, *Result)) {
	slo := len(checks) > 0
	// TTFT always: a row that makes users wait shows it there, whatever the objectives.
	cols := []string{"ttft_ms"}
	for _, c := range checks {
		if c != "ttft_ms" {
			cols = append(cols, c)
		}
	}
	if !slo {
		cols = append(cols, "tpot_ms")
	}
	head := "rank\thardware\tflags\t$/h\t$/M tok\tout tok/s\t"
	for _, c := range cols {
		head += checkLabel(c) + " " + qs + "\t"
	}
	if slo {
		head += "P(meet)\t"
	}
	// The answer is the last, unaligned cell: two spaces part it from the right-aligned column
	// before it.
	head += "  answer"
	line := func(tw io.Writer, r *Result) {
		cf := &r.Config
		pf := r.Perf
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t", r.Rank, cf.Label(), p.flagsText(r, sets), money(r.PriceHour), money(r.CostPerMTok), num(pf.OutputTokS))
		for _, c := range cols {
			fmt.Fprintf(tw, "%s\t", metricText(pf, c))
		}
		if slo {
			fmt.Fprintf(tw, "%s\t", pMeetText(r))
		}
		ans := "meets"
		switch {
		case r.Status == StatusQueues:
			ans = "queues: " + r.Queues.Text()
		case r.Status == StatusMissed:
			ans = "misses " + shortMiss(pf)
		case r.Status == StatusMarginal:
			ans = "marginal"
		case !slo:
			ans = pf.Status
		}
		if r.Screened {
			ans = "~" + ans
		}
		if r.Current {
			ans += " (current)"
		}
		if r.SourceLabel() == "PRIORS ONLY" {
			ans += " (PRIORS ONLY)"
		}
		fmt.Fprintf(tw, "  %s\n", ans)
	}
	return head, line
}

// pMeetText is a row's probability of meeting the objectives for tables: "0.93", ">0.99",
// "<0.01".
func pMeetText(r *Result) string {
	if r.PMeet == nil {
		return "-"
	}
	v := *r.PMeet
	switch {
	case v > 0.995:
		return ">0.99"
	case v < 0.005:
		return "<0.01"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// intervalText is a row's interval of a metric, "lo..hi" ("" without one).
func intervalText(r *Result, metric string) string {
	for _, x := range r.Intervals {
		if x.Name == metric {
			return num(x.Lo) + ".." + num(x.Hi)
		}
	}
	return ""
}

// anyWideEP reports whether a row shown is a wide-EP engine (the table then says what DPn EPm is).
func (p *Plan) anyWideEP(rows []*Result) bool {
	for _, r := range rows {
		if r.Config.WideEP() {
			return true
		}
	}
	return false
}

// sweptSpec reports whether any row of the plan decodes speculatively (then a row without says
// "no spec").
func (p *Plan) sweptSpec() bool {
	for i := range p.Results {
		if p.Results[i].Config.SpecTokens > 0 {
			return true
		}
	}
	return false
}

// flagsText is a row's key flags in a few words: "KV fp8, mtp k3, mbt 4K, mns 64, util 0.90".
func (p *Plan) flagsText(r *Result, sets map[int][]int) string {
	c := &r.Config
	var parts []string
	if c.Weights != "native" {
		parts = append(parts, c.WeightFormat+" weights")
	}
	parts = append(parts, "KV "+strings.TrimSuffix(kvText(c.KVCacheDType), "(bf16)"))
	if c.SpecTokens > 0 {
		parts = append(parts, c.specLabel())
	} else if p.sweptSpec() {
		parts = append(parts, "no spec")
	}
	parts = append(parts, "mbt "+tokensText(c.MaxNumBatchedTokens), "mns "+mnsText(r, sets), fmt.Sprintf("util %.2f", c.GPUMemoryUtilization))
	return strings.Join(parts, ", ")
}

// tokensText is a token count as the flags take it, in K when a multiple of 1,024 ("8K").
func tokensText(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return strconv.Itoa(n/1024) + "K"
	}
	return strconv.Itoa(n)
}

// metricText is a row's value of an objective's metric, in a person's units.
func metricText(p *Perf, name string) string {
	switch name {
	case "ttft_ms":
		return workload.Latency(p.TTFTq)
	case "tpot_ms":
		if p.TPOTq == 0 {
			return "n/a"
		}
		return workload.Latency(p.TPOTq)
	case "e2e_ms":
		return workload.Latency(p.E2Eq)
	case "user_tok_s":
		return num(p.UserTokSq)
	}
	return "-"
}

// shortMiss is a missed row's answer in the compact table: "TTFT 318 s > 500 ms; KV cache binds".
func shortMiss(p *Perf) string {
	var parts []string
	for _, c := range p.Checks {
		if c.Met || c.Undefined {
			continue
		}
		if c.Name == "user_tok_s" {
			parts = append(parts, fmt.Sprintf("per-user %s < %s tok/s", num(c.Value), num(c.Limit)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s > %s", checkLabel(c.Name), workload.Latency(c.Value), workload.Latency(c.Limit)))
	}
	s := strings.Join(parts, ", ")
	switch {
	case s == "" && p.Overload != nil:
		s = p.Overload.Short()
	case s == "":
		s = p.Status
	}
	if p.Overload != nil {
		s += "; " + p.Overload.Binds + " binds"
	}
	return s
}
