package matrix

import (
	"fmt"
	"math"
)

// Limits are a deployment's physical limits, for checking a measured matrix against them (the
// deployment computes them; zero fields are not checked).
type Limits struct {
	// ForwardS is the shortest forward pass, in seconds: no time to first token is shorter.
	ForwardS float64
	// TokensPerStep is the most tokens one sequence gains in a step (1 + speculative tokens): no
	// time between tokens is shorter than ForwardS over it.
	TokensPerStep int
	// OutputTokS is the most output tokens per second of the deployment.
	OutputTokS float64
	// Margin is how far past a limit a value must be to be implausible (a factor >= 1).
	Margin float64
	// Why describes the limits, for messages.
	Why string
}

// Slack of the checks against a cell's own numbers: the published page rounds to three
// significant figures (and time between tokens to 0.1 ms), so numbers that define one another
// agree only to a few percent there.
const (
	ownTotalsSlack = 1.05 // tok/s against output tokens / measured time, prefill tok/s against tokens / TTFT
	tbtSlack       = 1.15 // per-request tok/s against 1000 / time between tokens ("0.9 ms" is 0.85..0.95)
	// perRequestOverTotal bounds a decode cell's per-request tok/s by its total tok/s: the total
	// counts the window's gaps (a finished stream's successor prefilling its prompt), the
	// per-request rate does not, so one stream's rate may exceed the total, but not by this much.
	perRequestOverTotal = 10.0
)

// Plausible checks a measured matrix's cells against their own numbers (a decode cell's total
// tok/s is its output tokens over its measured time, per-request tok/s 1000 over the time
// between tokens and not far above the total, average active at most the requests sent, the
// measured time at most the run's window; a prefill row's tok/s is its tokens over its TTFT) and
// against the deployment's physical limits lim. The error names the cell and the field.
func (m *Matrix) Plausible(lim Limits) error {
	if lim.Margin < 1 {
		lim.Margin = 1
	}
	for _, c := range m.Cells() {
		if err := c.plausible(&lim, m.Info.DurationS); err != nil {
			return fmt.Errorf("cell %s: %w", c.Key(), err)
		}
	}
	return nil
}

func present(v float64) bool { return !math.IsNaN(v) }

func (c *Cell) plausible(lim *Limits, durationS float64) error {
	mg := lim.Margin
	if c.Phase == Prefill {
		if present(c.TotalTokS) && present(c.TTFTms) && c.TTFTms > 0 {
			if want := float64(c.ContextTokens) / (c.TTFTms / 1e3); !within(c.TotalTokS, want, ownTotalsSlack) {
				return fmt.Errorf("total_tok_s %g is implausible: a prefill row's tok/s is its %d tokens over its TTFT %g ms = %.4g", c.TotalTokS, c.ContextTokens, c.TTFTms, want)
			}
		}
	} else {
		if present(c.TotalTokS) && present(c.MeasuredS) && c.MeasuredS > 0 && c.OutputTokens >= 0 {
			if want := float64(c.OutputTokens) / c.MeasuredS; !within(c.TotalTokS, want, ownTotalsSlack) {
				return fmt.Errorf("total_tok_s %g is implausible: the cell's own totals give %.4g (%d output tokens over %g s)", c.TotalTokS, want, c.OutputTokens, c.MeasuredS)
			}
		}
		if present(c.PerRequestTokS) && present(c.TBTms) && c.TBTms > 0 {
			if want := 1e3 / c.TBTms; !within(c.PerRequestTokS, want, tbtSlack) {
				return fmt.Errorf("per_request_tok_s %g is implausible: it is 1000 over the time between tokens %g ms = %.4g", c.PerRequestTokS, c.TBTms, want)
			}
		}
		if present(c.PerRequestTokS) && present(c.TotalTokS) && c.TotalTokS > 0 && c.PerRequestTokS > perRequestOverTotal*c.TotalTokS {
			return fmt.Errorf("per_request_tok_s %g is implausible: more than %g x the cell's total tok/s %g over all its streams", c.PerRequestTokS, perRequestOverTotal, c.TotalTokS)
		}
		if present(c.AvgActive) && c.AvgActive > float64(c.Concurrency)*ownTotalsSlack+1 {
			return fmt.Errorf("avg_active %g is implausible: the cell sends %d requests at once (and one scout)", c.AvgActive, c.Concurrency)
		}
		if present(c.MeasuredS) && durationS > 0 && c.MeasuredS > durationS*ownTotalsSlack {
			return fmt.Errorf("measured_s %g is implausible: longer than the run's window of %g s", c.MeasuredS, durationS)
		}
		if present(c.TotalTokS) && lim.OutputTokS > 0 && c.TotalTokS > mg*lim.OutputTokS {
			return fmt.Errorf("total_tok_s %g is implausible for the simulated deployment: more than %g x its physical limit of %.4g output tok/s (%s); was it measured on another server?", c.TotalTokS, mg, lim.OutputTokS, lim.Why)
		}
	}
	if lim.ForwardS > 0 {
		steps := float64(max(lim.TokensPerStep, 1))
		if present(c.TTFTms) && c.TTFTms*1e-3*mg < lim.ForwardS {
			return fmt.Errorf("ttft_ms %g is implausible for the simulated deployment: less than 1/%g of one forward pass (%.3g ms: %s); was it measured on another server?", c.TTFTms, mg, lim.ForwardS*1e3, lim.Why)
		}
		if present(c.TBTms) && c.TBTms*1e-3*mg < lim.ForwardS/steps {
			return fmt.Errorf("tbt_ms %g is implausible for the simulated deployment: less than 1/%g of one forward pass per %g tokens (%.3g ms: %s); was it measured on another server?", c.TBTms, mg, steps, lim.ForwardS/steps*1e3, lim.Why)
		}
		if present(c.PerRequestTokS) && c.PerRequestTokS > mg*steps/lim.ForwardS {
			return fmt.Errorf("per_request_tok_s %g is implausible for the simulated deployment: more than %g x %g tokens per forward pass (%.4g tok/s: %s); was it measured on another server?", c.PerRequestTokS, mg, steps, steps/lim.ForwardS, lim.Why)
		}
	}
	return nil
}

// within reports whether v is want within a factor slack either way (0 only for 0).
func within(v, want, slack float64) bool {
	if want == 0 {
		return v*slack < 1e-9 || v == 0
	}
	return v <= want*slack && v*slack >= want
}
