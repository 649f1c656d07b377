package workload

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

// TestOverloadReported: an open loop far above what the server serves (1,000 req/s against
// about 4) used to report status ok with TTFT p50 near an hour and no word about the arrival
// rate. It is now "overloaded", with the rates, the queue and the limit that binds; a load the
// server keeps up with stays ok.
func TestOverloadReported(t *testing.T) {
	srv, _ := seedServer(t)
	open := func(rate float64, n, in, out int) *Spec {
		return &Spec{Name: "o", Kind: KindOpen, Open: Open{Process: "poisson", RatePerS: rate, Requests: n},
			Lengths: Lengths{InputTokens: in, OutputTokens: out}}
	}
	cases := []struct {
		name  string
		srv   *sim.Server
		spec  *Spec
		binds string
	}{
		{"max-num-seqs", srv, open(1000, 2000, 1024, 256), "max-num-seqs"},
		{"long prompts", srv, open(2, 40, 300_000, 16), "arrival rate above capacity"},
		{"KV cache", serverWith(t, 1024), open(1000, 3000, 1024, 256), "KV cache"},
	}
	for _, c := range cases {
		m, err := Run(c.srv, c.spec, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		o := m.Overload
		if m.Status != StatusOverloaded || o == nil {
			t.Errorf("%s: status %q, overload %+v: want overloaded", c.name, m.Status, o)
			continue
		}
		if o.Binds != c.binds || !(o.ArrivalReqS > 1.1*o.ServedReqS) || o.QueuedAtEnd < 2 {
			t.Errorf("%s: %+v: want binds %q, arrivals above the served rate, a queue", c.name, o, c.binds)
		}
		var b bytes.Buffer
		if err := WriteTable(&b, m); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "[overloaded]") || !strings.Contains(b.String(), "Overloaded   arrival rate") {
			t.Errorf("%s: the table does not say overloaded:\n%s", c.name, b.String())
		}
	}
	for _, s := range []*Spec{open(2, 200, 1024, 256), open(3.5, 300, 1024, 256)} {
		m, err := Run(srv, s, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != "ok" || m.Overload != nil {
			t.Errorf("rate %g: status %q, %+v: want ok", s.Open.RatePerS, m.Status, m.Overload)
		}
	}
}

// serverWith is the seed's server with another max-num-seqs.
func serverWith(t *testing.T, maxNumSeqs int) *sim.Server {
	t.Helper()
	sc := scenario.Default()
	sc.Engine.MaxNumSeqs = &maxNumSeqs
	r, err := sc.Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestOverloadMissesObjectives: objectives hold for the offered load. An open loop the server
// cannot keep up with misses its SLO even when the requests it served meet every latency limit
// (a loose TPOT objective: only the queue grows), and says why; the same objective at a load it
// keeps up with is met.
func TestOverloadMissesObjectives(t *testing.T) {
	srv, _ := seedServer(t)
	open := func(rate float64, n int) *Spec {
		return &Spec{Name: "o", Kind: KindOpen, Open: Open{Process: "poisson", RatePerS: rate, Requests: n},
			Lengths: Lengths{InputTokens: 1024, OutputTokens: 256}, SLO: SLO{TPOTms: 10_000}}
	}
	m, err := Run(srv, open(1000, 2000), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.Overload == nil || m.Goodput == nil || m.Goodput.Met || !m.Goodput.Checks[0].Met {
		t.Fatalf("overloaded run: overload %+v, goodput %+v: want every check met and the SLO missed", m.Overload, m.Goodput)
	}
	if s := MissText(m.Goodput.Checks, m.Overload); !strings.Contains(s, "does not keep up") || !strings.Contains(s, "max-num-seqs") {
		t.Errorf("miss text %q: want the rates and the limit that binds", s)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "SLO          MISSED") || !strings.Contains(b.String(), "does not keep up:") {
		t.Errorf("table:\n%s", b.String())
	}
	ok, err := Run(srv, open(2, 200), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ok.Overload != nil || ok.Goodput == nil || !ok.Goodput.Met {
		t.Errorf("2 req/s: overload %+v, goodput %+v: want the SLO met", ok.Overload, ok.Goodput)
	}
}

// TestBurstFlagged: requests that all arrive at one instant and queue (vllm bench throughput, a
// trace whose rows all say t = 0) are overloaded, the burst named, not status ok with latencies
// that measure the queue's length; a burst the server takes in at once is ok.
func TestBurstFlagged(t *testing.T) {
	srv, _ := seedServer(t) // max-num-seqs 32
	offline := func(n int) *Spec {
		p := make([]BenchPrompt, n)
		for i := range p {
			p[i] = BenchPrompt{Tokens: 300, OutputTokens: 200}
		}
		b := &VLLMBench{}
		b.SetPrompts(p)
		return &Spec{Name: "o", Kind: KindOffline, VLLM: b}
	}
	trace := func(n int) *Spec {
		rows := make([]TraceRow, n)
		for i := range rows {
			rows[i] = TraceRow{0, 300, 200, 0, 0, 0}
		}
		s := &Spec{Name: "t", Kind: KindTrace}
		s.SetTrace(rows)
		return s
	}
	for _, c := range []struct {
		name  string
		spec  *Spec
		burst bool
	}{
		{"offline 400", offline(400), true},
		{"trace of 400 at t = 0", trace(400), true},
		{"offline 8", offline(8), false},
		{"trace of 8 at t = 0", trace(8), false},
	} {
		m, err := Run(srv, c.spec, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !c.burst {
			if m.Status != "ok" || m.Overload != nil {
				t.Errorf("%s: status %q, overload %+v: want ok (every request runs at once)", c.name, m.Status, m.Overload)
			}
			continue
		}
		o := m.Overload
		if m.Status != StatusOverloaded || o == nil || o.Binds != burstBinds || o.QueuedAtEnd < 400-32 || !(o.ServedReqS > 0) {
			t.Errorf("%s: status %q, overload %+v: want overloaded by a burst, at least 368 queued", c.name, m.Status, o)
			continue
		}
		var b bytes.Buffer
		if err := WriteTable(&b, m); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "[overloaded]") || !strings.Contains(b.String(), "all 400 requests arrive at once") {
			t.Errorf("%s: table:\n%s", c.name, b.String())
		}
		if _, err := json.Marshal(m); err != nil {
			t.Errorf("%s: metrics do not encode: %v", c.name, err)
		}
	}
}
