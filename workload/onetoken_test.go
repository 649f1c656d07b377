package workload

import (
	"bytes"
	"strings"
	"testing"
)

// TestOneTokenTPOTUndefined: with 1-token outputs TPOT is not defined (vLLM's benchmark counts
// only requests with output > 1). The SLO used to say "TPOT ... MISSED (-100 %)" while goodput
// said every request met every objective; now both say the TPOT objective does not apply.
func TestOneTokenTPOTUndefined(t *testing.T) {
	srv, _ := seedServer(t)
	s := &Spec{Name: "one", Kind: KindClosed, Closed: Closed{Requests: 12, Concurrency: 4},
		Lengths: Lengths{InputTokens: 100, OutputTokens: 1},
		SLO:     SLO{TTFTms: 5000, TPOTms: 40, UserTokS: 10}}
	m, err := Run(srv, s, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Goodput
	if m.TPOT.N != 0 || g == nil || !g.Met || g.Fraction != 1 {
		t.Fatalf("TPOT n %d, goodput %+v: want no TPOT sample, every objective met, fraction 1", m.TPOT.N, g)
	}
	undefined := 0
	for _, c := range g.Checks {
		if c.Name == "tpot_ms" || c.Name == "user_tok_s" {
			if !c.Undefined || !c.Met {
				t.Errorf("%s check %+v: want undefined and met", c.Name, c)
			}
			undefined++
		}
	}
	if undefined != 2 {
		t.Errorf("%d undefined checks, want 2 (tpot_ms, user_tok_s)", undefined)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, m); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"SLO          met", "TPOT p90 n/a", "per-user tok/s p90 n/a", "Per user     n/a", "100.0% of requests meet every objective"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "MISSED") || strings.Contains(out, "missed") {
		t.Errorf("table says missed:\n%s", out)
	}
	// A mix of 1-token and longer outputs keeps TPOT defined by the longer ones.
	s.Lengths = Lengths{InputTokens: 100, OutputTokens: 4, RangeRatio: 0.75}
	m, err = Run(srv, s, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.TPOT.N == 0 {
		t.Errorf("mixed outputs: no TPOT sample")
	}
	for _, c := range m.Goodput.Checks {
		if c.Undefined {
			t.Errorf("mixed outputs: %s undefined", c.Name)
		}
	}
}
