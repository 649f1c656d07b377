package calibration

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
)

// TestLevelKeysEngineSeries: the engine key is the release series with the engine generation, so
// dev, post and patch builds of one series share engine-level values and V0 and V1 never do.
func TestLevelKeysEngineSeries(t *testing.T) {
	_, b := twoGPUs(t)
	key := func(v string) string {
		d := *b
		d.Engine.Version = v
		return priors.Keys(&d).Engine
	}
	if a, c := key("0.6.3.post2.dev308+gb489fc3c"), key("0.6.3.dev109"); a != c || a != "vllm 0.6.x (V0)" {
		t.Errorf("0.6.3 builds: keys %q and %q, want both \"vllm 0.6.x (V0)\"", a, c)
	}
	if a, c := key("0.7.4.dev181"), key("0.7.3.dev138"); a != c || !strings.HasSuffix(a, "(V0)") {
		t.Errorf("0.7.x builds: keys %q and %q, want one V0 key", a, c)
	}
	if a := key("0.8.0"); a != "vllm 0.8.x (V1)" {
		t.Errorf("0.8.0: key %q, want \"vllm 0.8.x (V1)\"", a)
	}
	if a, c := key("0.7.4"), key("0.8.1"); a == c {
		t.Errorf("V0 and V1 share the engine key %q", a)
	}
}

// TestFitMultiEngineErrorToEngine: two engines on one GPU (H100), vLLM 0.6.3 (V0: CPU work adds
// to the GPU step) and the default V1 release (asynchronous scheduling hides the CPU). The
// "measurements" are the cost model's decode step times at the truth: the GPU's bandwidth a little
// below its generation's prior, and the V0 engine slower per step than its prior (more fixed and
// per-sequence CPU time). Fitting the GPU's bandwidth with the V0 engine's CPU overheads, the
// GPU gets its own error and the V0 engine's lands on the V0 engine's entries: the V1 data pins
// the GPU (on the V0 data alone the two trade off, and the penalties decide). Each batch size
// weighs as about a hundred measured rows, so that the data, not the priors, set the values.
func TestFitMultiEngineErrorToEngine(t *testing.T) {
	_, h := twoGPUs(t)
	h.Engine.Speculative, h.Drafter = deploy.Speculative{}, nil
	v1 := *h
	v1.Engine.Version, v1.Engine.AsyncScheduling = deploy.DefaultVersion, true
	v0 := *h
	v0.Engine.Version, v0.Engine.AsyncScheduling = "0.6.3.post2.dev308", false
	if priors.Keys(&v0).GPU != priors.Keys(&v1).GPU || priors.Keys(&v0).Engine == priors.Keys(&v1).Engine {
		t.Fatalf("keys %+v and %+v: want one GPU, two engines", priors.Keys(&v0), priors.Keys(&v1))
	}
	prior0, _ := priors.Of(&v0)
	prior1, _ := priors.Of(&v1)
	bwTruth := prior0[param.MemBWEff] - 0.04
	truth0, truth1 := prior0, prior1
	truth0[param.MemBWEff], truth1[param.MemBWEff] = bwTruth, bwTruth
	truth0[param.CPUStepUS], truth0[param.CPUPerReqUS] = 3500, 40
	batches := []int{1, 2, 4, 8, 16, 32, 64, 128, 192, 256}
	step := func(d *deploy.Deployment, p param.Values, n int) float64 {
		var s cost.StepShape
		for i := 0; i < n; i++ {
			s.Add(cost.SeqWork{Start: 2048, Tokens: 1, Decode: true, Emits: true})
		}
		return cost.New(d, p).Step(&s).TotalSeconds
	}
	source := func(name string, d *deploy.Deployment, truth param.Values) *MultiSource {
		s := &MultiSource{Name: name, NResid: len(batches)}
		meas := make([]float64, len(batches))
		for i, n := range batches {
			meas[i] = step(d, truth, n)
			s.Jobs = append(s.Jobs, MultiJob{Label: name, Deployment: d, Cost: 1,
				Run: func(p param.Values) (any, error) { return step(d, p, n), nil }})
		}
		s.Score = func(res []any, errs []error, r []float64) {
			for i := range r {
				r[i] = 10 * math.Log(res[i].(float64)/meas[i]) // as ~100 measured rows per batch size

			}
		}
		return s
	}
	free := func(j *MultiJob) []param.ID {
		ids := []param.ID{param.MemBWEff}
		if !j.Deployment.Engine.AsyncScheduling {
			ids = append(ids, param.CPUStepUS, param.CPUPerReqUS)
		}
		return ids
	}
	p := &MultiProblem{Sources: []*MultiSource{source("v1", &v1, truth1), source("v0", &v0, truth0)}, Free: free}
	res, err := FitMulti(p, &Settings{Workers: 2, MaxIter: 30})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.ParamsFor(&v0)
	if bw := got[param.MemBWEff]; math.Abs(bw/bwTruth-1) > 0.01 {
		t.Errorf("mem_bw_eff[%s] %.4f, want the truth %.4f (prior %.4f): the GPU and the engine are not told apart", priors.Keys(&v0).GPU, bw, bwTruth, prior0[param.MemBWEff])
	}
	if c := got[param.CPUStepUS]; math.Abs(c/truth0[param.CPUStepUS]-1) > 0.15 {
		t.Errorf("cpu_step_us[%s] %.0f, want near the truth %.0f (prior %.0f)", priors.Keys(&v0).Engine, c, truth0[param.CPUStepUS], prior0[param.CPUStepUS])
	}
	if c := got[param.CPUPerReqUS]; math.Abs(c/truth0[param.CPUPerReqUS]-1) > 0.15 {
		t.Errorf("cpu_per_req_us[%s] %.1f, want near the truth %.0f (prior %.0f)", priors.Keys(&v0).Engine, c, truth0[param.CPUPerReqUS], prior0[param.CPUPerReqUS])
	}
	if g, _ := res.ParamsFor(&v1); g[param.CPUStepUS] != prior1[param.CPUStepUS] || g[param.CPUPerReqUS] != prior1[param.CPUPerReqUS] {
		t.Errorf("V1 engine: cpu_step_us %.0f cpu_per_req_us %.1f, want its priors %.0f %.1f (not fitted)", g[param.CPUStepUS], g[param.CPUPerReqUS], prior1[param.CPUStepUS], prior1[param.CPUPerReqUS])
	}
}

// TestMultiFreeV0NoGPU: by default a vLLM V0 run calibrates its engine's entries but none of its
// GPU's, while a V1 run on the same deployment frees the GPU's memory bandwidth; an explicit
// free list is taken as given.
func TestMultiFreeV0NoGPU(t *testing.T) {
	_, h := twoGPUs(t)
	v0 := *h
	v0.Engine.Version, v0.Engine.AsyncScheduling = "0.7.3", false
	v1 := *h
	v1.Engine.Version = deploy.DefaultVersion
	levels := func(ids []param.ID) map[param.Level]int {
		m := map[param.Level]int{}
		for _, id := range ids {
			m[id.Def().Level]++
		}
		return m
	}
	p := &MultiProblem{}
	if l := levels(p.free(&MultiJob{Deployment: &v0})); l[param.LevelGPU] != 0 || l[param.LevelEngine] == 0 {
		t.Errorf("V0 run frees %v by level, want no gpu-level and some engine-level", l)
	}
	f1 := p.free(&MultiJob{Deployment: &v1})
	if l := levels(f1); l[param.LevelGPU] == 0 || !slices.Contains(f1, param.MemBWEff) {
		t.Errorf("V1 run frees %v by level, want mem_bw_eff among its gpu-level ones", l)
	}
	p.Free = func(*MultiJob) []param.ID { return []param.ID{param.MemBWEff} }
	if f := p.free(&MultiJob{Deployment: &v0}); len(f) != 1 || f[0] != param.MemBWEff {
		t.Errorf("explicit free list on a V0 run: %v, want [mem_bw_eff]", f)
	}
}
