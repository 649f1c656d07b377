package param

import (
	"fmt"
	"math"
)

// Speculative acceptance priors by method: model-level parameter sets, each from the public figure
// it is named after, that a scenario overrides with [engine.speculative] acceptance (the
// per-position rates vLLM reports) or mean_acceptance_length. DFlash keeps its own calibrated
// parameters (accept_tau, accept_decay, accept_late_ratio, accept_switch_tokens,
// accept_open_ratio and accept_open_tokens above).
//
// Each prior is a shape of conditional acceptance: position i (1-based) is accepted, given that
// every earlier one was, with probability min(1, First x Decay^(i-1)). vLLM's per-position rates
// are the unconditional P(accepted >= i) = prod_{j<=i} of those (ConditionalCDF), and its mean
// acceptance length is 1 + their sum.

// SpecPrior is one method's acceptance prior.
type SpecPrior struct {
	Method string
	// First is the conditional acceptance of the first draft position, Decay the factor per later
	// position (1: every position alike).
	First, Decay float64
	// Source says where the figures come from, for people.
	Source string
}

// SpecPriors lists the priors of the methods servesim simulates besides DFlash.
//
//	mtp     DeepSeek-AI, "DeepSeek-V3 Technical Report" (arXiv 2412.19437), section 5.4.3: the
//	        second token predicted by the MTP module is accepted 85 % to 90 % of the time across
//	        generation topics; First 0.85. Later positions reuse the one MTP layer on its own
//	        output (vLLM warns that k > 1 lowers acceptance); no public per-position figure, so
//	        Decay 0.8 is an assumption to calibrate (k = 3 gives a mean length of 2.74)
//	eagle3  Li et al., "EAGLE-3" (arXiv 2503.01840): chain drafting on Llama-3.1-8B-Instruct at
//	        k = 5..7 accepts about 3 to 4 tokens per step on chat benchmarks (MT-bench); the
//	        prior sets a mean length of 3.5 at k = 6 with a mild decay 0.92 (the paper's
//	        per-position rates stay high thanks to its training-time test)
//	eagle   Li et al., "EAGLE" (ICML 2024), table of acceptance rates n-alpha: about 0.75 for the
//	        first position with feature-level drafting on chat (MT-bench), falling slowly;
//	        First 0.75, Decay 0.92
//	ngram   prompt lookup (Saxena 2023; vLLM's NgramProposer): drafts only when the last tokens
//	        reappear in the context, so acceptance is low on chat and high on repetitive or
//	        input-grounded text (summaries, code edits). Spec-Bench (Xia et al., ACL Findings
//	        2024) reports PLD's mean accepted tokens about 1.5 on its chat-like categories;
//	        First 0.4, Decay 0.75 (k = 3: 1.55)
//	draft_model  Leviathan, Kalman and Matias, "Fast Inference from Transformers via Speculative
//	        Decoding" (ICML 2023), table 3: a per-token acceptance alpha that grows with the
//	        drafter's size, e.g. LaMDA 137B on dialog with 100M, 2B and 8B drafters 0.57, 0.71
//	        and 0.75; alpha = 0.75 + 0.095 log10(r / 0.058) for a drafter of r times the
//	        target's active weights, within [0.3, 0.9] (DraftModelAcceptance), every position
//	        alike (Decay 1, their i.i.d. model)
func SpecPriors() []SpecPrior {
	return []SpecPrior{
		{"mtp", 0.85, 0.8, "DeepSeek-V3 Technical Report, 5.4.3: the MTP token is accepted 85-90 % of the time (first position 0.85); later positions reuse the layer, decay 0.8 assumed"},
		{"eagle3", FirstAcceptanceAt(3.5, 0.92, 6), 0.92, "EAGLE-3 (arXiv 2503.01840): about 3-4 accepted tokens per step at k = 5-7 on chat for Llama-3.1-8B (mean length 3.5 at k = 6, decay 0.92)"},
		{"eagle", 0.75, 0.92, "EAGLE (ICML 2024): first-position acceptance about 0.75 on MT-bench, decay 0.92"},
		{"ngram", 0.4, 0.75, "prompt lookup: low on chat (Spec-Bench: about 1.5 accepted tokens per step), high on repetitive text"},
		{"draft_model", 0, 1, "Leviathan et al. (ICML 2023), table 3: per-token acceptance by drafter size, 0.75 + 0.095 log10(r / 0.058) for a drafter r times the target's active weights"},
	}
}

// SpecPriorFor returns the prior of a method (ok false for a method without one, such as dflash,
// whose acceptance is the parameters accept_tau and accept_decay).
func SpecPriorFor(method string) (SpecPrior, bool) {
	for _, p := range SpecPriors() {
		if p.Method == method {
			return p, true
		}
	}
	return SpecPrior{}, false
}

// DraftModelAcceptance is the per-token acceptance of a separate draft model ratio times the
// target's active weights (SpecPriors, draft_model).
func DraftModelAcceptance(ratio float64) float64 {
	if !(ratio > 0) {
		return 0.3
	}
	return math.Min(0.9, math.Max(0.3, 0.75+0.095*math.Log10(ratio/0.058)))
}

// ConditionalCDF returns P(accepted >= i) for i = 1..k when position i is accepted, given the
// earlier ones, with probability min(1, first x decay^(i-1)).
func ConditionalCDF(first, decay float64, k int) []float64 { return cdf(first, decay, k) }

// MeanLengthOf is vLLM's mean acceptance length for the per-position rates P(accepted >= i):
// 1 + their sum.
func MeanLengthOf(rates []float64) float64 {
	t := 1.0
	for _, v := range rates {
		t += v
	}
	return t
}

// FirstAcceptanceAt is the first position's conditional acceptance that gives a mean acceptance
// length tau with k drafts and the decay (bisection; the length grows with it). A tau beyond what
// [0, 1] reaches gives 0 or 1.
func FirstAcceptanceAt(tau, decay float64, k int) float64 {
	lo, hi := 0.0, 1.0
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if meanLength(mid, decay, k) < tau {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// MTPReferenceDrafts is the number of drafts at which MTPAcceptTau is given.
const MTPReferenceDrafts = 3

// MeanLengthAt is the mean acceptance length with k drafts whose conditional rates are first x
// decay^(i-1).
func MeanLengthAt(first, decay float64, k int) float64 { return meanLength(first, decay, k) }

// MaxMeanLength is the longest mean acceptance length the decay allows with k drafts (first
// position always accepted).
func MaxMeanLength(decay float64, k int) float64 { return meanLength(1, decay, k) }

// SpecAcceptance is the acceptance of one speculative configuration: the rates the scheduler
// draws from and where they come from.
type SpecAcceptance struct {
	// Rates[i] = P(accepted >= i + 1) early in an output, for k positions.
	Rates []float64
	// Late replaces Rates from output position Switch on (DFlash's accept_late_ratio); nil: none.
	Late   []float64
	Switch int
	// Opening replaces Rates before output position OpenEnd (DFlash's accept_open_ratio); nil: none.
	Opening []float64
	OpenEnd int
	// Source names the prior, the override or the parameters.
	Source string
}

// Mean is the mean acceptance length early in an output.
func (a *SpecAcceptance) Mean() float64 { return MeanLengthOf(a.Rates) }

func (a *SpecAcceptance) String() string {
	return fmt.Sprintf("P(accepted >= i) %s, mean acceptance length %.2f (%s)", fmtRates(a.Rates), a.Mean(), a.Source)
}

func fmtRates(r []float64) string {
	s := "["
	for i, v := range r {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.3f", v)
	}
	return s + "]"
}
