package planner

import (
	"regexp"
	"strings"
	"testing"

	"github.com/servesim/servesim/workload"
)

// qwenChat is the open-loop planning question on a smaller sweep: Qwen3-30B-A3B, the chat preset's
// requests at rate req/s, TTFT 500 ms / TPOT 30 ms at p90, on a few GPU kinds up to maxGPUs.
func qwenChat(t testing.TB, rate float64, maxGPUs int, gs ...string) *Question {
	t.Helper()
	r := seedResolved(t)
	ms, err := ModelsFor(r.Deployment, "Qwen/Qwen3-30B-A3B", "")
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Preset("chat")
	if err != nil {
		t.Fatal(err)
	}
	w.Open.RatePerS = rate
	w.SLO = workload.SLO{TTFTms: 500, TPOTms: 30}
	sp := Space{MaxGPUs: maxGPUs, MaxNumSeqs: []int{16, 64, 256}, MaxNumBatchedTokens: []int{2048, 8192}, KVCacheDTypes: []string{"auto", "fp8"},
		GPUMemoryUtilization: []float64{0.9}}
	return ScenarioQuestion(r, ms, w, gpus(t, gs...), sp)
}

// TestFastSearchTopRows: the fast search ranks the top rows as the exhaustive sweep does, with
// fewer full simulations, and marks the rows it judged from their screen.
func TestFastSearchTopRows(t *testing.T) {
	if testing.Short() {
		t.Skip("two sweeps")
	}
	for _, c := range []struct {
		name string
		rate float64
		gpus []string
		// full: the most full simulations, as a share of the sweep's.
		full float64
	}{
		// A row meets the objectives only when their limits lie outside its intervals (P(meet) >=
		// 0.9): the cheapest tiers hold fewer such rows than rows whose point prediction meets
		// them, so the search takes a few more tiers in full.
		{"10 req/s", 10, []string{"L40S", "H100-SXM", "MI300X"}, 0.4},
		// At 40 req/s fewer than five rows meet the objectives: the cheapest missed rows rank
		// next, and the search simulates their tiers in full too.
		{"40 req/s", 40, []string{"L40S", "H100-SXM"}, 0.7},
	} {
		t.Run(c.name, func(t *testing.T) {
			if raceEnabled && c.rate != 10 {
				t.Skip("one sweep under the race detector")
			}
			ex, err := Run(qwenChat(t, c.rate, 2, c.gpus...), Options{Exhaustive: true})
			if err != nil {
				t.Fatal(err)
			}
			var stages []string
			fast, err := Run(qwenChat(t, c.rate, 2, c.gpus...), Options{Progress: func(p Progress) {
				if n := len(stages); n == 0 || stages[n-1] != p.Stage {
					stages = append(stages, p.Stage)
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if ex.Search != nil {
				t.Errorf("exhaustive plan has a search: %+v", ex.Search)
			}
			s := fast.Search
			if s == nil || s.Exhaustive || s.ScreenRequests != 120 || s.Requests != 600 || s.Exact != DefaultExact {
				t.Fatalf("search %+v: want the fast passes, 120 of 600 requests, exact %d", s, DefaultExact)
			}
			if float64(s.Full) > c.full*float64(ex.Counts.Simulated) {
				t.Errorf("%d full simulations of %d: the search saved little", s.Full, ex.Counts.Simulated)
			}
			if want := []string{"pilot", "screen", "full"}; len(stages) < 3 || stages[0] != want[0] || stages[1] != want[1] || stages[2] != want[2] {
				t.Errorf("stages %v, want %v first", stages, want)
			}
			rank := func(p *Plan) []*Result {
				var out []*Result
				for i := range p.Results {
					if r := &p.Results[i]; r.Rank > 0 && r.Rank <= DefaultExact {
						out = append(out, r)
					}
				}
				return out
			}
			a, b := rank(ex), rank(fast)
			if len(a) != DefaultExact || len(b) != DefaultExact {
				t.Fatalf("top rows: exhaustive %d, fast %d", len(a), len(b))
			}
			for i := range a {
				if a[i].Index != b[i].Index || a[i].Status != b[i].Status || b[i].Screened || a[i].CostPerMTok != b[i].CostPerMTok {
					t.Errorf("rank %d: exhaustive row %d (%s, $%.4f/M), fast row %d (%s, $%.4f/M, screened %v)", i+1,
						a[i].Index, a[i].Status, a[i].CostPerMTok, b[i].Index, b[i].Status, b[i].CostPerMTok, b[i].Screened)
				}
			}
			t.Logf("%s: %d full simulations (exhaustive %d); rank 1 %s, rank %d %s; %d rows meet the objectives", c.name, s.Full, ex.Counts.Simulated,
				a[0].Status, DefaultExact, a[DefaultExact-1].Status, ex.Counts.Met)
			screened := 0
			for i := range fast.Results {
				if fast.Results[i].Screened {
					screened++
				}
			}
			if screened != s.ScreenedRows || screened == 0 {
				t.Errorf("%d rows marked screened, search says %d", screened, s.ScreenedRows)
			}
		})
	}
}

func TestScreenSpec(t *testing.T) {
	for _, c := range []struct {
		w       workload.Spec
		full, n int
		ok      bool
	}{
		{workload.Spec{Kind: workload.KindOpen, Open: workload.Open{RatePerS: 10, Requests: 600}}, 600, 120, true},
		{workload.Spec{Kind: workload.KindOpen, Open: workload.Open{RatePerS: 10, Requests: 1500}}, 1500, 300, true},
		{workload.Spec{Kind: workload.KindOpen, Open: workload.Open{RatePerS: 8, Requests: 100_000}}, 100_000, 300, true},
		{workload.Spec{Kind: workload.KindOpen, Open: workload.Open{RatePerS: 10, Requests: 150}}, 150, 0, false},
		{workload.Spec{Kind: workload.KindOpen, Open: workload.Open{Ramp: []workload.RampPoint{{AtS: 0, RatePerS: 1}, {AtS: 10, RatePerS: 2}}, Requests: 1000}}, 0, 0, false},
		{workload.Spec{Kind: workload.KindClosed, Closed: workload.Closed{Requests: 512, Concurrency: 64}}, 512, 256, true},
		{workload.Spec{Kind: workload.KindClosed, Closed: workload.Closed{Requests: 320, Concurrency: 32}}, 320, 128, true},
		{workload.Spec{Kind: workload.KindLLMBenchCell}, 0, 0, false},
	} {
		sc, full, n := screenSpec(&c.w)
		if (sc != nil) != c.ok || full != c.full || n != c.n {
			t.Errorf("%s %+v %+v: screen %v, %d of %d; want %v, %d of %d", c.w.Kind, c.w.Open, c.w.Closed, sc != nil, n, full, c.ok, c.n, c.full)
		}
	}
}

// TestMissesReadable: in the compact table and in --explain-row a missed row reads as values
// against limits in a person's units and names the limit that binds; no exponent, no percentage
// in the thousands.
func TestMissesReadable(t *testing.T) {
	q := qwenChat(t, 40, 1, "L40S", "H100-SXM")
	q.Space.MaxNumSeqs = []int{16, 256}
	q.Space.KVCacheDTypes = []string{"fp8"}
	p, err := Run(q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := p.WriteTable(&b, TableOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "misses TTFT ") || !strings.Contains(out, " > 500 ms") || !strings.Contains(out, " binds") {
		t.Errorf("no readable miss with its binding limit:\n%s", out)
	}
	if strings.Contains(out, "e+0") || regexp.MustCompile(`-\d{4,} ?%`).MatchString(out) {
		t.Errorf("an exponent or a five-digit percentage:\n%s", out)
	}
	for i := range p.Results {
		r := &p.Results[i]
		if r.Status != "missed" || r.Perf.Overload == nil {
			continue
		}
		b.Reset()
		if err := p.WriteRow(&b, r.Index); err != nil {
			t.Fatal(err)
		}
		row := b.String()
		if !strings.Contains(row, "Objective    TTFT p90 ") || !strings.Contains(row, "x the limit") || !strings.Contains(row, "Overloaded   "+r.Perf.Overload.Binds+" binds") {
			t.Errorf("--explain-row %d:\n%s", r.Index, row)
		}
		return
	}
	t.Errorf("no overloaded row in the sweep:\n%s", out)
}

// TestOverloadedRowMisses: a row whose max-num-seqs cannot keep up with the arrivals (its
// requests decode fast, the queue grows) does not answer the question, with a TPOT objective alone
// or with no objective at all: it is missed, says it does not keep up, and ranks after every row
// that keeps up.
func TestOverloadedRowMisses(t *testing.T) {
	for _, slo := range []workload.SLO{{TPOTms: 200}, {}} {
		q := qwenChat(t, 10, 1, "H100-SXM")
		q.Workload.SLO = slo
		q.Space.MaxNumSeqs = []int{1, 256}
		q.Space.MaxNumBatchedTokens = []int{8192}
		q.Space.KVCacheDTypes = []string{"fp8"}
		p, err := Run(q, Options{})
		if err != nil {
			t.Fatal(err)
		}
		lastMet, firstOver := 0, 0
		for i := range p.Results {
			r := &p.Results[i]
			if r.Perf == nil {
				continue
			}
			switch {
			case r.Perf.Overload != nil:
				if r.Status != "missed" || r.Perf.Met || !strings.Contains(shortMiss(r.Perf), "does not keep up") {
					t.Errorf("%+v: overloaded row %d: status %q, met %v, answer %q", slo, r.Index, r.Status, r.Perf.Met, shortMiss(r.Perf))
				}
				if firstOver == 0 || r.Rank < firstOver {
					firstOver = r.Rank
				}
			case r.Status == "ok":
				lastMet = max(lastMet, r.Rank)
			}
		}
		if firstOver == 0 || lastMet == 0 || firstOver < lastMet {
			t.Errorf("%+v: ranks: last row that keeps up %d, first overloaded row %d: want both, overloaded after", slo, lastMet, firstOver)
		}
	}
}
