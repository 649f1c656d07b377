package planner

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/workload"
)

func seedResolved(t testing.TB) *scenario.Resolved {
	t.Helper()
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func gpus(t testing.TB, names ...string) []hardware.GPU {
	t.Helper()
	cat := hardware.BuiltinCatalog()
	var out []hardware.GPU
	for _, n := range names {
		g, err := cat.Find(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// question is the seed model and engine with a bench workload and a small sweep.
func question(t testing.TB, r *scenario.Resolved, ctx string, users int, window float64, gs []hardware.GPU, sp Space) *Question {
	t.Helper()
	ch, ref, err := DefaultParams("", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &workload.Spec{Name: "q", Kind: workload.KindLLMBenchCell, Cell: workload.BenchFromProtocol(&r.Scenario.Protocol, ctx, users), SLO: workload.SLO{TPOTms: 40}}
	w.Cell.ReadyLimitS = 60
	if window > 0 {
		w.Cell.DurationS = window
	}
	return &Question{Model: r.Deployment.Model, Drafter: r.Deployment.Drafter, ModelRef: "glm-5.3-flash", DrafterRef: r.Deployment.Engine.Speculative.Model,
		Workload: w, Base: r.Deployment.Engine, GPUs: gs, Space: sp, Seed: r.Scenario.Seed, Params: ch, ParamsRef: ref,
		Current: CurrentConfig(r.Deployment)}
}

// TestSeedConfigMatchesMatrix: the seed's own configuration is a row of the sweep, marked
// current, and its prediction is the 128K x 16 cell of the tool's run of that one cell.
func TestSeedConfigMatchesMatrix(t *testing.T) {
	r := seedResolved(t)
	// The seed's method only: GLM-5.3-Flash's own MTP layer, which the default sweep adds, is
	// another row (TestSeedSweepAddsMTP).
	sp := Space{Counts: []int{4}, TP: []int{4}, EP: []bool{true}, MaxNumSeqs: []int{32}, MaxNumBatchedTokens: []int{8192},
		KVCacheDTypes: []string{"fp8"}, SpecTokens: []int{7}, GPUMemoryUtilization: []float64{0.92}, SpecMethods: []string{"dflash"}}
	q := question(t, r, "128K", 16, 0, gpus(t, "RTX-PRO-6000-Server"), sp)
	p, err := Run(q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// One row: the seed's DFlash k = 7 (ngram is swept only when --spec-methods names it).
	if len(p.Results) != 1 || p.Results[0].Config.SpecMethod != "dflash" {
		t.Fatalf("%d rows, want 1 (dflash k = 7)", len(p.Results))
	}
	row := p.Results[0]
	if !row.Current || row.Status != "ok" || row.Perf == nil {
		t.Fatalf("seed row: current %v, status %s (%s)", row.Current, row.Status, row.Reason)
	}
	srv, err := newServer(r)
	if err != nil {
		t.Fatal(err)
	}
	// The tool's run of that one cell (warm-ups, then the cell), as a bench workload runs it.
	proto := r.Scenario.Protocol
	proto.Contexts, proto.PrefillOnly, proto.Concurrency = []string{"128K"}, nil, []int{16}
	res, err := llmbench.RunMatrix(srv, &proto, llmbench.Options{Seed: r.Scenario.Seed})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Matrix.Decode[0]
	if row.Perf.OutputTokS != c.TotalTokS || row.Perf.TTFTp50 != c.TTFTms || row.Perf.TPOTp50 != c.TBTms || row.KVTokens != srv.Layout.KVCacheSizeTokens {
		t.Errorf("plan: %.6g tok/s, TTFT %.6g ms, TBT %.6g ms, KV %d; matrix: %.6g, %.6g, %.6g, %d",
			row.Perf.OutputTokS, row.Perf.TTFTp50, row.Perf.TPOTp50, row.KVTokens, c.TotalTokS, c.TTFTms, c.TBTms, srv.Layout.KVCacheSizeTokens)
	}
}

func smallSweep(t testing.TB) *Question {
	r := seedResolved(t)
	sp := Space{Counts: []int{4, 8}, MaxNumSeqs: []int{2, 16, 32}, MaxNumBatchedTokens: []int{8192}, KVCacheDTypes: []string{"fp8", "auto"},
		SpecTokens: []int{0, 7}, GPUMemoryUtilization: []float64{0.9}}
	return question(t, r, "8K", 4, 2, gpus(t, "RTX-PRO-6000-Server", "H200", "H100"), sp)
}

func planJSON(t testing.TB, p *Plan) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestShardMergeEquivalence: merging every shard gives the unsharded plan byte for byte,
// whatever the shard count, the order of the files and the number of workers.
func TestShardMergeEquivalence(t *testing.T) {
	q := smallSweep(t)
	full, err := Run(q, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := planJSON(t, full)
	if full.Counts.Simulated == 0 || full.Counts.Pruned == 0 {
		t.Fatalf("sweep too small to test: %+v", full.Counts)
	}
	if got := planJSON(t, mustRun(t, smallSweep(t), Options{Workers: 3})); !bytes.Equal(got, want) {
		t.Fatalf("3 workers gave a different plan than 1")
	}
	// Round trip through JSON.
	back, err := ReadJSON(bytes.NewReader(want), "full.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := planJSON(t, back); !bytes.Equal(got, want) {
		t.Fatalf("JSON round trip changed the plan")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 5} {
		if raceEnabled && n > 2 {
			break // the workers' races show with two shards; five are the plain run's check
		}
		var plans []*Plan
		var names []string
		for i := 0; i < n; i++ {
			p := mustRun(t, smallSweep(t), Options{Shard: Shard{Index: i, Count: n}, Workers: 2})
			// Through JSON, as the files would be.
			rp, err := ReadJSON(bytes.NewReader(planJSON(t, p)), fmt.Sprintf("shard-%d.json", i))
			if err != nil {
				t.Fatal(err)
			}
			plans = append(plans, rp)
			names = append(names, fmt.Sprintf("shard-%d.json", i))
		}
		rng.Shuffle(n, func(i, j int) { plans[i], plans[j] = plans[j], plans[i]; names[i], names[j] = names[j], names[i] })
		m, err := Merge(plans, names, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := planJSON(t, m); !bytes.Equal(got, want) {
			t.Errorf("merge of %d shards differs from the unsharded plan", n)
		}
		if _, err := Merge(plans[1:], names[1:], false); err == nil || !strings.Contains(err.Error(), "missing") {
			t.Errorf("merge without a shard: %v", err)
		}
		if _, err := Merge(append(plans, plans[0]), append(names, "again.json"), false); err == nil || !strings.Contains(err.Error(), "given twice") {
			t.Errorf("merge with a shard twice: %v", err)
		}
		if m, err := Merge(plans[1:], names[1:], true); err != nil || !strings.Contains(strings.Join(m.Notes, " "), "partial") {
			t.Errorf("partial merge: %v", err)
		}
	}
	other := smallSweep(t)
	other.Seed = 99
	o := mustRun(t, other, Options{Shard: Shard{Index: 0, Count: 2}})
	p1 := mustRun(t, smallSweep(t), Options{Shard: Shard{Index: 1, Count: 2}})
	if _, err := Merge([]*Plan{o, p1}, []string{"a.json", "b.json"}, false); err == nil || !strings.Contains(err.Error(), "fingerprint") {
		t.Errorf("merge across questions: %v", err)
	}
}

func mustRun(t testing.TB, q *Question, o Options) *Plan {
	t.Helper()
	p, err := Run(q, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPruneReasons checks each pruning stage names its reason.
func TestPruneReasons(t *testing.T) {
	r := seedResolved(t)
	sp := Space{Counts: []int{1, 3, 4}, TP: []int{1, 3, 4}, EP: []bool{true}, MaxNumSeqs: []int{32}, MaxNumBatchedTokens: []int{8192},
		KVCacheDTypes: []string{"fp8"}, SpecTokens: []int{0}, GPUMemoryUtilization: []float64{0.92}, Weights: []string{"native"}}
	q := question(t, r, "512K", 16, 2, gpus(t, "RTX-PRO-6000-Server", "MI300X"), sp)
	p := mustRun(t, q, Options{})
	want := map[string]string{
		StageFormat:   "vLLM does not run NVFP4 (ModelOpt FP4) checkpoints on MI300X",
		StageParallel: "tensor_parallel_size = 3 does not divide",
		StageMemory:   "nothing left for KV cache",
		StageCapacity: "over capacity: 16 streams per replica x (524288 + 4096)",
	}
	for stage, text := range want {
		found := false
		for _, row := range p.Results {
			if row.Stage == stage && strings.Contains(row.Reason, text) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s prune mentioning %q", stage, text)
		}
	}
	if p.Counts.Pruned != len(p.Results) {
		t.Errorf("every row should be pruned: %+v", p.Counts)
	}
	var b bytes.Buffer
	if err := p.WriteTable(&b, TableOptions{}); err != nil || !strings.Contains(b.String(), "No configuration loads") {
		t.Errorf("table of an all-pruned plan: %v\n%s", err, b.String())
	}
}

func TestRender(t *testing.T) {
	p := mustRun(t, smallSweep(t), Options{})
	var b bytes.Buffer
	if err := p.WriteTable(&b, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Question", "Objectives   TPOT p90 <= 40 ms", "Best configuration", "Capacity frontier", "Pruned", "H100-SXM"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := p.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != len(p.Results)+1 {
		t.Errorf("CSV has %d lines for %d rows", len(lines), len(p.Results))
	}
	if p.Results[0].Rank != 1 || p.Results[0].Perf == nil {
		t.Errorf("first row: %+v", p.Results[0])
	}
	for i := 1; i < len(p.Results); i++ {
		a, c := &p.Results[i-1], &p.Results[i]
		if a.Status == "ok" && c.Status == "ok" && a.PriceHour > c.PriceHour {
			t.Errorf("row %d ($%g/h) ranked above row %d ($%g/h)", a.Index, a.PriceHour, c.Index, c.PriceHour)
		}
	}
}

// TestContextTooLongSuggests: Qwen3-30B-A3B allows 40,960 tokens (max_position_embeddings), so
// with 4,096 output tokens and the 64-token margin the room is 36,800. A context up to 10 % above
// the room is trimmed to it, as llm-inference-bench does, and said in a note (38K: 38,912); one
// further above is refused as vLLM would refuse it, naming the longest context that fits (40K:
// 40,960); the room itself fits as given.
func TestContextTooLongSuggests(t *testing.T) {
	r := seedResolved(t)
	p := r.Scenario.Protocol
	room := 40960 - p.MaxOutput - p.MarginTokens
	for _, c := range []struct {
		ctx        string
		refuse     string
		note       string
		modelLenOK bool
	}{
		{"40K", fmt.Sprintf("--context %d", room), "", false},
		{"38K", "", fmt.Sprintf("context 38K trimmed to %d tokens", room), true},
		{fmt.Sprint(room), "", "", true},
	} {
		q := qwenChat(t, 1, 1, "H100-SXM")
		if q.Model.MaxModelLen != 40960 {
			t.Fatalf("Qwen3-30B-A3B max_model_len %d, want 40960", q.Model.MaxModelLen)
		}
		q.Workload = &workload.Spec{Name: "q", Kind: workload.KindLLMBenchCell, Cell: workload.BenchFromProtocol(&p, c.ctx, 1)}
		err := q.validate()
		switch {
		case c.refuse == "" && err != nil:
			t.Errorf("context %s: %v; want it accepted", c.ctx, err)
		case c.refuse != "" && (err == nil || !strings.Contains(err.Error(), c.refuse)):
			t.Errorf("context %s: %v; want a refusal suggesting %s", c.ctx, err, c.refuse)
		}
		if c.modelLenOK && q.maxModelLen() != 40960 {
			t.Errorf("context %s: rows get max_model_len %d, want the model's 40960", c.ctx, q.maxModelLen())
		}
		if n := q.contextNote(); (c.note == "") != (n == "") || !strings.Contains(n, c.note) {
			t.Errorf("context %s: note %q, want %q", c.ctx, n, c.note)
		}
	}
}

// TestSeedSweepAddsMTP: GLM-5.3-Flash ships one MTP layer, so the default sweep of the seed's
// question adds the checkpoint's own MTP beside the seed's DFlash drafter at each k.
func TestSeedSweepAddsMTP(t *testing.T) {
	r := seedResolved(t)
	sp := Space{Counts: []int{4}, TP: []int{4}, EP: []bool{true}, MaxNumSeqs: []int{32}, MaxNumBatchedTokens: []int{8192},
		KVCacheDTypes: []string{"fp8"}, SpecTokens: []int{3}, GPUMemoryUtilization: []float64{0.92}}
	q := question(t, r, "8K", 4, 0, gpus(t, "RTX-PRO-6000-Server"), sp)
	if err := q.validate(); err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, o := range q.specOptions() {
		methods = append(methods, o.method)
	}
	if len(methods) != 2 || methods[0] != "dflash" || methods[1] != "mtp" {
		t.Errorf("speculative options %v, want dflash and mtp", methods)
	}
}
