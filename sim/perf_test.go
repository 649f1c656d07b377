package sim_test

import (
	"path/filepath"
	"testing"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

// BenchmarkPlanCell is one simulation of the open-loop planning question: the chat preset's
// requests at 10 req/s with TTFT 500 ms / TPOT 30 ms objectives, Qwen3-30B-A3B on one H100.
func BenchmarkPlanCell(b *testing.B) {
	srv := perfServerFile(b, "h100-qwen3-30b-a3b.toml")
	w := perfWorkload(b, "chat-10")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := workload.Run(srv, w, workload.Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// perfServer is the trace benchmark's server: Qwen3-14B (bf16, testdata/perf/qwen3-14b.config.json)
// on one H100-SXM with vLLM's defaults for an H100 (max_num_seqs 1024, max_num_batched_tokens
// 8192, chunked prefill, prefix caching, gpu_memory_utilization 0.9).
func perfServer(tb testing.TB) *sim.Server {
	return perfServerFile(tb, "h100-qwen3-14b.toml")
}

func perfServerFile(tb testing.TB, name string) *sim.Server {
	tb.Helper()
	s, err := scenario.Load(filepath.Join("testdata", "perf", name))
	if err != nil {
		tb.Fatal(err)
	}
	r, err := s.Resolve(scenario.ResolveOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

func perfWorkload(tb testing.TB, name string) *workload.Spec {
	tb.Helper()
	w, err := workload.Load(filepath.Join("testdata", "perf", name+".toml"))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// BenchmarkTrace simulates the trace (Poisson at 8 req/s, prompts 2,048 and outputs 256
// tokens within ±50 %, Qwen3-14B on one H100) at 10k, 100k and 1M requests, every metric
// collected. ns/request is the cost per request, which should not grow with the trace.
func BenchmarkTrace(b *testing.B) {
	srv := perfServer(b)
	for _, n := range []string{"10k", "100k", "1m"} {
		w := perfWorkload(b, "poisson-"+n)
		b.Run(n, func(b *testing.B) {
			b.ReportAllocs()
			var m *workload.Metrics
			for b.Loop() {
				var err error
				if m, err = workload.Run(srv, w, workload.Options{Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
			if m.Completed != w.Open.Requests {
				b.Fatalf("%d of %d completed", m.Completed, w.Open.Requests)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.Completed), "ns/request")
		})
	}
}
