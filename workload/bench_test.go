package workload

import "testing"

// BenchmarkPoisson100k simulates 100,000 requests arriving as a Poisson process (8 req/s, prompts
// 512 and outputs 64 tokens within ±50 %: about 3.5 simulated hours, 200,000 engine steps) on the
// seed deployment, with every metric collected. Target: under 2 s and 300 MB per run.
func BenchmarkPoisson100k(b *testing.B) {
	srv, _ := seedServer(b)
	s, err := Preset("poisson-100k")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m, err := Run(srv, s, Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if m.Completed != 100_000 {
			b.Fatalf("%d completed", m.Completed)
		}
	}
}
