package planner

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/workload"
)

// qwenUsers is the fixed-length question on a small sweep: Qwen3-30B-A3B, users at a time
// sending 2,000-token prompts for 500-token answers, TPOT p90 <= 30 ms.
func qwenUsers(t testing.TB, users int, sp Space, gs ...string) *Question {
	t.Helper()
	r := seedResolved(t)
	ms, err := ModelsFor(r.Deployment, "Qwen/Qwen3-30B-A3B", "")
	if err != nil {
		t.Fatal(err)
	}
	w := &workload.Spec{Name: "fixed", Kind: workload.KindClosed, Closed: workload.Closed{Requests: 4 * users, Concurrency: users},
		Lengths: workload.Lengths{InputTokens: 2000, OutputTokens: 500}, SLO: workload.SLO{TPOTms: 30}}
	q := ScenarioQuestion(r, ms, w, gpus(t, gs...), sp)
	q.Engine.Version = ""
	return q
}

// TestQueuedRowsRankBelow: a closed loop of 32 users on rows with max-num-seqs 16 makes half of
// them wait for a slot (TTFT of whole answers). Such a row is not "meets": it says that it
// queues and what binds, and ranks below every row that holds all 32 users, whatever its price
// or TPOT; the default table shows each row's TTFT and its probability of meeting the objective.
func TestQueuedRowsRankBelow(t *testing.T) {
	sp := Space{Counts: []int{1, 2}, TP: []int{1, 2}, EP: []bool{false}, MaxNumSeqs: []int{16, 64}, MaxNumBatchedTokens: []int{8192},
		KVCacheDTypes: []string{"fp8"}, SpecTokens: []int{0}, GPUMemoryUtilization: []float64{0.9}}
	p := mustRun(t, qwenUsers(t, 32, sp, "A100-PCIe-80GB", "H100-SXM"), Options{Exhaustive: true})
	lastServing, firstQueued := 0, 0
	queued := 0
	for _, r := range p.Results {
		if r.Status == StatusPruned {
			continue
		}
		perReplica := (32 + r.Config.Replicas() - 1) / r.Config.Replicas()
		if r.Config.MaxNumSeqs < perReplica {
			queued++
			if r.Status != StatusQueues || r.Queues == nil || r.Queues.Slots != 16 || r.Queues.Users != perReplica || !strings.Contains(r.Queues.Binds, "max-num-seqs 16") {
				t.Errorf("row %d (%s, max-num-seqs 16, %d users per replica): status %s, queues %+v", r.Index, r.Config.Label(), perReplica, r.Status, r.Queues)
			}
			if firstQueued == 0 {
				firstQueued = r.Rank
			}
			continue
		}
		if r.Status == StatusQueues {
			t.Errorf("row %d (%s, max-num-seqs %d) holds every user but says it queues: %+v", r.Index, r.Config.Label(), r.Config.MaxNumSeqs, r.Queues)
		}
		lastServing = r.Rank
	}
	if queued == 0 || lastServing == 0 {
		t.Fatalf("%d queued rows, last serving rank %d: the sweep should have both", queued, lastServing)
	}
	if firstQueued < lastServing {
		t.Errorf("a row that queues users ranks %d, above a row that serves them all (rank %d)", firstQueued, lastServing)
	}
	var b bytes.Buffer
	if err := p.WriteTable(&b, TableOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"TTFT p90", "P(meet)", "queues: 16 of 32 users at once (max-num-seqs 16)", "queue users"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestPMeet: the probability of meeting an objective follows the prediction's log-normal error:
// 0.5 at the limit, 0.9 when the limit is at the 80 % interval's edge, lower than either
// objective's alone with two; a per-user rate is met from below.
func TestPMeet(t *testing.T) {
	const sg = 0.2
	sigma := func(param.Metric) float64 { return sg }
	edge := math.Exp(param.Z80 * sg)
	for _, c := range []struct {
		name   string
		checks []workload.Check
		want   float64
	}{
		{"at the limit", []workload.Check{{Name: "tpot_ms", Value: 30, Limit: 30, Met: true}}, 0.5},
		{"at the interval's edge", []workload.Check{{Name: "tpot_ms", Value: 30 / edge, Limit: 30, Met: true}}, 0.9},
		{"missed to the edge", []workload.Check{{Name: "ttft_ms", Value: 500 * edge, Limit: 500}}, 0.1},
		{"per-user rate at the edge", []workload.Check{{Name: "user_tok_s", Value: 40 * edge, Limit: 40, Met: true}}, 0.9},
		{"two at the edge", []workload.Check{{Name: "tpot_ms", Value: 30 / edge, Limit: 30, Met: true}, {Name: "ttft_ms", Value: 500 / edge, Limit: 500, Met: true}}, 0.81},
		{"undefined", []workload.Check{{Name: "tpot_ms", Undefined: true, Met: true}}, 1},
	} {
		if got := pMeet(c.checks, sigma); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: P = %.6f, want %g", c.name, got, c.want)
		}
	}
	// Without an interval model: the prediction's verdict.
	none := func(param.Metric) float64 { return 0 }
	if got := pMeet([]workload.Check{{Name: "tpot_ms", Value: 29, Limit: 30, Met: true}}, none); got != 1 {
		t.Errorf("no widths, met: P = %g, want 1", got)
	}
	if got := pMeet([]workload.Check{{Name: "tpot_ms", Value: 31, Limit: 30}}, none); got != 0 {
		t.Errorf("no widths, missed: P = %g, want 0", got)
	}
}

// TestMarginalAndPriorsOnly: a row that meets the objective by less than its uncertainty is
// marginal, ranked below the rows that meet it surely; rows on GPUs no measured data supports
// (PRIORS ONLY) carry wider intervals than prior rows of a measured generation, as their note
// says, and a lower probability at the same margin.
func TestMarginalAndPriorsOnly(t *testing.T) {
	sp := Space{Counts: []int{1, 2}, TP: []int{1, 2}, EP: []bool{false}, MaxNumSeqs: []int{64}, MaxNumBatchedTokens: []int{8192},
		KVCacheDTypes: []string{"auto", "fp8"}, SpecTokens: []int{0}, GPUMemoryUtilization: []float64{0.9}}
	p := mustRun(t, qwenUsers(t, 32, sp, "A100-PCIe-80GB", "H100-SXM", "MI300X"), Options{Exhaustive: true})
	factor := func(r *Result) float64 {
		for _, iv := range r.Intervals {
			if iv.Name == "tpot_ms_q" {
				return iv.Hi / r.Perf.TPOTq
			}
		}
		t.Fatalf("row %d has no TPOT interval", r.Index)
		return 0
	}
	var prior, unsupported float64
	rank := map[string]int{}
	for i := range p.Results {
		r := &p.Results[i]
		if r.Perf == nil {
			continue
		}
		if r.PMeet == nil {
			t.Fatalf("row %d has no P(meet)", r.Index)
		}
		c := r.Perf.Checks[0]
		pm := *r.PMeet
		switch {
		case !c.Met && (r.Status != StatusMissed || pm >= 0.5):
			t.Errorf("row %d misses TPOT (%.1f ms) but is %s, P %.2f", r.Index, c.Value, r.Status, pm)
		case c.Met && pm < ConfidentP && r.Status != StatusMarginal:
			t.Errorf("row %d meets TPOT at %+.0f%% headroom, P %.2f: status %s, want marginal", r.Index, 100*c.Headroom, pm, r.Status)
		case c.Met && pm >= ConfidentP && r.Status != StatusOK:
			t.Errorf("row %d: P %.2f, status %s, want ok", r.Index, pm, r.Status)
		}
		if rank[r.Status] == 0 || r.Rank < rank[r.Status] {
			rank[r.Status] = r.Rank
		}
		if r.Status == StatusOK && rank[StatusMarginal] > 0 {
			t.Errorf("row %d (ok, rank %d) ranks below a marginal row", r.Index, r.Rank)
		}
		switch {
		case r.SourceLabel() == "PRIORS ONLY":
			unsupported = factor(r)
		case r.Source == "prior" && prior == 0:
			prior = factor(r)
		}
	}
	if rank[StatusMarginal] == 0 {
		t.Error("no marginal row in the sweep")
	}
	if prior == 0 || unsupported == 0 {
		t.Fatalf("interval factors: prior %g, PRIORS ONLY %g: want both", prior, unsupported)
	}
	w := param.DefaultWidths()
	// Prior, unsupported GPU and unseen widths in quadrature (Qwen3 MoE runs on no measured
	// MI300X: hardware.Generation.MeasuredSupport).
	want := math.Exp(param.Z80 * math.Hypot(math.Hypot(w[param.ClassPrior][param.MetricTPOT], w[param.ClassUnsupportedGPU][param.MetricTPOT]), w[param.ClassUnseen][param.MetricTPOT]))
	if unsupported <= prior*1.01 || math.Abs(unsupported-want) > 1e-6 {
		t.Errorf("PRIORS ONLY TPOT interval x/%.3f, prior x/%.3f: want x/%.3f, wider", unsupported, prior, want)
	}
}

// TestOnlineFP8Swept: with the default weights (auto) a 16-bit checkpoint is also tried
// quantized to fp8 when loading on GPUs with fp8 tensor cores (H100), launched with
// --quantization fp8, and not on GPUs without them (A100); a note says so. With --weights native
// the note says the sweep left it out.
func TestOnlineFP8Swept(t *testing.T) {
	sp := Space{Counts: []int{1}, MaxNumSeqs: []int{64}, MaxNumBatchedTokens: []int{8192}, KVCacheDTypes: []string{"auto"},
		SpecTokens: []int{0}, GPUMemoryUtilization: []float64{0.9}}
	p := mustRun(t, qwenUsers(t, 32, sp, "A100-PCIe-80GB", "H100-SXM"), Options{Exhaustive: true})
	fp8 := map[string]bool{}
	for i := range p.Results {
		r := &p.Results[i]
		if r.Config.Weights != "fp8" {
			continue
		}
		fp8[r.Config.GPU] = true
		if r.Status == StatusPruned {
			continue
		}
		l, err := p.Launch(r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(l.Serve, "--quantization fp8") {
			t.Errorf("row %d (fp8): %s: want --quantization fp8", r.Index, l.Serve)
		}
	}
	if !fp8["H100-SXM"] || fp8["A100-PCIe-80GB"] {
		t.Errorf("fp8 rows on %v: want H100-SXM only (A100 has no fp8 tensor cores)", fp8)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "fp8 weights: the 16-bit checkpoint quantized by vLLM when loading") {
		t.Errorf("no note on the online fp8 rows: %q", p.Notes)
	}
	sp.Weights = []string{"native"}
	p = mustRun(t, qwenUsers(t, 32, sp, "H100-SXM"), Options{Exhaustive: true})
	for _, r := range p.Results {
		if r.Config.Weights != "native" {
			t.Fatalf("--weights native: row %d has %s weights", r.Index, r.Config.Weights)
		}
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "fp8 weights not swept (--weights native)") {
		t.Errorf("--weights native: no note that fp8 was left out: %q", p.Notes)
	}
}
