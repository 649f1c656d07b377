package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/workload"
)

// shardJSON is a minimal plan file: a question of one GPU kind and layout rows pruned for
// memory with the given indices, its fingerprint, counts and ranks those of its rows. shard is
// the shard header's JSON ("" for none).
func shardJSON(rows int, shard string, idx ...int) string {
	qi := QuestionInfo{GPUs: []hardware.GPU{{Name: "G", PricePerHour: 2}}, Space: Space{MaxGPUs: 1, Counts: []int{1}}}
	p := &Plan{Format: FormatVersion, Question: qi, Fingerprint: fingerprint(&qi), Rows: rows}
	if shard != "" {
		p.Shard = new(Shard)
		if err := json.Unmarshal([]byte(shard), p.Shard); err != nil {
			panic(err)
		}
	}
	for _, i := range idx {
		p.Results = append(p.Results, Result{Index: i, Config: Config{GPU: "G", Count: 1, TP: 1, DP: 1, Weights: "native"}, Scope: "layout",
			Status: StatusPruned, Stage: StageMemory, PriceHour: 2})
	}
	p.finalize()
	var b bytes.Buffer
	if err := p.WriteJSON(&b); err != nil {
		panic(err)
	}
	return b.String()
}

// TestReadJSONRejectsBadShards: ReadJSON does not trust a plan file's shard header or row
// indices; each bad one is an error naming the file and the field, not a panic or a 16 TB
// allocation in Merge.
func TestReadJSONRejectsBadShards(t *testing.T) {
	cases := []struct {
		name, json, want string
	}{
		{"index past count", shardJSON(4, `{"index":5,"count":2}`), `bad.json: field "shard": shard 5/2`},
		{"count 0", shardJSON(4, `{"index":0,"count":0}`), `field "shard": shard 0/0`},
		{"count -1", shardJSON(4, `{"index":0,"count":-1}`), `field "shard": shard 0/-1`},
		{"count 1e12", shardJSON(4, `{"index":0,"count":1000000000000}`), "n <= 65536"},
		{"negative index", shardJSON(4, `{"index":-1,"count":2}`), `field "shard": shard -1/2`},
		{"row -1", shardJSON(4, `{"index":0,"count":2}`, 0, -1), `field "index" = -1: want 0 <= index`},
		{"row twice", shardJSON(4, `{"index":0,"count":2}`, 2, 2), `results[1]: field "index" = 2: row given twice`},
		{"row of another shard", shardJSON(4, `{"index":0,"count":2}`, 1), `field "index" = 1 is not in shard 0/2`},
		{"row past rows", shardJSON(4, "", 4), `field "index" = 4: want 0 <= index < rows (4)`},
		{"negative rows", shardJSON(-3, ""), `field "rows" = -3`},
		{"more results than rows", shardJSON(1, "", 0, 1), `field "rows" = 1`},
	}
	for _, c := range cases {
		_, err := ReadJSON(strings.NewReader(c.json), "bad.json")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	// The good shards read and merge; a shard whose row count differs is refused.
	a, err := ReadJSON(strings.NewReader(shardJSON(4, `{"index":0,"count":2}`, 0, 2)), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadJSON(strings.NewReader(shardJSON(4, `{"index":1,"count":2}`, 1, 3)), "b.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge([]*Plan{a, b}, []string{"a.json", "b.json"}, false)
	if err != nil || len(m.Results) != 4 {
		t.Fatalf("merge of good shards: %v", err)
	}
	c, err := ReadJSON(strings.NewReader(shardJSON(6, `{"index":1,"count":2}`, 1, 3)), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge([]*Plan{a, c}, []string{"a.json", "c.json"}, false); err == nil || !strings.Contains(err.Error(), `c.json: field "rows" = 6`) {
		t.Errorf("merge of shards of different row counts: %v", err)
	}
	// Merge does not trust plans built in memory either.
	bad := &Plan{Format: FormatVersion, Rows: 4, Shard: &Shard{Index: 5, Count: 2}}
	if _, err := Merge([]*Plan{bad}, []string{"mem"}, true); err == nil || !strings.Contains(err.Error(), "mem: field \"shard\"") {
		t.Errorf("Merge of an in-memory bad shard: %v", err)
	}
}

// FuzzReadJSONMerge: a plan file (as merge reads it) never panics ReadJSON or a Merge of it
// with itself, and never makes Merge allocate by an untrusted count.
func FuzzReadJSONMerge(f *testing.F) {
	f.Add(shardJSON(4, `{"index":0,"count":2}`, 0, 2))
	f.Add(shardJSON(4, "", 0, 1, 2, 3))
	f.Add(shardJSON(4, `{"index":5,"count":2}`))
	f.Add(`{"servesim_plan":1,"rows":2,"results":[{"index":0,"status":"ok","same_as":1},{"index":1,"status":"ok","perf":{}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<14 {
			return
		}
		p, err := ReadJSON(strings.NewReader(s), "f.json")
		if err != nil {
			return
		}
		m, err := Merge([]*Plan{p}, []string{"f.json"}, true)
		if err != nil {
			return
		}
		_ = m.WriteTable(io.Discard, TableOptions{Top: 5})
		_ = m.WriteCSV(io.Discard)
		_ = m.WriteJSON(io.Discard)
	})
}

// FuzzSpaceNormalize: the sweep the plan's list flags give (--max-gpus, --gpu-counts, --tp,
// --max-num-seqs, --max-num-batched-tokens, --spec, --gpu-memory-utilization, --max-model-len)
// either normalizes into a checked sweep or is an error; never a panic, never a value outside its
// range after normalize.
func FuzzSpaceNormalize(f *testing.F) {
	f.Add(8, 4, 2, 32, 8192, 7, 0.92, 0)
	f.Add(0, 0, 0, 0, 0, 0, 0.0, 0)
	f.Add(4097, -1, 3, 1<<21, 8, 33, 1.5, -5)
	f.Fuzz(func(t *testing.T, maxGPUs, count, tp, mns, mbt, spec int, util float64, mml int) {
		s := Space{MaxGPUs: maxGPUs, MaxModelLen: mml}
		if count != 0 {
			s.Counts = []int{count, count}
		}
		if tp != 0 {
			s.TP = []int{tp}
		}
		if mns != 0 {
			s.MaxNumSeqs = []int{mns}
		}
		if mbt != 0 {
			s.MaxNumBatchedTokens = []int{mbt}
		}
		s.SpecTokens = []int{spec}
		if util != 0 {
			s.GPUMemoryUtilization = []float64{util}
		}
		if err := s.normalize(); err != nil {
			return
		}
		if s.MaxGPUs < 1 || s.MaxGPUs > 4096 || len(s.Counts) == 0 || s.MaxModelLen < 0 {
			t.Fatalf("normalized sweep %+v", s)
		}
		for _, c := range s.Counts {
			if c < 1 || c > s.MaxGPUs {
				t.Fatalf("count %d outside 1..%d", c, s.MaxGPUs)
			}
		}
		for _, u := range s.GPUMemoryUtilization {
			if !(u > 0 && u <= 1) {
				t.Fatalf("utilization %v", u)
			}
		}
	})
}

// TestMergeChecksShardFigures: merge does not trust a shard's figures. Each edit of a real
// shard (a price, a status, the model, a figure beyond what the GPUs can do, a rank, a flag
// outside the sweep, a shared simulation's figures) is refused with the file, the row and the
// field, by ReadJSON or by Merge; the shards as written merge.
func TestMergeChecksShardFigures(t *testing.T) {
	var files [2][]byte
	for i := range files {
		files[i] = planJSON(t, mustRun(t, smallSweep(t), Options{Shard: Shard{Index: i, Count: 2}, Workers: 2}))
	}
	read := func(i int) *Plan {
		p, err := ReadJSON(bytes.NewReader(files[i]), fmt.Sprintf("shard-%d.json", i))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// okRow is the index in results of shard 1's first row that meets the objectives and
	// carries its own simulation.
	okRow := func(p *Plan) int {
		for k := range p.Results {
			if r := &p.Results[k]; r.Status == StatusOK && r.SameAs == nil {
				return k
			}
		}
		t.Fatal("shard 1 has no row that meets the objectives")
		return 0
	}
	// sharedRow is the index in results of shard 1's first simulated row whose simulation is
	// shard 0's.
	sharedRow := func(p *Plan) int {
		for k := range p.Results {
			if r := &p.Results[k]; r.SameAs != nil && *r.SameAs%2 == 0 && r.Perf != nil {
				return k
			}
		}
		t.Fatal("no row of shard 1 shares a simulation of shard 0")
		return 0
	}
	if _, err := Merge([]*Plan{read(0), read(1)}, []string{"shard-0.json", "shard-1.json"}, false); err != nil {
		t.Fatalf("the shards as written: %v", err)
	}
	perf := func(p *Plan, k int) *Perf { c := *p.Results[k].Perf; p.Results[k].Perf = &c; return &c }
	cases := []struct {
		name string
		edit func(p *Plan) // of shard 1
		want string
	}{
		{"price", func(p *Plan) { p.Results[okRow(p)].PriceHour = -1e308 }, `field "usd_per_hour" = -1e+308`},
		{"status", func(p *Plan) { p.Results[okRow(p)].Status = StatusMissed }, `field "status" = "missed": its figures give "ok"`},
		{"model", func(p *Plan) { p.Question.Model = "other-model" }, `field "fingerprint"`},
		{"model and fingerprint", func(p *Plan) { p.Question.Model = "other-model"; p.Fingerprint = fingerprint(&p.Question) }, "the shards answer different questions"},
		{"GPU price in the question", func(p *Plan) { p.Question.GPUs[0].PricePerHour = -1; p.Fingerprint = fingerprint(&p.Question) }, `field "PricePerHour" = -1`},
		{"throughput", func(p *Plan) { f := perf(p, okRow(p)); f.OutputTokS, f.TotalTokS = 1e308, 1e308 }, "can compute"},
		{"output above total", func(p *Plan) { f := perf(p, okRow(p)); f.OutputTokS = f.TotalTokS * 2 }, `field "perf.output_tok_s"`},
		{"negative latency", func(p *Plan) { perf(p, okRow(p)).TTFTp50 = -5 }, `field "perf.ttft_ms_p50" = -5`},
		{"share above one", func(p *Plan) { perf(p, okRow(p)).KVPeak = 3 }, `field "perf.kv_usage_peak" = 3`},
		{"KV cache", func(p *Plan) { p.Results[okRow(p)].KVTokens = 1 << 50 }, `field "kv_cache_size_tokens"`},
		{"check verdict", func(p *Plan) {
			f := perf(p, okRow(p))
			f.Checks = append([]workload.Check(nil), f.Checks...)
			f.Checks[0].Met = false
		}, `perf.checks[0]`},
		{"check limit", func(p *Plan) {
			f := perf(p, okRow(p))
			f.Checks = append([]workload.Check(nil), f.Checks...)
			f.Checks[0].Limit *= 10
		}, "the question's objective"},
		{"met", func(p *Plan) { perf(p, okRow(p)).Met = false }, `field "perf.met" = false`},
		{"p_meet", func(p *Plan) { x := 2.0; p.Results[okRow(p)].PMeet = &x }, `field "p_meet" = 2`},
		{"cost", func(p *Plan) { p.Results[okRow(p)].CostPerMTok = 0.001 }, `field "usd_per_m_output_tokens"`},
		{"rank", func(p *Plan) { p.Results[okRow(p)].Rank = 1000 }, `field "rank" = 1000`},
		{"order", func(p *Plan) { p.Results[0], p.Results[1] = p.Results[1], p.Results[0] }, "the rows' figures rank row"},
		{"counts", func(p *Plan) { p.Counts.Met++ }, `field "counts"`},
		{"flag outside the sweep", func(p *Plan) { p.Results[okRow(p)].Config.MaxNumSeqs = 7 }, `field "config.max_num_seqs" = 7`},
		{"GPU", func(p *Plan) { p.Results[okRow(p)].Config.GPU = "B200" }, `field "config.gpu" = "B200"`},
		{"layout", func(p *Plan) { p.Results[okRow(p)].Config.DP = 3 }, "want tp x dp = gpus"},
		{"current", func(p *Plan) {
			for k := range p.Results {
				if !p.Results[k].Current {
					p.Results[k].Current = true
					return
				}
			}
		}, `field "current"`},
		{"shared simulation", func(p *Plan) { perf(p, sharedRow(p)).TTFTq *= 1.01 }, "shares row"},
		{"notes", func(p *Plan) { p.Notes = append(p.Notes, "edited") }, `field "notes" differs`},
	}
	for _, c := range cases {
		p := read(1)
		c.edit(p)
		var b bytes.Buffer
		if err := p.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		p1, err := ReadJSON(&b, "shard-1.json")
		if err == nil {
			_, err = Merge([]*Plan{read(0), p1}, []string{"shard-0.json", "shard-1.json"}, false)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "shard-1.json") {
			t.Errorf("%s: err = %v, want %q naming shard-1.json", c.name, err, c.want)
		}
	}
}
