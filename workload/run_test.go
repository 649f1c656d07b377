package workload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// smallOpen is a short open-loop workload for behaviour tests.
func smallOpen(seed uint64) *Spec {
	return &Spec{Name: "small", Kind: KindOpen, Seed: seed, HasSeed: true,
		Open:    Open{Process: "gamma", CV: 2, RatePerS: 4, Requests: 60},
		Lengths: Lengths{InputTokens: 2048, OutputTokens: 64, RangeRatio: 0.5, PrefixTokens: 1024, PrefixGroups: 2},
		SLO:     SLO{TTFTms: 1000, TPOTms: 30}}
}

func jsonOf(t *testing.T, m *Metrics) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSON(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDeterministic runs the same workloads twice in sequence and concurrently on several
// goroutines: every run must give the same JSON bytes. A different seed must change them.
func TestDeterministic(t *testing.T) {
	srv, _ := seedServer(t)
	specs := []*Spec{smallOpen(5),
		{Name: "closed", Kind: KindClosed, Closed: Closed{Requests: 24, Concurrency: 6}, Lengths: Lengths{InputTokens: 1500, OutputTokens: 48, RangeRatio: 0.3}},
	}
	for _, s := range specs {
		m1, err := Run(srv, s, Options{Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		want := jsonOf(t, m1)
		const workers = 4
		got := make([][]byte, workers)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				m, err := Run(srv, s, Options{Seed: 5})
				if err != nil {
					t.Error(err)
					return
				}
				var b bytes.Buffer
				WriteJSON(&b, m)
				got[w] = b.Bytes()
			}(w)
		}
		wg.Wait()
		for w, g := range got {
			if !bytes.Equal(g, want) {
				t.Errorf("%s: run %d on its own goroutine differs from the first run (seed 5)", s.Name, w)
			}
		}
		other := *s
		other.Seed, other.HasSeed = 6, true
		m3, err := Run(srv, &other, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(jsonOf(t, m3), want) {
			t.Errorf("%s: seeds 5 and 6 gave identical results", s.Name)
		}
	}
}

// TestConservation checks the accounting of a closed loop: every request completes with exactly
// its output length, and requests longer than max_model_len are rejected, not run.
func TestConservation(t *testing.T) {
	srv, _ := seedServer(t)
	s := &Spec{Name: "c", Kind: KindClosed, Closed: Closed{Requests: 30, Concurrency: 8}, Lengths: Lengths{InputTokens: 900, OutputTokens: 40, RangeRatio: 0.5}}
	reqs, _ := s.Requests(1)
	var want int64
	for _, r := range reqs {
		want += int64(r.OutputTokens)
	}
	m, err := Run(srv, s, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.Completed != 30 || m.OutputTokens != want || m.TTFT.N != 30 || m.E2E.N != 30 || m.Queue.N != 30 {
		t.Errorf("completed %d, output %d tokens (want 30, %d); samples %d/%d/%d", m.Completed, m.OutputTokens, want, m.TTFT.N, m.E2E.N, m.Queue.N)
	}
	if m.KV.Peak <= 0 || m.KV.Peak > 1 || len(m.KV.Samples) == 0 {
		t.Errorf("KV usage peak %v, %d samples", m.KV.Peak, len(m.KV.Samples))
	}
	if m.TTFT.P50 > m.TTFT.P90 || m.TTFT.P90 > m.TTFT.P99 || m.TTFT.P99 > m.TTFT.Max {
		t.Errorf("TTFT quantiles out of order: %+v", m.TTFT)
	}
	if m.ITL.N == 0 || m.ITL.P50 <= 0 {
		t.Errorf("no inter-token gaps: %+v", m.ITL)
	}

	// A trace with one request longer than max_model_len (1,048,576 tokens in the seed).
	tr := &Spec{Name: "t", Kind: KindTrace}
	tr.SetTrace([]TraceRow{{0, 100, 10, 0, 0, 0}, {1e8, 2_000_000, 10, 0, 0, 0}, {2e8, 200, 5, 0, 0, 0}})
	m, err = Run(srv, tr, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 3 || m.Completed != 2 || m.Rejected != 1 || m.OutputTokens != 15 {
		t.Errorf("trace: %d requests, %d completed, %d rejected, %d output tokens; want 3, 2, 1, 15", m.Requests, m.Completed, m.Rejected, m.OutputTokens)
	}
}

// TestReplicas checks that a workload split over replicas keeps its requests and tokens, and that
// identical replicas are simulated once with the same result as one of them alone.
func TestReplicas(t *testing.T) {
	srv, r := seedServer(t)
	b := &Spec{Name: "b", Kind: KindLLMBenchCell, Cell: BenchFromProtocol(&r.Scenario.Protocol, "8K", 8)}
	b.Cell.DurationS = 5
	one := &Spec{Name: "b", Kind: KindLLMBenchCell, Cell: b.Cell}
	one.Cell.Concurrency = 4
	m2, err := Run(srv, b, Options{Seed: 1, Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	m1, err := Run(srv, one, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m2.OutputTokens != 2*m1.OutputTokens || m2.TPOT.P50 != m1.TPOT.P50 || m2.Requests != 2*m1.Requests {
		t.Errorf("2 replicas of 4 streams: %d tokens, TPOT %.4g, %d requests; one replica: %d, %.4g, %d",
			m2.OutputTokens, m2.TPOT.P50, m2.Requests, m1.OutputTokens, m1.TPOT.P50, m1.Requests)
	}
	o := smallOpen(2)
	m3, err := Run(srv, o, Options{Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	if m3.Requests != 60 || m3.Completed != 60 || m3.Replicas != 3 {
		t.Errorf("open loop over 3 replicas: %d requests, %d completed", m3.Requests, m3.Completed)
	}
}

// TestOfflineReplicas: an offline run dealt over replicas simulates each distinct share once; 4
// identical shares give 4 times one share's tokens over the same duration, with its latencies.
func TestOfflineReplicas(t *testing.T) {
	srv, _ := seedServer(t)
	offline := func(n int) *Spec {
		p := make([]BenchPrompt, n)
		for i := range p {
			p[i] = BenchPrompt{Tokens: 300, OutputTokens: 20}
		}
		b := &VLLMBench{}
		b.SetPrompts(p)
		return &Spec{Name: "o", Kind: KindOffline, VLLM: b}
	}
	m4, err := Run(srv, offline(40), Options{Seed: 1, Replicas: 4})
	if err != nil {
		t.Fatal(err)
	}
	m1, err := Run(srv, offline(10), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m4.Requests != 40 || m4.Completed != 40 || m4.OutputTokens != 4*m1.OutputTokens || m4.DurationS != m1.DurationS || m4.TTFT.P50 != m1.TTFT.P50 || m4.Steps != 4*m1.Steps {
		t.Errorf("4 replicas of 10: %d/%d requests, %d tokens, %.4g s, TTFT %.4g, %d steps; one: %d tokens, %.4g s, TTFT %.4g, %d steps",
			m4.Completed, m4.Requests, m4.OutputTokens, m4.DurationS, m4.TTFT.P50, m4.Steps, m1.OutputTokens, m1.DurationS, m1.TTFT.P50, m1.Steps)
	}
	// 42 prompts: shares of 11, 11, 10, 10 (two distinct), still every request.
	m, err := Run(srv, offline(42), Options{Seed: 1, Replicas: 4})
	if err != nil {
		t.Fatal(err)
	}
	if m.Completed != 42 || m.OutputTokens != 42*20 {
		t.Errorf("42 over 4 replicas: %d completed, %d tokens", m.Completed, m.OutputTokens)
	}
}

func TestRenderers(t *testing.T) {
	srv, _ := seedServer(t)
	m, err := Run(srv, smallOpen(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Throughput", "TTFT", "TPOT", "ITL", "E2E", "queue", "KV cache", "SLO", "Goodput"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteCSV(&b, m); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || strings.Count(lines[0], ",") != strings.Count(lines[1], ",") || strings.Count(lines[0], ",") != len(CSVHeader())-1 {
		t.Errorf("CSV shape wrong:\n%s", b.String())
	}
	b.Reset()
	if err := WriteSeriesCSV(&b, m); err != nil || !strings.HasPrefix(b.String(), "t_s,kv_usage,running,waiting\n") {
		t.Errorf("series CSV: %v\n%s", err, b.String())
	}
}

func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	os.WriteFile(trace, []byte("arrival_s,input_tokens,output_tokens\n0,100,5\n0.5,200,5\n"), 0o644)
	wl := filepath.Join(dir, "w.toml")
	os.WriteFile(wl, []byte("kind = \"trace\"\n[trace]\nfile = \"t.csv\"\nspeedup = 2\n"), 0o644)
	s, err := Load(wl)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := s.Requests(0)
	if err != nil || len(reqs) != 2 || reqs[1].At.Seconds() != 0.25 {
		t.Errorf("trace via TOML: %v %+v", err, reqs)
	}
	s, err = Load(trace)
	if err != nil || s.Kind != KindTrace || s.Name != "t" {
		t.Errorf("trace file directly: %v %+v", err, s)
	}
	if _, err := Load(filepath.Join(dir, "missing.toml")); err == nil {
		t.Errorf("missing file loaded")
	}
}

func ExampleRun() {
	r, srv := exampleServer()
	s, _ := Preset("1k1k")
	s.Closed.Requests = 16
	m, err := Run(srv, s, Options{Seed: r})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Kind, m.Requests, "requests,", m.Completed, "completed,", m.OutputTokens, "output tokens")
	// Output: closed 16 requests, 16 completed, 16384 output tokens
}
