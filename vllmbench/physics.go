package vllmbench

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/model/deploy"
)

// CheckPhysics checks the measured values against what the deployment can physically do
// (deploy.Ceiling, with deploy.PlausibleMargin): output tok/s (the run's and its best second)
// above the bandwidth and compute limits, a time to first token shorter than one forward pass, a
// time per output token shorter than a forward pass over the tokens one step can give. The error
// names the field and the limit.
func (r *Result) CheckPhysics(c deploy.Ceiling) error {
	const m = deploy.PlausibleMargin
	if c.OutputTokS > 0 {
		for _, f := range []struct {
			field string
			v     float64
		}{{"output_throughput", r.OutputThroughput}, {"max_output_tokens_per_s", r.MaxOutputTokensPerS}} {
			if f.v > m*c.OutputTokS {
				return fmt.Errorf("%s: %s %g is implausible for the simulated deployment: more than %g x its physical limit of %.4g output tok/s (%s); was it measured on another server?",
					r.Name, f.field, f.v, m, c.OutputTokS, c.Why)
			}
		}
	}
	if !(c.ForwardS > 0) || r.Completed == 0 {
		return nil
	}
	type bound struct {
		metric string
		l      *Latency
		min    float64
		what   string
	}
	steps := float64(max(c.TokensPerStep, 1))
	for _, b := range []bound{
		{"ttft", &r.TTFT, c.ForwardS, "one forward pass"},
		{"tpot", &r.TPOT, c.ForwardS / steps, fmt.Sprintf("one forward pass per %g tokens", steps)},
		{"itl", &r.ITL, c.ForwardS, "one forward pass"},
	} {
		vals := []struct {
			field string
			v     float64
		}{{"mean_" + b.metric + "_ms", b.l.Mean}}
		if b.metric != "itl" {
			// A client reading two chunks at once sees a gap near zero: only the mean inter-token
			// latency (the run's decode time over its chunks) is bounded.
			vals = append(vals, struct {
				field string
				v     float64
			}{"median_" + b.metric + "_ms", b.l.Median})
			for _, p := range b.l.Percentiles {
				vals = append(vals, struct {
					field string
					v     float64
				}{fmt.Sprintf("p%g_%s_ms", p.P, b.metric), p.MS})
			}
		}
		for _, f := range vals {
			// 0 is what vLLM writes for a metric with no sample (no request with two tokens).
			if f.v > 0 && f.v*1e-3*m < b.min {
				return fmt.Errorf("%s: %s %g ms is implausible for the simulated deployment: less than 1/%g of %s (%.3g ms: %s); was it measured on another server?",
					r.Name, f.field, f.v, m, b.what, b.min*1e3, c.Why)
			}
		}
	}
	for i, t := range r.TTFTsS {
		if t > 0 && t*m < c.ForwardS && (i >= len(r.Errors) || r.Errors[i] == "") {
			return fmt.Errorf("%s: ttfts[%d] %g s is implausible for the simulated deployment: less than 1/%g of one forward pass (%.3g ms: %s); was it measured on another server?",
				r.Name, i, t, m, c.ForwardS*1e3, c.Why)
		}
	}
	return nil
}

// detailPlausible refuses negative or infinite per-request times (ttfts, itls).
func (r *Result) detailPlausible() error {
	for i, t := range r.TTFTsS {
		if t < 0 || math.IsInf(t, 0) {
			return fmt.Errorf("ttfts[%d] %g is implausible: want seconds >= 0", i, t)
		}
	}
	for i, l := range r.ITLsS {
		for j, t := range l {
			if t < 0 || math.IsInf(t, 0) {
				return fmt.Errorf("itls[%d][%d] %g is implausible: want seconds >= 0", i, j, t)
			}
		}
	}
	return nil
}
