package sim_test

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmcmd"
	"github.com/servesim/servesim/workload"
)

// vllmServer builds the server of a `vllm serve` line on a GPU.
func vllmServer(t *testing.T, cmd, gpu string) *sim.Server {
	t.Helper()
	words, err := vllmcmd.Split(cmd)
	if err != nil {
		t.Fatal(err)
	}
	s := scenario.New()
	if _, err := s.ApplyVLLM(words); err != nil {
		t.Fatal(err)
	}
	s.Hardware.GPU = gpu
	r, err := s.Resolve(scenario.ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func closedLoop(t *testing.T, conc, n, in, out int) *workload.Spec {
	t.Helper()
	s, err := workload.Parse([]byte(strings.Join([]string{
		`name = "closed"`, `kind = "closed"`, `seed = 1`,
		`[closed]`, "concurrency = " + itoa(conc), "requests = " + itoa(n),
		`[lengths]`, "input_tokens = " + itoa(in), "output_tokens = " + itoa(out), ""}, "\n")), "closed.toml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func run(t *testing.T, srv *sim.Server, w *workload.Spec) *workload.Metrics {
	t.Helper()
	m, err := workload.Run(srv, w, workload.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDataParallelReplicas: `--data-parallel-size 2` of a dense model is two independent engines
// behind one API server: the server stands for two replicas of the DP 1 engine (one GPU each),
// a workload is dealt over them, and at a load that fills one GPU twice the output rate doubles.
// The benchmark matrix, which runs on one engine, refuses it with the reason.
func TestDataParallelReplicas(t *testing.T) {
	one := vllmServer(t, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192", "H100")
	two := vllmServer(t, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --data-parallel-size 2", "H100")
	if two.Replicas != 2 || two.Deployment.Engine.DataParallel != 1 || two.Deployment.Hardware.Count != 1 {
		t.Fatalf("DP2 server: %d replicas of DP %d on %d GPU(s), want 2 replicas of DP 1 on 1", two.Replicas, two.Deployment.Engine.DataParallel, two.Deployment.Hardware.Count)
	}
	if two.Layout.NumBlocks != one.Layout.NumBlocks {
		t.Errorf("a replica's KV cache %d blocks, want one GPU's %d", two.Layout.NumBlocks, one.Layout.NumBlocks)
	}
	m1 := run(t, one, closedLoop(t, 32, 64, 512, 128))
	m2 := run(t, two, closedLoop(t, 64, 128, 512, 128))
	if m2.Replicas != 2 {
		t.Errorf("metrics: %d replicas, want 2", m2.Replicas)
	}
	if r := m2.OutputTokS / m1.OutputTokS; r < 1.95 || r > 2.05 {
		t.Errorf("DP2 at 64 clients %.0f tok/s, DP1 at 32 %.0f tok/s: ratio %.3f, want 2", m2.OutputTokS, m1.OutputTokS, r)
	}
	_, err := llmbench.RunMatrix(two, &scenario.Default().Protocol, llmbench.Options{Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "independent engines") {
		t.Errorf("matrix on DP2: err = %v, want a refusal naming the replicas", err)
	}
}

// TestParallelModesAgree: pipeline stages and lockstep data-parallel ranks give the same numbers
// in the fast mode as step by step (both price a step from its totals and its requests' own
// terms, package cost), and they change what they should: PP2 of a model that fits one GPU
// nearly doubles a saturated closed loop's throughput, with the per-token latency of one GPU at
// one client; Qwen3-30B-A3B with DP2 + EP holds twice the requests and KV of one rank.
func TestParallelModesAgree(t *testing.T) {
	tp1 := vllmServer(t, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192", "H100")
	pp2 := vllmServer(t, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --pipeline-parallel-size 2", "H100")
	dp2 := vllmServer(t, "vllm serve Qwen/Qwen3-30B-A3B --max-model-len 8192 --data-parallel-size 2 --enable-expert-parallel", "H100")
	dp1 := vllmServer(t, "vllm serve Qwen/Qwen3-30B-A3B --max-model-len 8192", "H100")
	if c, c1 := dp2.SchedulerConfig(), dp1.SchedulerConfig(); c.MaxNumSeqs != 2*c1.MaxNumSeqs || c.MaxNumBatchedTokens != 2*c1.MaxNumBatchedTokens || c.MaxEntryTokens != c1.MaxNumBatchedTokens {
		t.Errorf("DP2 scheduler %+v: want twice one rank's sequences and budget, one rank's budget per request (%+v)", c, c1)
	}
	if dp2.Layout.NumBlocks < 2*dp1.Layout.NumBlocks-1 {
		t.Errorf("DP2 KV %d blocks, want twice a rank's (%d, experts split over 2 GPUs leave a rank more)", dp2.Layout.NumBlocks, dp1.Layout.NumBlocks)
	}
	w := closedLoop(t, 128, 256, 1024, 128)
	for _, c := range []struct {
		name string
		srv  *sim.Server
	}{{"pp2", pp2}, {"dp2-ep", dp2}} {
		step := runJSON(t, c.srv, w, 1, true)
		fast := runJSON(t, c.srv, w, 1, false)
		c.srv.StepByStep = false
		if diffs, _ := compareNumbers(t, fast, step); len(diffs) > 0 {
			t.Errorf("%s: fast mode disagrees with step by step:\n%s", c.name, strings.Join(diffs, "\n"))
		}
	}
	sat1, sat2 := run(t, tp1, w), run(t, pp2, w)
	if r := sat2.OutputTokS / sat1.OutputTokS; r < 1.6 || r > 2.05 {
		t.Errorf("saturated: PP2 %.0f tok/s, TP1 %.0f tok/s: ratio %.2f, want close to 2", sat2.OutputTokS, sat1.OutputTokS, r)
	}
	t.Logf("saturated: TP1 %.0f, PP2 %.0f tok/s; dp2 blocks %d dp1 %d", sat1.OutputTokS, sat2.OutputTokS, dp2.Layout.NumBlocks, dp1.Layout.NumBlocks)
	lone := closedLoop(t, 1, 4, 1024, 128)
	l1, l2 := run(t, tp1, lone), run(t, pp2, lone)
	if r := l2.TPOT.P50 / l1.TPOT.P50; r < 1 || r > 1.01 {
		t.Errorf("one client: PP2 TPOT %.3f ms, TP1 %.3f ms: want TP1's plus a hand-off", l2.TPOT.P50, l1.TPOT.P50)
	}
}
