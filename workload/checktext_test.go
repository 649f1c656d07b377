package workload

import (
	"strings"
	"testing"
)

func TestLatencyText(t *testing.T) {
	for _, c := range []struct {
		ms   float64
		want string
	}{
		{4.25, "4.25 ms"}, {47.66, "47.7 ms"}, {500, "500 ms"}, {1500, "1.50 s"}, {31_760, "31.8 s"}, {317_600, "318 s"}, {1_234_000, "1,234 s"},
	} {
		if got := Latency(c.ms); got != c.want {
			t.Errorf("Latency(%v) = %q, want %q", c.ms, got, c.want)
		}
	}
}

// TestCheckText: a miss reads as the value against its limit in units a person reads, with the
// factor for a far miss; never an exponent or a percentage in the tens of thousands.
func TestCheckText(t *testing.T) {
	for _, c := range []struct {
		c    Check
		want string
	}{
		{Check{Name: "ttft_ms", Quantile: 0.9, Value: 317_600, Limit: 1500, Headroom: (1500 - 317_600) / 1500.}, "TTFT p90 318 s > 1.50 s (212 x the limit)"},
		{Check{Name: "ttft_ms", Quantile: 0.9, Value: 47.7, Limit: 500, Headroom: 0.9046, Met: true}, "TTFT p90 47.7 ms <= 500 ms (+90 % headroom)"},
		{Check{Name: "tpot_ms", Quantile: 0.99, Value: 36, Limit: 30, Headroom: -0.2}, "TPOT p99 36.0 ms > 30.0 ms (over by 20 %)"},
		{Check{Name: "user_tok_s", Quantile: 0.9, Value: 12, Limit: 20, Headroom: -0.4}, "per-user tok/s p90 12.0 < 20.0 (under by 40 %)"},
		{Check{Name: "user_tok_s", Quantile: 0.9, Value: 5, Limit: 20, Headroom: -0.75}, "per-user tok/s p90 5.0 < 20.0 (at 1/4 of the limit)"},
	} {
		got := c.c.Text()
		if got != c.want {
			t.Errorf("%+v: %q, want %q", c.c, got, c.want)
		}
		if strings.Contains(got, "e+") || strings.Contains(got, "e-0") {
			t.Errorf("%q has an exponent", got)
		}
	}
	o := &Overload{ArrivalReqS: 10, ServedReqS: 3.14, Binds: "arrival rate above capacity"}
	miss := MissText([]Check{{Name: "ttft_ms", Quantile: 0.9, Value: 317_600, Limit: 500, Headroom: -634}, {Name: "tpot_ms", Quantile: 0.9, Value: 20, Limit: 30, Met: true, Headroom: 0.33}}, o)
	if want := "TTFT p90 318 s > 500 ms (635 x the limit); binds: arrival rate above capacity (10 req/s arrive, 3.14 served)"; miss != want {
		t.Errorf("MissText = %q, want %q", miss, want)
	}
}
