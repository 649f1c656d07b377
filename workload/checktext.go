package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Latency writes a latency in milliseconds for people: "47.7 ms", "850 ms", "1.5 s", "318 s",
// "1,234 s"; never an exponent.
func Latency(ms float64) string {
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return "n/a"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	case ms < 10_000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
	case ms < 100_000:
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
	}
	return commas(int64(math.Round(ms/1000))) + " s"
}

// CheckName is an objective's short name: TTFT, TPOT, E2E, per-user tok/s.
func CheckName(name string) string {
	if name == "user_tok_s" {
		return "per-user tok/s"
	}
	return strings.ToUpper(strings.TrimSuffix(name, "_ms"))
}

// Margin says how far a value is from its limit: "+90 % headroom" when it is met, "over by
// 20 %" when it misses by less than the limit again, "636 x the limit" past that (a per-user
// rate: "at 1/3 of the limit").
func (c Check) Margin() string {
	switch {
	case c.Undefined:
		return "n/a"
	case c.Met:
		return fmt.Sprintf("%+.0f %% headroom", 100*c.Headroom)
	case c.Name == "user_tok_s":
		if c.Value > 0 && c.Value < c.Limit/2 {
			return fmt.Sprintf("at 1/%.3g of the limit", c.Limit/c.Value)
		}
		return fmt.Sprintf("under by %.0f %%", -100*c.Headroom)
	case c.Limit > 0 && c.Value >= 2*c.Limit:
		return fmt.Sprintf("%.3g x the limit", c.Value/c.Limit)
	}
	return fmt.Sprintf("over by %.0f %%", -100*c.Headroom)
}

// Text writes the check for people: "TTFT p90 47.7 ms <= 500 ms (+90 % headroom)", "TTFT p90
// 318 s > 1.50 s (212 x the limit)", "per-user tok/s p90 12.0 < 20 (under by 40 %)".
func (c Check) Text() string {
	q := fmt.Sprintf("p%g", 100*c.Quantile)
	name := CheckName(c.Name)
	if c.Undefined {
		return fmt.Sprintf("%s %s n/a (no request has more than one output token)", name, q)
	}
	if c.Name == "user_tok_s" {
		op := ">="
		if !c.Met {
			op = "<"
		}
		return fmt.Sprintf("%s %s %s %s %s (%s)", name, q, rateText(c.Value), op, rateText(c.Limit), c.Margin())
	}
	op := "<="
	if !c.Met {
		op = ">"
	}
	return fmt.Sprintf("%s %s %s %s %s (%s)", name, q, Latency(c.Value), op, Latency(c.Limit), c.Margin())
}

func rateText(v float64) string {
	if v >= 100 {
		return commas(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// MissText says what a missed run misses and why, for one line: "TTFT p90 318 s > 500 ms (636 x
// the limit); binds: arrival rate above capacity (10 req/s arrive, 3.1 served)". Empty when every
// objective is met.
func MissText(checks []Check, o *Overload) string {
	var parts []string
	for _, c := range checks {
		if !c.Met && !c.Undefined {
			parts = append(parts, c.Text())
		}
	}
	if len(parts) == 0 {
		if o != nil {
			return fmt.Sprintf("%s; binds: %s", o.Short(), o.Binds)
		}
		return ""
	}
	s := strings.Join(parts, "; ")
	if o != nil {
		s += fmt.Sprintf("; binds: %s (%s req/s arrive, %s served)", o.Binds, rate3(o.ArrivalReqS), rate3(o.ServedReqS))
	}
	return s
}
