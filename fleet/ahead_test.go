package fleet

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// aheadCases are the sources the routing-ahead tests replay, and a source of Poisson arrivals
// of long prompts that overloads three replicas (preemptions, requests waiting in the engines,
// steps of every size).
func aheadCases(t *testing.T) []aheadSource {
	sources := aheadSources(t)
	spec := openSpec(t, 12, 500, 0, 6000, 900)
	st, err := spec.Stream(1)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []workload.Request
	for {
		q, ok := st.Next()
		if !ok {
			break
		}
		reqs = append(reqs, q)
	}
	return append(sources, aheadSource{"overload", spec, func() workload.Stream { return &sliceStream{reqs: reqs} }, reqs[len(reqs)-1].At})
}

// TestForeseeingIsTheEventLoop: least-outstanding, prefix-aware and session routing with an
// exact view, routed ahead of the engines by their foreseen finishes and each replica replayed
// alone, give what the event loop gives, byte for byte but for the engines' event counts (every
// replica's metrics, KV samples, the series, the fleet), on trace excerpts, arrivals tied with
// the KV samples and an overloaded Poisson stream, with windows capped at one and seven requests
// and uncapped; and the same bytes, engine events included, on one, two or three workers.
func TestForeseeingIsTheEventLoop(t *testing.T) {
	srv := llama8B(t)
	if !(&Config{Groups: []Group{{Server: srv, Count: 3}}, Policy: LeastOutstanding}).canForesee() {
		t.Fatal("three replicas of Llama-3.1-8B under least-outstanding: want routing ahead by foresight")
	}
	preempted := false
	for _, s := range aheadCases(t) {
		for _, p := range []Policy{LeastOutstanding, PrefixAware, Session} {
			if raceEnabled && (p != LeastOutstanding || s.name != "overload") {
				// The race detector checks the workers' hand-over; one case is enough for it.
				continue
			}
			run := s.runner(t, srv, p)
			loop := run(Config{eventByEvent: true})
			want := withoutEvents(t, loop)
			preempted = preempted || loop.Fleet.Preemptions > 0
			compareAhead(t, s.name, p, run, want, func(window, workers int) bool {
				return !raceEnabled || (window == 7 && workers == 2)
			})
		}
	}
	if !preempted && !raceEnabled {
		t.Error("no source preempted a request: the overloaded stream should")
	}
}

// TestKVAheadIsTheEventLoop: least-kv routing with an exact view, routed ahead of the replicas
// whose wake has come on their KV floors and each replica replayed alone through the window,
// gives what the event loop gives, byte for byte but for the engines' event counts, on the trace
// excerpts, arrivals tied with the KV samples and the overloaded stream (least-kv herds it:
// requests wait in the engines, and are preempted); with windows capped at one and seven requests
// and uncapped, and the same bytes on one, two or three workers; with ngram speculative decoding
// too (no foresight, no floors); and on a busy fleet of twenty replicas. The floors make windows
// longer: on the Azure excerpt and the overloaded stream there are fewer windows than without
// them, on the busy fleet under half as many. Not used with a replica cap, an autoscaler, a view
// or one replica.
func TestKVAheadIsTheEventLoop(t *testing.T) {
	srv := llama8B(t)
	g := []Group{{Server: srv, Count: 3}}
	if !(&Config{Groups: g, Policy: LeastKV}).canRouteKV() {
		t.Fatal("three replicas of Llama-3.1-8B under least-kv: want routing ahead")
	}
	for _, c := range []Config{
		{Groups: g, Policy: LeastKV, ReplicaCap: 4},
		{Groups: g, Policy: LeastKV, Autoscale: &Autoscale{Max: 4}},
		{Groups: g, Policy: LeastKV, RefreshS: 0.05},
		{Groups: []Group{{Server: srv, Count: 1}}, Policy: LeastKV},
		{Groups: g, Policy: LeastOutstanding},
	} {
		if c.canRouteKV() {
			t.Errorf("%+v: least-kv routed ahead, want another loop", c)
		}
	}
	waited, preempted := false, false
	for _, s := range aheadCases(t) {
		if raceEnabled && s.name != "overload" {
			continue
		}
		run := s.runner(t, srv, LeastKV)
		loop := run(Config{eventByEvent: true})
		want := withoutEvents(t, loop)
		for _, x := range loop.Replicas {
			waited = waited || x.Metrics.Queue.P99 > 0
		}
		preempted = preempted || loop.Fleet.Preemptions > 0
		compareAhead(t, s.name, LeastKV, run, want, func(window, workers int) bool {
			return !raceEnabled || (window == 7 && workers == 2)
		})
		if raceEnabled {
			continue
		}
		// Without floors a window ends at the first arrival time after a replica's wake;
		// with them, where the pick is known to beat every replica at its floor.
		bare := run(Config{noFloors: true})
		if got := withoutEvents(t, bare); !bytes.Equal(got, want) {
			t.Errorf("%s, without floors: routing ahead differs from the event loop:\nahead %s\nloop  %s", s.name, firstDiff(got, want), firstDiff(want, got))
		}
		withFloors := run(Config{}).windows
		t.Logf("%s: %d arrival times, %d windows without floors, %d with", s.name, arrivalTimes(t, s), bare.windows, withFloors)
		if (s.name == "overload" || strings.HasPrefix(s.name, "azure")) && withFloors >= bare.windows {
			t.Errorf("%s: %d windows with floors, %d without: want fewer", s.name, withFloors, bare.windows)
		}
	}
	if !raceEnabled {
		// A busy fleet, twenty replicas at 400 requests a second: a replica's wake comes
		// between most two arrival times, and the floors route most of them ahead anyway.
		open := openSpec(t, 400, 4000, 0, 1000, 200)
		run := func(c Config) *Result {
			st, err := open.Stream(1)
			if err != nil {
				t.Fatal(err)
			}
			c.Groups, c.Policy, c.Seed, c.Spec = []Group{{Server: srv, Count: 20}}, LeastKV, 5, open
			res, err := Run(c, st)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		want := withoutEvents(t, run(Config{eventByEvent: true}))
		compareAhead(t, "twenty replicas", LeastKV, run, want, func(window, workers int) bool { return window == 0 && workers <= 2 })
		bare, withFloors := run(Config{noFloors: true}).windows, run(Config{}).windows
		t.Logf("twenty replicas: %d windows without floors, %d with", bare, withFloors)
		if 2*withFloors > bare {
			t.Errorf("twenty replicas: %d windows with floors, %d without: want under half", withFloors, bare)
		}
	}
	if !raceEnabled && (!waited || !preempted) {
		t.Errorf("requests waited in an engine %v, were preempted %v: the overloaded stream should do both", waited, preempted)
	}
	if raceEnabled {
		return
	}
	// Speculative decoding: what a step accepts is drawn at its end, from the engine's own
	// stream, so replaying a replica alone draws what the loop draws.
	spec := vllmServer(t, `vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'`, "H100-SXM")
	s := aheadCases(t)[0]
	run := s.runner(t, spec, LeastKV)
	compareAhead(t, s.name+" (ngram)", LeastKV, run, withoutEvents(t, run(Config{eventByEvent: true})), func(window, workers int) bool {
		return window == 0 && workers != 2
	})
}

// arrivalTimes is the number of distinct arrival times of s.
func arrivalTimes(t *testing.T, s aheadSource) int {
	t.Helper()
	st := s.stream()
	n := 0
	last := vtime.Time(-1)
	for {
		q, ok := st.Next()
		if !ok {
			break
		}
		if q.At != last {
			n++
			last = q.At
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestForeseeingNeedsAnExactCount: routing ahead by foresight is not used where the router reads
// more than outstanding counts, or where they are not foreseeable: least-kv (usage changes at
// every step), a replica cap (its queue sends on finishes), an autoscaler, a refreshed view
// (routed ahead on the view instead), speculative decoding (acceptance drawn at each step's
// end) and a fleet of one.
func TestForeseeingNeedsAnExactCount(t *testing.T) {
	srv := llama8B(t)
	g := []Group{{Server: srv, Count: 3}}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"least-kv", Config{Groups: g, Policy: LeastKV}},
		{"replica cap", Config{Groups: g, Policy: LeastOutstanding, ReplicaCap: 4}},
		{"autoscaler", Config{Groups: g, Policy: LeastOutstanding, Autoscale: &Autoscale{Max: 4}}},
		{"refreshed view", Config{Groups: g, Policy: LeastOutstanding, RefreshS: 0.05}},
		{"one replica", Config{Groups: []Group{{Server: srv, Count: 1}}, Policy: LeastOutstanding}},
		{"speculative decoding", Config{Groups: []Group{{Server: vllmServer(t, `vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'`, "H100-SXM"), Count: 3}}, Policy: LeastOutstanding}},
	} {
		if c.cfg.canForesee() {
			t.Errorf("%s: routed ahead by foresight, want the event loop", c.name)
		}
	}
}
