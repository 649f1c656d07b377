package fleet

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/servesim/servesim/sim"
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
// aheadSource is traffic the routing-ahead tests replay: a trace excerpt or tied arrivals.
type aheadSource struct {
	name   string
	spec   *workload.Spec
	stream func() workload.Stream
	last   vtime.Time
}

// aheadSources are the Azure and Mooncake excerpts and arrivals tied with the sample grid.
func aheadSources(t *testing.T) []aheadSource {
	var sources []aheadSource
	for _, c := range []struct {
		file  string
		speed float64
	}{{"azure_conv_300.csv", 4}, {"mooncake_conversation_400.jsonl", 1}} {
		spec := &workload.Spec{Name: "t", Kind: workload.KindTrace, Seed: 5, HasSeed: true,
			Trace: workload.Trace{File: traceExcerpt(c.file), Speedup: c.speed}}
		sources = append(sources, aheadSource{c.file, spec, func() workload.Stream {
			return openTrace(t, c.file, workload.StreamOptions{Speed: c.speed})
		}, lastArrival(t, c.file, c.speed)})
	}
	tied := tiedRequests(600)
	return append(sources, aheadSource{"tied", &workload.Spec{Name: "tied", Kind: workload.KindTrace}, func() workload.Stream {
		return &sliceStream{reqs: tied}
	}, tied[len(tied)-1].At})
}

// runner runs three replicas of srv under policy p on the source, with c's other settings.
func (s aheadSource) runner(t *testing.T, srv *sim.Server, p Policy) func(c Config) *Result {
	return func(c Config) *Result {
		c.Groups, c.Policy, c.Seed, c.Spec, c.LastArrival = []Group{{Server: srv, Count: 3}}, p, 5, s.spec, s.last
		res, err := Run(c, s.stream())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
}

func TestRoutingAheadIsTheEventLoop(t *testing.T) {
	srv := llama8B(t)
	for _, s := range aheadSources(t) {
		for _, p := range []Policy{RoundRobin, Random} {
			run := s.runner(t, srv, p)
			want := withoutEvents(t, run(Config{eventByEvent: true}))
			compareAhead(t, s.name, p, run, want, func(window, workers int) bool { return true })
		}
	}
}

// compareAhead routes ahead with windows capped at one and seven requests and uncapped, on one to
// three workers (those run wants): every run gives the same bytes, and those of the event loop
// (want) but for the engines' event counts.
func compareAhead(t *testing.T, name string, p Policy, run func(Config) *Result, want []byte, runs func(window, workers int) bool) {
	t.Helper()
	for _, window := range []int{0, 1, 7} {
		var first []byte
		for workers := 1; workers <= 3; workers++ {
			if !runs(window, workers) {
				continue
			}
			res := run(Config{Workers: workers, window: window})
			all := mustJSON(t, res)
			if first == nil {
				first = all
			} else if !bytes.Equal(all, first) {
				t.Errorf("%s, %s, window %d: %d workers differ from fewer", name, p, window, workers)
			}
			if got := withoutEvents(t, res); !bytes.Equal(got, want) {
				t.Errorf("%s, %s, window %d, %d workers: routing ahead differs from the event loop:\nahead %s\nloop  %s", name, p, window, workers, firstDiff(got, want), firstDiff(want, got))
			}
		}
	}
}

// TestRefreshAheadIsTheEventLoop: with a router refresh interval the policies that read replica
// state route a refresh interval ahead, and each replica replays it alone: the result is the
// event loop's (refreshing at the same times), for any number of workers. A refresh every
// nanosecond is a refresh at every arrival: the router then sees what the exact router sees.
func TestRefreshAheadIsTheEventLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("replays three sources under four policies")
	}
	srv := llama8B(t)
	for _, s := range aheadSources(t) {
		for _, p := range []Policy{LeastOutstanding, LeastKV, PrefixAware, Session} {
			run := s.runner(t, srv, p)
			exact := withoutEvents(t, run(Config{}))
			refreshes := []float64{1e-9, 0.013, 0.25}
			if raceEnabled {
				refreshes = refreshes[1:2] // the race detector needs the workers, not every interval
			}
			for _, refresh := range refreshes {
				loop := run(Config{RefreshS: refresh, eventByEvent: true})
				want := withoutEvents(t, loop)
				if refresh == 1e-9 {
					loop.RefreshS = 0 // the one field that names the refresh
					if got := withoutEvents(t, loop); !bytes.Equal(got, exact) {
						t.Errorf("%s, %s: a refresh every nanosecond differs from the exact router:\n%s\n%s", s.name, p, firstDiff(got, exact), firstDiff(exact, got))
					}
				}
				var first []byte
				for workers := 1; workers <= 3; workers++ {
					// Three workers also split each refresh interval into windows of 7 requests.
					window := 0
					if workers == 3 {
						window = 7
					}
					res := run(Config{RefreshS: refresh, Workers: workers, window: window})
					all := mustJSON(t, res)
					switch {
					case first == nil:
						first = all
					case window == 0 && !bytes.Equal(all, first):
						// (Smaller windows stop the engines more often: their event counts differ.)
						t.Errorf("%s, %s, refresh %g s: %d workers differ from one", s.name, p, refresh, workers)
					}
					if got := withoutEvents(t, res); !bytes.Equal(got, want) {
						t.Errorf("%s, %s, refresh %g s, %d workers: routing ahead differs from the event loop:\nahead %s\nloop  %s", s.name, p, refresh, workers, firstDiff(got, want), firstDiff(want, got))
					}
				}
			}
		}
	}
}

// TestRefreshChangesRouting: a router that refreshes its view rarely routes differently from
// one that sees the replicas exactly (the view is stale), and a least-outstanding router with a
// stale view still spreads requests by its own sends.
func TestRefreshChangesRouting(t *testing.T) {
	srv := llama8B(t)
	spec := openSpec(t, 30, 600, 0, 1000, 200)
	run := func(refresh float64) *Result {
		st, err := spec.Stream(1)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(Config{Groups: []Group{{Server: srv, Count: 4}}, Policy: LeastOutstanding, Seed: 1, Spec: spec, RefreshS: refresh}, st)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	exact, stale := run(0), run(2)
	routed := func(res *Result) (out []int64) {
		for _, x := range res.Replicas {
			out = append(out, x.Routed)
		}
		return out
	}
	if slices.Equal(routed(exact), routed(stale)) {
		t.Errorf("a view refreshed every 2 s routes as the exact one: %v", routed(exact))
	}
	if b := stale.BalanceMaxToMean; b > 1.1 {
		t.Errorf("stale least-outstanding: busiest replica %.2f x the mean, want <= 1.1 (the router counts its own sends)", b)
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

// TestRefreshWithCapsAndAutoscaler: with a router cap, its queue and an autoscaler the event loop
// runs a refreshed view (nothing routes ahead there): the run is deterministic and reads the view,
// so a view refreshed every 5 s routes otherwise than the exact one.
func TestRefreshWithCapsAndAutoscaler(t *testing.T) {
	srv := llama8B(t)
	spec := openSpec(t, 16, 800, 2, 1000, 200)
	run := func(refresh float64) []byte {
		st, err := spec.Stream(3)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(Config{Groups: []Group{{Server: srv, Count: 2}}, Policy: LeastOutstanding, Seed: 3, Spec: spec, RefreshS: refresh,
			ReplicaCap: 24, QueueCap: 400, Autoscale: &Autoscale{Max: 4, StartupS: 5, IntervalS: 2, QueuePerReplica: 4, IdleS: 30}}, st)
		if err != nil {
			t.Fatal(err)
		}
		if res.Routed != 800 {
			t.Fatalf("refresh %g: %d routed, want 800", refresh, res.Routed)
		}
		res.RefreshS = 0 // compare the runs, not the field naming the refresh
		return withoutEvents(t, res)
	}
	a, b := run(5), run(5)
	if !bytes.Equal(a, b) {
		t.Errorf("refreshed view with caps and an autoscaler: two runs differ:\n%s\n%s", firstDiff(a, b), firstDiff(b, a))
	}
	if exact := run(0); bytes.Equal(exact, a) {
		t.Error("a view refreshed every 5 s routes as the exact one")
	}
}
