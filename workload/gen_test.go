package workload

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/servesim/servesim/vtime"
)

func TestLengthsWithinRange(t *testing.T) {
	s := &Spec{Name: "x", Kind: KindClosed, Closed: Closed{Requests: 2000, Concurrency: 4},
		Lengths: Lengths{InputTokens: 1000, OutputTokens: 100, RangeRatio: 0.5, PrefixTokens: 600, PrefixGroups: 3}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.Requests(7)
	if err != nil {
		t.Fatal(err)
	}
	var sumIn float64
	groups := map[uint64]bool{}
	for i, r := range reqs {
		// vllm's random dataset: integers in [L(1-r), L(1+r)]; prompts keep room for the prefix.
		if r.InputTokens < 601 || r.InputTokens > 1500 || r.OutputTokens < 50 || r.OutputTokens > 150 {
			t.Fatalf("request %d: lengths %d/%d outside the range", i, r.InputTokens, r.OutputTokens)
		}
		if r.PrefixTokens != 600 {
			t.Fatalf("request %d: prefix %d", i, r.PrefixTokens)
		}
		groups[r.PrefixID] = true
		sumIn += float64(r.InputTokens)
	}
	if len(groups) != 3 {
		t.Errorf("%d prefix groups, want 3", len(groups))
	}
	// Mean of a uniform on [600, 1500] after clamping at 601 is about 1000; 2000 draws give a
	// standard error of about 6 tokens, so 30 is a 5-sigma band.
	if m := sumIn / float64(len(reqs)); math.Abs(m-1000) > 30 {
		t.Errorf("mean input %.1f, want about 1000", m)
	}
}

func TestArrivalRates(t *testing.T) {
	cases := []struct {
		name  string
		open  Open
		check func(t *testing.T, at []vtime.Time)
	}{
		{"poisson", Open{Process: "poisson", RatePerS: 5, Requests: 20000}, func(t *testing.T, at []vtime.Time) {
			// 20,000 exponential gaps of mean 0.2 s: the mean's relative standard error is
			// 1/sqrt(20000) = 0.7 %, so 3 % is a 4-sigma band; the CV of exponential gaps is 1.
			mean, cv := gapStats(at)
			if math.Abs(mean-0.2)/0.2 > 0.03 || math.Abs(cv-1) > 0.05 {
				t.Errorf("mean gap %.4f s (want 0.2), cv %.3f (want 1)", mean, cv)
			}
		}},
		{"gamma", Open{Process: "gamma", CV: 3, RatePerS: 5, Requests: 50000}, func(t *testing.T, at []vtime.Time) {
			// Gamma gaps with shape 1/9: heavier tails, so wider bands (the CV estimate of a
			// shape-1/9 gamma from 50,000 draws has a standard error of about 3 %).
			mean, cv := gapStats(at)
			if math.Abs(mean-0.2)/0.2 > 0.06 || math.Abs(cv-3)/3 > 0.12 {
				t.Errorf("mean gap %.4f s (want 0.2), cv %.3f (want 3)", mean, cv)
			}
		}},
		{"ramp", Open{Process: "poisson", Ramp: []RampPoint{{0, 0}, {100, 40}}}, func(t *testing.T, at []vtime.Time) {
			// The rate rises linearly from 0 to 40/s over 100 s: 2,000 arrivals expected in all,
			// 500 in the first half. Poisson counts: sd sqrt(n), so 4-sigma bands.
			if n := float64(len(at)); math.Abs(n-2000) > 4*math.Sqrt(2000) {
				t.Errorf("%v arrivals, want about 2000", n)
			}
			half := 0
			for _, a := range at {
				if a.Seconds() < 50 {
					half++
				}
				if a.Seconds() > 100 {
					t.Fatalf("arrival at %v after the ramp's end", a)
				}
			}
			if math.Abs(float64(half)-500) > 4*math.Sqrt(500) {
				t.Errorf("%d arrivals in the first 50 s, want about 500", half)
			}
		}},
		{"duration", Open{Process: "poisson", RatePerS: 10, DurationS: 60}, func(t *testing.T, at []vtime.Time) {
			if n := float64(len(at)); math.Abs(n-600) > 4*math.Sqrt(600) || at[len(at)-1].Seconds() > 60 {
				t.Errorf("%v arrivals, last at %v; want about 600 within 60 s", n, at[len(at)-1])
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Spec{Name: c.name, Kind: KindOpen, Open: c.open, Lengths: Lengths{InputTokens: 10, OutputTokens: 10}}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			at, err := s.Open.arrivals(11)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(at); i++ {
				if at[i] < at[i-1] {
					t.Fatalf("arrival %d before arrival %d", i, i-1)
				}
			}
			c.check(t, at)
		})
	}
}

func gapStats(at []vtime.Time) (mean, cv float64) {
	var s, s2 float64
	n := float64(len(at) - 1)
	for i := 1; i < len(at); i++ {
		g := at[i].Sub(at[i-1]).Seconds()
		s += g
		s2 += g * g
	}
	mean = s / n
	return mean, math.Sqrt(s2/n-mean*mean) / mean
}

func TestRequestsDeterministic(t *testing.T) {
	for _, name := range []string{"chat", "chat-bursty", "chat-ramp", "rag", "1k1k"} {
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := s.Requests(3)
		b, _ := s.Requests(3)
		c, _ := s.Requests(4)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the same seed gave different requests", name)
		}
		if reflect.DeepEqual(a, c) && name != "1k1k" {
			t.Errorf("%s: seeds 3 and 4 gave the same requests", name)
		}
	}
}

func TestParseSpec(t *testing.T) {
	good := `
name = "bursty"
kind = "open"
seed = 9
[lengths]
input_tokens = 512
output_tokens = 64
range_ratio = 0.25
[open]
process = "gamma"
cv = 2.0
ramp = [{at_s = 0, rate = 1}, {at_s = 30, rate = 4}]
[slo]
ttft_ms = 500
tpot_ms = 40
`
	s, err := Parse([]byte(good), "w.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasSeed || s.Seed != 9 || s.Open.CV != 2 || len(s.Open.Ramp) != 2 || s.SLO.TPOTms != 40 {
		t.Errorf("parsed %+v", s)
	}
	if s.SeedFor(Options{Seed: 1}) != 9 {
		t.Errorf("the file's seed should win")
	}
	bad := []struct{ in, want string }{
		{`kind = "open"` + "\n" + `rate = 3`, `w.toml:2: unknown key "rate"`},
		{`kind = "closed"` + "\n[closed]\nrequests = 1\nconcurrency = 1\nmax = 2\n[lengths]\ninput_tokens=1\noutput_tokens=1", `unknown key "closed.max"`},
		{`kind = "sometimes"`, `kind = "sometimes": want closed, open, trace, bench, vllm-bench or offline`},
		{`name = "x"`, `kind: missing`},
		{"kind = \"open\"\n[lengths]\ninput_tokens = 10\noutput_tokens = 10\n[open]\nprocess = \"poisson\"\nrate = 1", "give requests or duration_s"},
		{"kind = \"open\"\n[lengths]\ninput_tokens = 10\noutput_tokens = 10\n[open]\nprocess = \"gamma\"\nrate = 1\nrequests = 3", "open.cv = 0"},
		{"kind = \"open\"\n[lengths]\ninput_tokens = 10\noutput_tokens = 10\n[open]\nprocess = \"poisson\"\nrequests = 3\nramp = [{at_s = 5, rate = 1}, {at_s = 2, rate = 1}]", "open.ramp[1].at_s = 2: must be after"},
		{"kind = \"closed\"\n[lengths]\ninput_tokens = 10\noutput_tokens = 0\n[closed]\nrequests = 3\nconcurrency = 1", "w.toml:4: lengths.output_tokens = 0"},
		{"kind = \"closed\"\n[lengths]\ninput_tokens = 10\noutput_tokens = 5\nrange_ratio = 1.5\n[closed]\nrequests = 3\nconcurrency = 1", "lengths.range_ratio = 1.5"},
		{"kind = \"bench\"\n[bench]\ncontext = \"12Q\"\nconcurrency = 1", "bench.context"},
		{"kind = \"trace\"", "trace.file: missing"},
		{"kind = \"closed\"\n[slo]\nquantile = 1.5", "slo.quantile = 1.5"},
		{"kind = [", "w.toml: line 1"},
	}
	for _, c := range bad {
		_, err := Parse([]byte(c.in), "w.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q): error %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestPresets(t *testing.T) {
	for _, p := range Presets() {
		name := p.Name
		if name == "bench-CTXxC" {
			name = "bench-32Kx8"
		}
		s, err := Preset(name)
		if err != nil {
			t.Errorf("preset %s: %v", name, err)
			continue
		}
		if err := s.Validate(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	for _, bad := range []string{"bench-12x", "bench-Qx4", "nothing"} {
		if _, err := Preset(bad); err == nil {
			t.Errorf("Preset(%q) succeeded", bad)
		}
	}
}
