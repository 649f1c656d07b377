package fleet

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// sliceStream streams a list of requests.
type sliceStream struct {
	reqs []workload.Request
	i    int
}

func (s *sliceStream) Next() (workload.Request, bool) {
	if s.i == len(s.reqs) {
		return workload.Request{}, false
	}
	s.i++
	return s.reqs[s.i-1], true
}

func (s *sliceStream) Err() error { return nil }

// tiedRequests arrive in groups of one to three at whole and half seconds, on the KV samples'
// one-second grid, with gaps from half a second to three seconds: arrivals and samples of one
// replica fall at the same instant, with the arrival set before the sample (after a gap longer
// than the sampling interval) or after it, and replicas go idle and start again.
func tiedRequests(n int) []workload.Request {
	var out []workload.Request
	gaps := []int64{1, 1, 2, 4, 1, 6, 2, 3}
	var at int64
	for i := 0; len(out) < n; i++ {
		for j := range 1 + i%3 {
			out = append(out, workload.Request{At: vtime.Time(at * int64(vtime.Second) / 2),
				InputTokens: 300 + 97*((i+j)%7), OutputTokens: 20 + 13*((i*3+j)%5), PromptID: uint64(len(out) + 1)})
		}
		at += gaps[i%len(gaps)]
	}
	return out[:n]
}

// withoutEvents is the result as JSON with the engines' event counts left out: how many events
// an engine's spans of identical steps take depends on where its runs stop, not what they do.
func withoutEvents(t testing.TB, res *Result) []byte {
	t.Helper()
	for i := range res.Replicas {
		res.Replicas[i].Events = 0
	}
	return mustJSON(t, res)
}

// TestRoutingAheadIsTheEventLoop: round-robin and random routing, routed a window ahead and each
// replica replayed alone, give what the event loop gives, byte for byte (every replica's
// metrics, KV samples, the series, the fleet), on traces with same-instant arrivals and on
// arrivals tied with the KV samples, with windows of a few requests (so samples and arrivals
// straddle their edges) and of the default size; and the same bytes, engine events included,
// on one, two or three workers.
func TestRoutingAheadIsTheEventLoop(t *testing.T) {
	srv := llama8B(t)
	type source struct {
		name   string
		spec   *workload.Spec
		stream func() workload.Stream
		last   vtime.Time
	}
	var sources []source
	for _, c := range []struct {
		file  string
		speed float64
	}{{"azure_conv_300.csv", 4}, {"mooncake_conversation_400.jsonl", 1}} {
		spec := &workload.Spec{Name: "t", Kind: workload.KindTrace, Seed: 5, HasSeed: true,
			Trace: workload.Trace{File: traceExcerpt(c.file), Speedup: c.speed}}
		sources = append(sources, source{c.file, spec, func() workload.Stream {
			return openTrace(t, c.file, workload.StreamOptions{Speed: c.speed})
		}, lastArrival(t, c.file, c.speed)})
	}
	tied := tiedRequests(600)
	sources = append(sources, source{"tied", &workload.Spec{Name: "tied", Kind: workload.KindTrace}, func() workload.Stream {
		return &sliceStream{reqs: tied}
	}, tied[len(tied)-1].At})
	for _, s := range sources {
		for _, p := range []Policy{RoundRobin, Random} {
			run := func(c Config) *Result {
				c.Groups, c.Policy, c.Seed, c.Spec, c.LastArrival = []Group{{Server: srv, Count: 3}}, p, 5, s.spec, s.last
				res, err := Run(c, s.stream())
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			want := withoutEvents(t, run(Config{eventByEvent: true}))
			for _, window := range []int{0, 1, 7} {
				var first []byte
				for workers := 1; workers <= 3; workers++ {
					res := run(Config{Workers: workers, window: window})
					all := mustJSON(t, res)
					if first == nil {
						first = all
					} else if !bytes.Equal(all, first) {
						t.Errorf("%s, %s, window %d: %d workers differ from one", s.name, p, window, workers)
					}
					if got := withoutEvents(t, res); !bytes.Equal(got, want) {
						t.Errorf("%s, %s, window %d, %d workers: routing ahead differs from the event loop:\nahead %s\nloop  %s", s.name, p, window, workers, firstDiff(got, want), firstDiff(want, got))
					}
				}
			}
		}
	}
}

// firstDiff is a's text around its first byte that differs from b.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return string(a[max(i-300, 0):min(i+200, len(a))])
}

// TestRateTrafficStreamsPastOneRun: a fleet's rate traffic is streamed, so it takes more requests
// than a run that keeps every request's record (workload.MaxRequests), up to the stream's bound.
func TestRateTrafficStreamsPastOneRun(t *testing.T) {
	tr, err := RateTraffic(Rate{Rate: 2000, Requests: 10_000_000, Process: "poisson", InputTokens: 1000, OutputTokens: 200, RangeRatio: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Spec.Open.Requests != 10_000_000 || tr.Spec.Validate() == nil {
		t.Errorf("open.requests %d: want 10,000,000, past one run's bound", tr.Spec.Open.Requests)
	}
	st, err := tr.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Next(); !ok {
		t.Error("the stream is empty")
	}
	if _, err := RateTraffic(Rate{Rate: 2000, Requests: workload.MaxStreamRequests + 1, Process: "poisson", InputTokens: 1000, OutputTokens: 200}); err == nil || !strings.Contains(err.Error(), "--requests") {
		t.Errorf("past the stream's bound: %v, want an error naming --requests", err)
	}
}
