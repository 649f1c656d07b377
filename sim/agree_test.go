package sim_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/agree/golden from the step-by-step mode")

// agreeTol is the agreement the fast mode promises with step by step, on every reported number
// (relative; numbers below agreeFloor in absolute value compare absolutely).
const (
	agreeTol   = 1e-3
	agreeFloor = 1e-9
)

// agreeCase is one workload of the family the two modes must agree on.
type agreeCase struct {
	name     string
	scenario string // file under testdata, "" for the embedded seed
	workload string // file under testdata/agree, or a preset
	why      string
}

func agreeFamily() []agreeCase {
	qwen := filepath.Join("perf", "h100-qwen3-14b.toml")
	return []agreeCase{
		{"closed", qwen, "closed.toml", "closed loop, 64 clients"},
		{"poisson", qwen, "poisson.toml", "Poisson below capacity, with objectives (goodput)"},
		{"overload", qwen, "overload.toml", "Poisson past capacity: growing queue, full KV cache, preemptions"},
		{"bursty", qwen, "bursty.toml", "gamma arrivals, cv 3"},
		{"prefix", qwen, "prefix.toml", "shared prefixes: prefix-cache hits"},
		{"ramp", qwen, "ramp.toml", "rate ramp into overload"},
		{"preempt", filepath.Join("agree", "small-kv.toml"), "preempt.toml", "a small KV cache: preemption and recomputation throughout"},
		{"hybrid", filepath.Join("agree", "seed-nospec.toml"), "hybrid.toml", "hybrid layout (state, full, sliding groups) with lazy decoders"},
		{"trace", qwen, "trace.toml", "trace replay with prefix ids"},
		{"chat-seed", "", "chat", "speculative decoding (DFlash, k = 7): every decoder explicit"},
		{"bench-seed", "", "bench-32Kx8", "an llm-inference-bench cell: window, readiness gate, cancellation"},
	}
}

func agreeServer(t testing.TB, file string) (*sim.Server, uint64) {
	t.Helper()
	r := sim.ResolvedFromTestdata(t, file)
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	return srv, r.Scenario.Seed
}

func agreeWorkload(t testing.TB, name string) *workload.Spec {
	t.Helper()
	if !strings.HasSuffix(name, ".toml") {
		s, err := workload.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s, err := workload.Load(filepath.Join("testdata", "agree", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runJSON(t testing.TB, srv *sim.Server, w *workload.Spec, seed uint64, stepByStep bool) []byte {
	t.Helper()
	srv.StepByStep = stepByStep
	m, err := workload.Run(srv, w, workload.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := workload.WriteJSON(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFastAgreesWithStepByStep is the contract of the fast mode (doc.go): over a family of
// workloads (closed loop, Poisson, bursty, prefix sharing, overload, preemption, a ramp, a
// trace, a hybrid model, speculative decoding, a benchmark cell) every number the workload
// reports (throughputs, every latency quantile, ITL, preemptions, KV-usage samples, goodput,
// engine steps) agrees with the step-by-step mode within 0.1 %. The step-by-step mode itself
// must reproduce testdata/agree/golden byte for byte: those files were first written by
// `servesim simulate --format json` at main f17b666, which has no fast mode (the ones on the
// Qwen3-14B server are also those of 64c70e2, the commit that fixed Pool.SetHash), and
// rewritten from the step-by-step mode when the cost model gained GPU-generation priors and
// the kernels' fixed time; -update-golden rewrites them from the current step-by-step
// mode.
func TestFastAgreesWithStepByStep(t *testing.T) {
	for _, c := range agreeFamily() {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && c.name == "preempt" {
				t.Skip("long in -short")
			}
			srv, seed := agreeServer(t, c.scenario)
			w := agreeWorkload(t, c.workload)
			step := runJSON(t, srv, w, seed, true)
			golden := filepath.Join("testdata", "agree", "golden", c.name+".json")
			if *updateGolden {
				if err := os.WriteFile(golden, step, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want, err := os.ReadFile(golden); err != nil {
				t.Fatal(err)
			} else if !bytes.Equal(step, want) {
				t.Errorf("step by step (%s) differs from %s: %s", c.why, golden, firstDiff(step, want))
			}
			fast := runJSON(t, srv, w, seed, false)
			diffs, st := compareNumbers(t, fast, step)
			if len(diffs) > 0 {
				t.Errorf("fast mode (%s) disagrees with step by step beyond %g:\n%s", c.why, agreeTol, strings.Join(diffs, "\n"))
			}
			t.Logf("%s: %s", c.why, st)
		})
	}
}

// TestFastMatrixAgrees runs the seed matrix (73 cells, speculative decoding) in both modes: every
// number of every cell within 0.1 %.
func TestFastMatrixAgrees(t *testing.T) {
	srv, seed := agreeServer(t, "")
	proto := scenario.Default().Protocol
	run := func(stepByStep bool) []byte {
		srv.StepByStep = stepByStep
		res, err := llmbench.RunMatrix(srv, &proto, llmbench.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res.Matrix)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	step, fast := run(true), run(false)
	diffs, st := compareNumbers(t, fast, step)
	if len(diffs) > 0 {
		t.Errorf("seed matrix: fast mode disagrees with step by step beyond %g:\n%s", agreeTol, strings.Join(diffs, "\n"))
	}
	t.Logf("seed matrix: %s", st)
}

// compareNumbers walks two JSON documents of the same shape and lists the numbers that differ by
// more than agreeTol (relative), and any difference in shape or in strings; it also says how many
// numbers it compared, how many differ at all, and the largest relative difference.
func compareNumbers(t testing.TB, got, want []byte) ([]string, string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	var out []string
	var n, differ int
	var worst float64
	worstAt := ""
	var walk func(path string, g, w any)
	walk = func(path string, g, w any) {
		if len(out) > 20 {
			return
		}
		switch wv := w.(type) {
		case map[string]any:
			gv, ok := g.(map[string]any)
			if !ok || len(gv) != len(wv) {
				out = append(out, fmt.Sprintf("%s: shape differs", path))
				return
			}
			for k := range wv {
				walk(path+"."+k, gv[k], wv[k])
			}
		case []any:
			gv, ok := g.([]any)
			if !ok || len(gv) != len(wv) {
				out = append(out, fmt.Sprintf("%s: %d entries, want %d", path, lenOf(g), len(wv)))
				return
			}
			for i := range wv {
				walk(fmt.Sprintf("%s[%d]", path, i), gv[i], wv[i])
			}
		case float64:
			gv, ok := g.(float64)
			if !ok {
				out = append(out, fmt.Sprintf("%s: %v, want %v", path, g, w))
				return
			}
			n++
			d := math.Abs(gv - wv)
			if d != 0 {
				differ++
				if r := d / math.Max(math.Abs(wv), agreeFloor); r > worst {
					worst, worstAt = r, path
				}
			}
			if d > agreeFloor && d > agreeTol*math.Abs(wv) {
				out = append(out, fmt.Sprintf("%s: %v, want %v (%.2g)", path, gv, wv, d/math.Abs(wv)))
			}
		default:
			if fmt.Sprint(g) != fmt.Sprint(w) {
				out = append(out, fmt.Sprintf("%s: %v, want %v", path, g, w))
			}
		}
	}
	walk("", g, w)
	st := fmt.Sprintf("%d numbers, %d differ, largest relative difference %.2g", n, differ, worst)
	if worst > 0 {
		st += " at " + worstAt
	}
	return out, st
}

func lenOf(x any) int {
	if a, ok := x.([]any); ok {
		return len(a)
	}
	return -1
}

func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: %q, want %q", i+1, strings.TrimSpace(la[i]), strings.TrimSpace(lb[i]))
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(la), len(lb))
}
