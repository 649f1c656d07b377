package workload

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/servesim/servesim/vtime"
)

func intp(v int) *int { return &v }

func TestRandomRanges(t *testing.T) {
	// vLLM's RandomDataset.get_sampling_params: I' = input_len - special tokens; input on
	// [floor(I'(1-r)), ceil(I'(1+r))]; output on [max(1, floor(O(1-r))), max(1, ceil(O(1+r)))].
	cases := []struct {
		in, out, special int
		r                float64
		want             [4]int
	}{
		{1024, 128, 1, 0, [4]int{1023, 1023, 128, 128}},
		{1024, 128, 0, 0, [4]int{1024, 1024, 128, 128}},
		{1024, 128, 1, 0.1, [4]int{920, 1126, 115, 141}}, // 920.7, 1125.3, 115.2, 140.8
		{1024, 128, 1, 0.5, [4]int{511, 1535, 64, 192}},  // 511.5 -> 511, 1534.5 -> 1535
		{5, 1, 1, 0.5, [4]int{2, 6, 1, 2}},               // output floor(0.5) = 0 -> 1
		{1, 0, 1, 0, [4]int{0, 0, 1, 1}},                 // vLLM turns output 0 into 1
		{2048, 256, 2, 0.25, [4]int{1534, 2558, 192, 320}},
	}
	for _, c := range cases {
		b := VLLMBench{Dataset: "random", InputLen: c.in, OutputLen: c.out, RangeRatio: c.r, SpecialTokens: intp(c.special)}
		a, bb, cc, d := b.RandomRanges()
		if got := [4]int{a, bb, cc, d}; got != c.want {
			t.Errorf("input %d output %d special %d r %g: ranges %v, want %v", c.in, c.out, c.special, c.r, got, c.want)
		}
	}
}

func TestRandomDatasetDraws(t *testing.T) {
	b := &VLLMBench{Dataset: "random", NumPrompts: 20000, InputLen: 9, OutputLen: 4, RangeRatio: 0.5, PrefixLen: 3}
	s := &Spec{Name: "x", Kind: KindVLLMBench, VLLM: b}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	reqs, _, err := b.benchRequests(KindVLLMBench)
	if err != nil {
		t.Fatal(err)
	}
	// I' = 8: input on [4, 12] after the 3-token prefix, output on [2, 6]; both ends inclusive
	// and reached (20,000 draws over 9 values: each end is missed with probability (8/9)^20000).
	seenIn, seenOut := map[int]bool{}, map[int]bool{}
	for i, q := range reqs {
		in := q.counted - 3
		if in < 4 || in > 12 || q.OutputTokens < 2 || q.OutputTokens > 6 {
			t.Fatalf("request %d: input %d, output %d outside [4, 12] x [2, 6]", i, in, q.OutputTokens)
		}
		if q.InputTokens != q.counted+1 {
			t.Fatalf("request %d: engine prompt %d, want the counted %d + 1 special token", i, q.InputTokens, q.counted)
		}
		if q.PrefixTokens != 4 || q.PrefixID != prefixIDBase|1 {
			t.Fatalf("request %d: shared prefix %d tokens (id %x), want special + prefix = 4", i, q.PrefixTokens, q.PrefixID)
		}
		if q.At != 0 {
			t.Fatalf("request %d at %v: rate inf sends everything at 0", i, q.At)
		}
		seenIn[in], seenOut[q.OutputTokens] = true, true
	}
	if len(seenIn) != 9 || len(seenOut) != 5 {
		t.Errorf("values drawn: %d inputs (want 9), %d outputs (want 5)", len(seenIn), len(seenOut))
	}
	// The same seed gives the same prompts; another seed others.
	again, _, _ := b.benchRequests(KindVLLMBench)
	for i := range reqs {
		if !reflect.DeepEqual(reqs[i], again[i]) {
			t.Fatalf("request %d differs between two draws with seed 0", i)
		}
	}
	b.Seed = 1
	other, _, _ := b.benchRequests(KindVLLMBench)
	same := 0
	for i := range reqs {
		if reflect.DeepEqual(reqs[i], other[i]) {
			same++
		}
	}
	if same == len(reqs) {
		t.Errorf("seed 1 draws the same prompts as seed 0")
	}
}

func TestSendOffsets(t *testing.T) {
	gaps := func(at []vtime.Duration) []float64 {
		g := make([]float64, len(at))
		prev := 0.0
		for i, a := range at {
			g[i] = a.Seconds() - prev
			prev = a.Seconds()
		}
		return g
	}
	meanCV := func(g []float64) (float64, float64) {
		var s, s2 float64
		for _, v := range g {
			s += v
		}
		m := s / float64(len(g))
		for _, v := range g {
			s2 += (v - m) * (v - m)
		}
		return m, math.Sqrt(s2/float64(len(g))) / m
	}
	for _, c := range []struct {
		name  string
		b     VLLMBench
		check func(t *testing.T, at []vtime.Duration)
	}{
		{"inf", VLLMBench{}, func(t *testing.T, at []vtime.Duration) {
			for i, a := range at {
				if a != 0 {
					t.Fatalf("offset %d = %v, want 0", i, a)
				}
			}
		}},
		{"constant", VLLMBench{RequestRate: 4, ConstantGaps: true}, func(t *testing.T, at []vtime.Duration) {
			for i, a := range at {
				if want := vtime.FromSeconds(float64(i+1) / 4); a != want {
					t.Fatalf("offset %d = %v, want %v", i, a, want)
				}
			}
		}},
		{"poisson", VLLMBench{RequestRate: 5}, func(t *testing.T, at []vtime.Duration) {
			// Exponential gaps: CV 1. 20,000 gaps: the CV's standard error is about 1 %, so 5 % is
			// a 5-sigma band. The mean is exact after the rescaling.
			m, cv := meanCV(gaps(at))
			if math.Abs(m-0.2) > 1e-9 || math.Abs(cv-1) > 0.05 {
				t.Errorf("mean gap %v (want 0.2), cv %.3f (want 1)", m, cv)
			}
		}},
		{"bursty", VLLMBench{RequestRate: 5, Burstiness: 0.25}, func(t *testing.T, at []vtime.Duration) {
			// Gamma shape 0.25: CV = 1 / sqrt(0.25) = 2; heavier tails, so a 10 % band (its
			// standard error from 20,000 gaps is about 2.3 %).
			_, cv := meanCV(gaps(at))
			if math.Abs(cv-2)/2 > 0.1 {
				t.Errorf("cv %.3f, want 2", cv)
			}
		}},
		{"smooth", VLLMBench{RequestRate: 5, Burstiness: 4}, func(t *testing.T, at []vtime.Duration) {
			_, cv := meanCV(gaps(at))
			if math.Abs(cv-0.5)/0.5 > 0.05 {
				t.Errorf("cv %.3f, want 0.5", cv)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const n = 20000
			at := c.b.sendOffsets(n)
			if c.b.RequestRate > 0 {
				// The last request is sent at N / rate exactly (vLLM rescales the summed gaps).
				if want := vtime.FromSeconds(n / c.b.RequestRate); at[n-1] != want {
					t.Errorf("last send at %v, want %v", at[n-1], want)
				}
				if at[0] <= 0 {
					t.Errorf("first send at %v: the first request waits its gap too", at[0])
				}
			}
			c.check(t, at)
		})
	}
}

// TestVLLMBenchAsClosedLoop checks the semaphore: at rate inf with max concurrency C and no ready
// check, vllm bench serve is the closed loop of C clients, to the byte.
func TestVLLMBenchAsClosedLoop(t *testing.T) {
	srv, _ := seedServer(t)
	closed := &Spec{Name: "c", Kind: KindClosed, Closed: Closed{Requests: 24, Concurrency: 4}, Lengths: Lengths{InputTokens: 1500, OutputTokens: 40}}
	vb := &Spec{Name: "c", Kind: KindClosed, VLLM: nil}
	*vb = Spec{Name: "c", Kind: KindVLLMBench, VLLM: &VLLMBench{Dataset: "random", NumPrompts: 24, InputLen: 1500, OutputLen: 40,
		SpecialTokens: intp(0), MaxConcurrency: 4, NoReadyCheck: true}}
	m1, err := Run(srv, closed, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Run(srv, vb, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m2.Kind = KindClosed
	if a, b := jsonOf(t, m1), jsonOf(t, m2); !bytes.Equal(a, b) {
		t.Errorf("vllm-bench at rate inf, max concurrency 4 differs from the closed loop:\n%s\n%s", a, b)
	}
}

func TestVLLMBenchReadyCheckAndOffline(t *testing.T) {
	srv, _ := seedServer(t)
	run := func(k Kind, b VLLMBench) *Metrics {
		t.Helper()
		s := &Spec{Name: "x", Kind: k, VLLM: &b}
		m, err := Run(srv, s, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := VLLMBench{Dataset: "random", NumPrompts: 1, InputLen: 8192, OutputLen: 16}
	cold := base
	cold.NoReadyCheck = true
	// The ready check sends request 0's prompt first, so the measured request 0 finds it in the
	// prefix cache (on the seed's hybrid layout the blocks every group can serve, less the EAGLE
	// drop: with the shipped calibration's 2,272-token blocks 4,544 of the 8,191 tokens): its TTFT
	// is well under the cold prefill's, about the recomputed 45 %.
	warm, coldM := run(KindVLLMBench, base), run(KindVLLMBench, cold)
	if !(warm.TTFT.Mean < 0.6*coldM.TTFT.Mean) {
		t.Errorf("TTFT after the ready check %.1f ms, cold %.1f ms: want a prefix-cache hit", warm.TTFT.Mean, coldM.TTFT.Mean)
	}
	if warm.Requests != 1 || warm.Completed != 1 || warm.InputTokens != 8191 {
		t.Errorf("ready check counted: %d requests, %d completed, %d input tokens (want 1, 1, 8191: I' = 8192 - 1)", warm.Requests, warm.Completed, warm.InputTokens)
	}
	// Offline: no API server, so the same cold request starts sooner.
	off := run(KindOffline, cold.offline())
	if !(off.TTFT.Mean < coldM.TTFT.Mean) || off.Kind != KindOffline {
		t.Errorf("offline TTFT %.2f ms, served %.2f ms: want the frontend's time less", off.TTFT.Mean, coldM.TTFT.Mean)
	}
	// Warm-ups run before the measurement and are not counted.
	w := base
	w.NumWarmups = 3
	w.NumPrompts = 4
	if m := run(KindVLLMBench, w); m.Requests != 4 || m.TTFT.N != 4 {
		t.Errorf("with 3 warm-ups: %d requests, %d TTFTs, want 4", m.Requests, m.TTFT.N)
	}
}

func (b VLLMBench) offline() VLLMBench {
	b.NoReadyCheck = false
	return b
}

func TestVLLMBenchRejectsLongPrompts(t *testing.T) {
	srv, _ := seedServer(t)
	mml := srv.Deployment.Engine.MaxModelLen
	b := &VLLMBench{MaxConcurrency: 1, NoReadyCheck: true}
	b.SetPrompts([]BenchPrompt{{Tokens: 100, OutputTokens: 8}, {Tokens: mml, OutputTokens: 8}, {Tokens: 200, OutputTokens: 8}})
	s := &Spec{Name: "x", Kind: KindVLLMBench, VLLM: b}
	m, err := Run(srv, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The long request fails at once (the API server's 400) and frees the semaphore's slot.
	if m.Requests != 3 || m.Completed != 2 || m.Rejected != 1 || m.InputTokens != 300 {
		t.Errorf("%d sent, %d completed, %d rejected, %d input tokens; want 3, 2, 1, 300", m.Requests, m.Completed, m.Rejected, m.InputTokens)
	}
	// With the ready check the benchmark stops: request 0 is its prompt.
	b2 := &VLLMBench{}
	b2.SetPrompts([]BenchPrompt{{Tokens: mml, OutputTokens: 8}})
	if _, err := Run(srv, &Spec{Name: "x", Kind: KindVLLMBench, VLLM: b2}, Options{}); err == nil || !strings.Contains(err.Error(), "ready check") {
		t.Errorf("ready check longer than max_model_len: %v", err)
	}
}

func TestVLLMBenchValidate(t *testing.T) {
	cases := []struct {
		s    Spec
		want string
	}{
		{Spec{Kind: KindVLLMBench}, "vllm_bench: missing"},
		{Spec{Kind: KindOpen, VLLM: &VLLMBench{}}, "only for kind vllm-bench or offline"},
		{Spec{Kind: KindVLLMBench, VLLM: &VLLMBench{Dataset: "sonnet"}}, `dataset = "sonnet"`},
		{Spec{Kind: KindVLLMBench, VLLM: &VLLMBench{Dataset: "random", InputLen: 1, RangeRatio: 0}}, "at least 1"},
		{Spec{Kind: KindVLLMBench, VLLM: &VLLMBench{Dataset: "random", InputLen: 10, RangeRatio: 1}}, "range_ratio = 1"},
		{Spec{Kind: KindVLLMBench, VLLM: &VLLMBench{Dataset: "sharegpt"}}, "dataset_path: missing"},
		{Spec{Kind: KindOffline, VLLM: &VLLMBench{Dataset: "random", InputLen: 10, RequestRate: 2}}, "offline run"},
		{Spec{Kind: KindOffline, VLLM: &VLLMBench{Dataset: "random", InputLen: 10, MaxConcurrency: 2}}, "max_concurrency"},
		{Spec{Kind: KindVLLMBench, VLLM: &VLLMBench{Dataset: "random", InputLen: 10, Burstiness: math.Inf(1)}}, "burstiness"},
	}
	for _, c := range cases {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error mentioning %q", c.s.VLLM, err, c.want)
		}
	}
}

func TestVLLMBenchTOML(t *testing.T) {
	s, err := Parse([]byte(`kind = "vllm-bench"
[vllm_bench]
dataset = "random"
num_prompts = 50
input_len = 512
output_len = 32
range_ratio = 0.2
request_rate = 4.0
max_concurrency = 8
`), "b.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Describe(); !strings.Contains(got, "vllm bench serve: 50 prompts, random dataset, input 408..614 + 1 special") || !strings.Contains(got, "rate 4 req/s (Poisson)") {
		t.Errorf("describe: %s", got)
	}
	if got, want := s.MaxRequestTokens(), 1+614+39; got != want {
		t.Errorf("MaxRequestTokens %d, want %d", got, want)
	}
	if s.MaxConcurrency() != 8 {
		t.Errorf("MaxConcurrency %d", s.MaxConcurrency())
	}
}
