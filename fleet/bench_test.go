package fleet

import (
	"testing"

	"github.com/servesim/servesim/workload"
)

// The cost of a request: one replica run as simulate runs it, against a fleet of 16 replicas at
// 16 times the rate (the same requests per replica). Each reports ns and allocations per request.
// Run with -benchtime 1x: one iteration is 20,000 requests per replica.

const benchPerReplica = 20000

func BenchmarkOneReplica(b *testing.B) {
	srv := llama8B(b)
	spec := openSpec(b, 20, benchPerReplica, 0, 1000, 200)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := workload.Run(srv, spec, workload.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchPerReplica), "ns/request")
}

func BenchmarkFleet16(b *testing.B) {
	srv := llama8B(b)
	spec := openSpec(b, 16*20, 16*benchPerReplica, 0, 1000, 200)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		st, err := spec.Stream(1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Run(Config{Groups: []Group{{Server: srv, Count: 16}}, Policy: LeastOutstanding, Seed: 1, Spec: spec}, st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16*benchPerReplica), "ns/request")
}

// BenchmarkFleet100 is the scale target's fleet: 100 replicas at 100 times one replica's rate,
// 2,000 requests per replica (so one iteration stays short), under least-outstanding routing
// with an exact view (routed ahead by foresight) and with a view refreshed every 50 ms, round-robin
// and least-kv (routed ahead on the engines' KV floors), the replicas replayed on every CPU.
func BenchmarkFleet100(b *testing.B) {
	const n, per = 100, 2000
	srv := llama8B(b)
	spec := openSpec(b, n*20, n*per, 0, 1000, 200)
	for _, c := range []struct {
		name    string
		p       Policy
		refresh float64
	}{{"least-outstanding", LeastOutstanding, 0}, {"least-outstanding-refresh-50ms", LeastOutstanding, 0.05}, {"round-robin", RoundRobin, 0}, {"least-kv", LeastKV, 0}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				st, err := spec.Stream(1)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Run(Config{Groups: []Group{{Server: srv, Count: n}}, Policy: c.p, RefreshS: c.refresh, Seed: 1, Spec: spec}, st); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*per), "ns/request")
		})
	}
}
