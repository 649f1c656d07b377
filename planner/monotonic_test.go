package planner

import (
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/hf"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

func newServer(r *scenario.Resolved) (*sim.Server, error) {
	return sim.NewServer(r.Deployment, r.Params)
}

// models are the architectures the capacity properties are checked on: the built-in seed model
// and one config.json of each family shape (dense GQA, sliding-window MoE, MLA, sparse MLA,
// hybrid linear attention).
func models(t testing.TB) []*arch.Arch {
	t.Helper()
	a, err := arch.Builtin("glm-5.3-flash")
	if err != nil {
		t.Fatal(err)
	}
	out := []*arch.Arch{a}
	for _, dir := range []string{"llama-3.1-70b", "qwen3-32b", "gpt-oss-120b", "mixtral-8x7b-v0.1", "deepseek-v3", "deepseek-v3.2-exp",
		"qwen3-next-80b-a3b-instruct", "kimi-linear-48b-a3b-instruct"} {
		m, err := hf.Load(filepath.Join("..", "model", "hf", "testdata", dir, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// capacity is a configuration's KV capacity in tokens, all replicas together (0 when it cannot
// start), as the planner builds it, with a fixed max_model_len.
func capacity(q *Question, g hardware.GPU, count, tp int, ep bool, c Config) int {
	w := weightsFor(q.Model, &g, "auto")
	v := variant(q.Model, w)
	l := &layout{gpu: g, weights: w, arch: v, format: mainFormat(v), count: count, tp: tp, dp: count / tp, ep: ep}
	d, err := q.deployment(l, &c)
	if err != nil || d.Validate() != nil {
		return 0
	}
	p := param.Priors()
	srv, err := sim.NewServer(d, p)
	if err != nil {
		return 0
	}
	cc := Config{DP: l.dp, EP: ep}
	return cc.Replicas() * srv.Layout.KVCacheSizeTokens
}

func baseQuestion(a *arch.Arch) *Question {
	e := deploy.DefaultEngineConfig()
	e.MaxModelLen = 32768
	// The properties hold for any length, the models' own limits aside.
	e.AllowLongMaxModelLen = true
	return &Question{Model: a, Base: e}
}

// drawConfig draws a model, a GPU and engine flags.
func drawConfig(t *rapid.T, ms []*arch.Arch, cat []hardware.GPU) (*Question, hardware.GPU, Config) {
	a := rapid.SampledFrom(ms).Draw(t, "model")
	g := rapid.SampledFrom(cat).Draw(t, "gpu")
	c := Config{
		KVCacheDType:         rapid.SampledFrom([]string{"auto", "fp8"}).Draw(t, "kv"),
		MaxNumBatchedTokens:  rapid.SampledFrom([]int{2048, 8192, 16384}).Draw(t, "mbt"),
		MaxNumSeqs:           64,
		GPUMemoryUtilization: rapid.Float64Range(0.5, 0.98).Draw(t, "util"),
		MaxModelLen:          rapid.SampledFrom([]int{8192, 32768, 131072}).Draw(t, "mml"),
	}
	return baseQuestion(a), g, c
}

// TestMoreGPUsNeverReduceKVCapacity: doubling the GPUs of a configuration, as a larger tensor-
// parallel group or as a second data-parallel replica, never lowers the KV capacity in tokens.
func TestMoreGPUsNeverReduceKVCapacity(t *testing.T) {
	ms := models(t)
	cat := hardware.BuiltinCatalog().GPUs
	loaded := 0
	defer func() {
		// The property is vacuous if nothing loads: most draws must start a server.
		if loaded < 20 {
			t.Errorf("only %d draws started a server", loaded)
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		q, g, c := drawConfig(t, ms, cat)
		tp := rapid.SampledFrom([]int{1, 2, 4}).Draw(t, "tp")
		ep := q.Model.IsMoE() && rapid.Bool().Draw(t, "ep")
		small := capacity(q, g, tp, tp, ep && tp > 1, c)
		if small == 0 {
			// The smaller configuration cannot start (weights or one max-length request do not
			// fit): capacities are never negative, so the draw cannot fail the property. rapid
			// does not count a skipped draw and draws another (up to 10 x the check count), so
			// every one of the 100 checks, or 20 under -short, compares servers that start.
			t.Skip("the smaller configuration does not start")
		}
		loaded++
		wider := capacity(q, g, 2*tp, 2*tp, ep, c)
		more := capacity(q, g, 2*tp, tp, ep && tp > 1, c)
		if wider < small || more < small {
			t.Fatalf("%s on %s: %d GPUs (TP%d) hold %d tokens, but TP%d holds %d and TP%d x DP2 holds %d",
				q.Model.Name, g.Name, tp, tp, small, 2*tp, wider, tp, more)
		}
	})
}

// TestUtilizationNeverReducesKVCapacity: a higher gpu-memory-utilization never lowers it.
func TestUtilizationNeverReducesKVCapacity(t *testing.T) {
	ms := models(t)
	cat := hardware.BuiltinCatalog().GPUs
	rapid.Check(t, func(t *rapid.T) {
		q, g, c := drawConfig(t, ms, cat)
		tp := rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "tp")
		ep := q.Model.IsMoE() && tp > 1 && rapid.Bool().Draw(t, "ep")
		hi := c
		hi.GPUMemoryUtilization = rapid.Float64Range(c.GPUMemoryUtilization, 1).Draw(t, "util_hi")
		a, b := capacity(q, g, tp, tp, ep, c), capacity(q, g, tp, tp, ep, hi)
		if b < a {
			t.Fatalf("%s on %d x %s: utilization %.4f holds %d tokens, %.4f only %d", q.Model.Name, tp, g.Name, c.GPUMemoryUtilization, a, hi.GPUMemoryUtilization, b)
		}
	})
}

// faster is g with its memory bandwidth scaled.
func faster(g hardware.GPU, f float64) hardware.GPU {
	g.BandwidthGBps *= f
	return g
}

// TestFasterGPUNeverLowersDecodeThroughput: a GPU with the same memory and more bandwidth never
// decodes slower. Checked on the cost model's steady decode step over random configurations, and
// on full simulations of benchmark cells of the seed deployment.
func TestFasterGPUNeverLowersDecodeThroughput(t *testing.T) {
	r := seedResolved(t)
	cat := hardware.BuiltinCatalog().GPUs
	compared := 0
	rapid.Check(t, func(t *rapid.T) {
		g := rapid.SampledFrom(cat).Draw(t, "gpu")
		f := rapid.Float64Range(1, 4).Draw(t, "factor")
		d := *r.Deployment
		d.Engine.TensorParallel = rapid.SampledFrom([]int{4, 8}).Draw(t, "tp")
		d.Hardware = hardware.Machine{GPU: g, Count: d.Engine.TensorParallel}
		w := weightsFor(d.Model, &g, "auto")
		d.Model = variant(d.Model, w)
		if !rapid.Bool().Draw(t, "spec") {
			d.Engine.Speculative = deploy.Speculative{}
			d.Drafter = nil
		}
		ctx := rapid.SampledFrom([]int{8192, 131072, 524288}).Draw(t, "context")
		conc := rapid.IntRange(1, 64).Draw(t, "concurrency")
		slow, err := sim.NewServer(&d, r.Params)
		if err != nil {
			t.Skip(err)
		}
		d2 := d
		d2.Hardware.GPU = faster(g, f)
		fast, err := sim.NewServer(&d2, r.Params)
		if err != nil {
			t.Fatalf("the faster GPU cannot start: %v", err)
		}
		a, err := llmbench.Explain(slow, ctx, conc)
		if err != nil {
			t.Skip(err)
		}
		b, _ := llmbench.Explain(fast, ctx, conc)
		compared++
		if b.TotalTokS < a.TotalTokS {
			t.Fatalf("%s x %.3g bandwidth: steady decode %.2f tok/s < %.2f tok/s", g.Name, f, b.TotalTokS, a.TotalTokS)
		}
	})

	if compared < 20 {
		t.Errorf("only %d draws compared two servers", compared)
	}

	// Simulated cells: 8K x 4 and 32K x 16 on the seed deployment with bandwidth x 1 .. x 3.
	for _, cell := range []struct {
		ctx  string
		conc int
	}{{"8K", 4}, {"32K", 16}} {
		prev := 0.0
		for _, f := range []float64{1, 1.25, 1.5, 2, 3} {
			d := *r.Deployment
			d.Hardware.GPU = faster(d.Hardware.GPU, f)
			srv, err := sim.NewServer(&d, r.Params)
			if err != nil {
				t.Fatal(err)
			}
			s := &workload.Spec{Name: "c", Kind: workload.KindLLMBenchCell, Cell: workload.BenchFromProtocol(&r.Scenario.Protocol, cell.ctx, cell.conc)}
			s.Cell.DurationS = 5
			m, err := workload.Run(srv, s, workload.Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if m.OutputTokS < prev {
				t.Errorf("%s x %d: bandwidth x %g gives %.1f tok/s, less than %.1f at the step below", cell.ctx, cell.conc, f, m.OutputTokS, prev)
			}
			prev = m.OutputTokS
		}
	}
}
