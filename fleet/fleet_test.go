package fleet

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmcmd"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// vllmServer builds a deployment from a vllm serve command line on a GPU, with priors only.
func vllmServer(t testing.TB, cmd, gpu string) *sim.Server {
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

func llama8B(t testing.TB) *sim.Server {
	return vllmServer(t, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768", "H100-SXM")
}

func traceExcerpt(name string) string {
	return filepath.Join("..", "workload", "testdata", "traces", name)
}

func openTrace(t testing.TB, name string, o workload.StreamOptions) *workload.TraceStream {
	t.Helper()
	s, err := workload.OpenTrace(traceExcerpt(name), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFleetOfOneIsTheDeployment: a fleet of one replica, fed a trace as a stream, measures
// exactly what a trace run of the same deployment measures (every metric, KV samples and the
// overload verdict included, as JSON bytes), for an Azure trace and a Mooncake trace with
// prefix-block ids, under every routing policy (with one replica they all pick it).
func TestFleetOfOneIsTheDeployment(t *testing.T) {
	srv := llama8B(t)
	for _, c := range []struct {
		file  string
		speed float64
	}{{"azure_conv_300.csv", 4}, {"mooncake_conversation_400.jsonl", 1}} {
		spec := &workload.Spec{Name: "t", Kind: workload.KindTrace, Seed: 5, HasSeed: true,
			Trace: workload.Trace{File: traceExcerpt(c.file), Speedup: c.speed}}
		alone, err := workload.Run(srv, spec, workload.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := mustJSON(t, alone)
		last := lastArrival(t, c.file, c.speed)
		for _, p := range []Policy{RoundRobin, PrefixAware, LeastKV} {
			res, err := Run(Config{Groups: []Group{{Server: srv, Count: 1}}, Policy: p, Seed: 5, Spec: spec, LastArrival: last},
				openTrace(t, c.file, workload.StreamOptions{Speed: c.speed}))
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(t, res.Fleet); !bytes.Equal(got, want) {
				t.Errorf("%s, %s: the fleet of one differs from the deployment alone:\nfleet %s\nalone %s", c.file, p, got, want)
			}
			t.Logf("%s %s: completed %d, ttft p99 %.1f ms, hit %.3f, status %s, kv samples %d", c.file, p, res.Fleet.Completed, res.Fleet.TTFT.P99, res.PrefixHitRate, res.Fleet.Status, len(res.Fleet.KV.Samples))
			if res.PrefixQueries == 0 || res.Routed != int64(alone.Requests) {
				t.Errorf("%s: %d routed of %d, %d prefix-cache query tokens", c.file, res.Routed, alone.Requests, res.PrefixQueries)
			}
		}
	}
}

func lastArrival(t testing.TB, file string, speed float64) (last vtime.Time) {
	t.Helper()
	s := openTrace(t, file, workload.StreamOptions{Speed: speed})
	for q, ok := s.Next(); ok; q, ok = s.Next() {
		last = q.At
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	return last
}
