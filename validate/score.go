package validate

import (
	"fmt"
	summary "github.com/servesim/servesim/internal/stats"
	"math"
	"sort"
	"strings"
)

// Metric families scored, in report order.
const (
	FamOutput = "output_tok_s"
	FamTPOT   = "tpot_ms"
	FamTTFT   = "ttft_ms"
	FamE2E    = "e2e_ms"
)

// Families is the scored metric families in order.
func Families() []string { return []string{FamOutput, FamTPOT, FamTTFT, FamE2E} }

// Comparison is one metric of one row, predicted against measured.
type Comparison struct {
	Metric    string  `json:"metric"` // e.g. ttft_ms_median
	Family    string  `json:"family"`
	Predicted float64 `json:"predicted"`
	Measured  float64 `json:"measured"`
	// Primary marks the statistic the summaries use for the family: the median when the row
	// records it, else the mean (compare like with like).
	Primary bool `json:"primary"`
	// Scored is false when the metric is shown but left out of the summaries (latencies of an
	// overloaded run, every metric of a run with failed requests).
	Scored bool `json:"scored"`
	// Lo80 and Hi80 bound the prediction's 80 % interval (param.Summary.Interval80; 0 when the
	// parameters' provenance is not known).
	Lo80 float64 `json:"lo_80,omitempty"`
	Hi80 float64 `json:"hi_80,omitempty"`
}

// Err is the signed relative error (predicted - measured) / measured.
func (c Comparison) Err() float64 { return (c.Predicted - c.Measured) / c.Measured }

type stat struct {
	name, family string
	get          func(*Measured, *Prediction) (float64, float64)
}

func stats() []stat {
	return []stat{
		{"output_tok_s", FamOutput, func(m *Measured, p *Prediction) (float64, float64) { return m.OutputTokS, p.OutputTokS }},
		{"tpot_ms_median", FamTPOT, func(m *Measured, p *Prediction) (float64, float64) { return m.TPOTMedianMS, p.TPOTMedianMS }},
		{"tpot_ms_mean", FamTPOT, func(m *Measured, p *Prediction) (float64, float64) { return m.TPOTMeanMS, p.TPOTMeanMS }},
		{"tpot_ms_p99", FamTPOT, func(m *Measured, p *Prediction) (float64, float64) { return m.TPOTP99MS, p.TPOTP99MS }},
		{"ttft_ms_median", FamTTFT, func(m *Measured, p *Prediction) (float64, float64) { return m.TTFTMedianMS, p.TTFTMedianMS }},
		{"ttft_ms_mean", FamTTFT, func(m *Measured, p *Prediction) (float64, float64) { return m.TTFTMeanMS, p.TTFTMeanMS }},
		{"ttft_ms_p90", FamTTFT, func(m *Measured, p *Prediction) (float64, float64) { return m.TTFTP90MS, p.TTFTP90MS }},
		{"ttft_ms_p99", FamTTFT, func(m *Measured, p *Prediction) (float64, float64) { return m.TTFTP99MS, p.TTFTP99MS }},
		{"e2e_ms_median", FamE2E, func(m *Measured, p *Prediction) (float64, float64) { return m.E2EMedianMS, p.E2EMedianMS }},
		{"e2e_ms_mean", FamE2E, func(m *Measured, p *Prediction) (float64, float64) { return m.E2EMeanMS, p.E2EMeanMS }},
		{"e2e_ms_p99", FamE2E, func(m *Measured, p *Prediction) (float64, float64) { return m.E2EP99MS, p.E2EP99MS }},
	}
}

func usable(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v > 0 }

// compare lists a row's comparisons: every statistic both sides have. overloaded and failed
// decide what the summaries score.
func compare(m *Measured, p *Prediction, overloaded, failed bool) []Comparison {
	var out []Comparison
	primary := map[string]bool{}
	for _, s := range stats() {
		mv, pv := s.get(m, p)
		if !usable(mv) || math.IsNaN(pv) || math.IsInf(pv, 0) {
			continue
		}
		c := Comparison{Metric: s.name, Family: s.family, Predicted: pv, Measured: mv, Scored: !failed && (s.family == FamOutput || !overloaded)}
		isMedian := strings.HasSuffix(s.name, "_median") || s.family == FamOutput
		isMean := strings.HasSuffix(s.name, "_mean")
		if !primary[s.family] && (isMedian || (isMean && !hasMedian(m, s.family))) {
			c.Primary = true
			primary[s.family] = true
		}
		out = append(out, c)
	}
	return out
}

func hasMedian(m *Measured, fam string) bool {
	switch fam {
	case FamTPOT:
		return usable(m.TPOTMedianMS)
	case FamTTFT:
		return usable(m.TTFTMedianMS)
	case FamE2E:
		return usable(m.E2EMedianMS)
	}
	return true
}

// Accuracy summarises signed relative errors: MAPE and median APE in percent, and the bias (mean
// signed error, percent; positive: predicted too high).
type Accuracy struct {
	N         int     `json:"n"`
	MAPE      float64 `json:"mape_pct"`
	MedianAPE float64 `json:"median_ape_pct"`
	Bias      float64 `json:"bias_pct"`
}

func accuracy(errs []float64) Accuracy {
	a := Accuracy{N: len(errs), MAPE: math.NaN(), MedianAPE: math.NaN(), Bias: math.NaN()}
	if len(errs) == 0 {
		return a
	}
	abs := make([]float64, len(errs))
	sum, sumAbs := 0.0, 0.0
	for i, e := range errs {
		abs[i] = math.Abs(e)
		sum += e
		sumAbs += abs[i]
	}
	sort.Float64s(abs)
	a.MAPE = 100 * sumAbs / float64(len(errs))
	a.MedianAPE = 100 * summary.Quantile(abs, 0.5)
	a.Bias = 100 * sum / float64(len(errs))
	return a
}

// OverloadCall is an open-loop row's overload call, predicted against measured.
type OverloadCall struct {
	Measured     bool   `json:"measured"`
	MeasuredWhy  string `json:"measured_why"`
	Predicted    bool   `json:"predicted"`
	PredictedWhy string `json:"predicted_why"`
}

// Confusion counts overload calls.
type Confusion struct {
	Both, PredictedOnly, MeasuredOnly, Neither int
}

// RatioScore is one ratio between two rows of a ratio-scored source.
type RatioScore struct {
	Kind string `json:"kind"` // gpu-count, tp-vs-pp, shape
	// Group names what is held fixed; Num and Den the two rows (case ids).
	Group     string  `json:"group"`
	Num       string  `json:"num"`
	Den       string  `json:"den"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
}

// Err is the ratio's relative error predicted / measured - 1.
func (r RatioScore) Err() float64 { return r.Predicted/r.Measured - 1 }

// Ratio kinds.
const (
	RatioGPUs  = "gpu-count"
	RatioTPPP  = "tp-vs-pp"
	RatioShape = "shape"
	// RatioConcurrency: for one model, shape and layout of a closed-loop sweep (another
	// engine's server), each concurrency's time per output token and output tok/s over the
	// lowest concurrency's.
	RatioConcurrency    = "concurrency-tpot"
	RatioConcurrencyOut = "concurrency-tok/s"
)

// referenceShape is the shape a model/layout's throughput ratios are taken against when present.
const referenceShape = "1000/1000"

type ratioRow struct {
	id           string
	model        string
	shape        string
	in, out      int
	gpus, tp, pp int
	meas, pred   float64
	// A closed-loop sweep's concurrency and time per output token.
	conc               int
	tpotMeas, tpotPred float64
}

// Ratios forms the ratio comparisons of ratio-scored outcomes (TensorRT-LLM: README 1.5):
//   - gpu-count: for one model and shape, each GPU count's throughput over the smallest count's
//     (the layout the source used at each count);
//   - tp-vs-pp: for one model, shape and GPU count, each layout's throughput over the one with
//     the largest TP;
//   - shape: for one model and layout, each shape's throughput over the 1000/1000 shape's (else
//     the shortest shape's).
//
// Predicted ratios use the same rows' predicted throughputs; absolute values are never compared.
func Ratios(outs []*Outcome) []RatioScore {
	var rows []ratioRow
	var sweep []ratioRow
	for _, o := range outs {
		c := o.Case
		if c.Scoring != Ratio || o.Pred == nil || !c.Expressed() || c.Row == nil || !usable(c.Row.Measured.OutputTokS) || !usable(o.Pred.OutputTokS) {
			continue
		}
		if r := c.Row; r.Concurrency > 0 {
			// A closed-loop sweep: its rows differ in concurrency, compared on TPOT (the
			// primary statistic the row has) and output tok/s.
			meas, pred := r.Measured.TPOTMedianMS, o.Pred.TPOTMedianMS
			if !usable(meas) {
				meas, pred = r.Measured.TPOTMeanMS, o.Pred.TPOTMeanMS
			}
			sweep = append(sweep, ratioRow{id: c.ID, model: r.Model, shape: fmt.Sprintf("%g/%g", r.InputTokensNominal, r.OutputTokensNominal),
				gpus: max(r.GPUCount, 1), tp: max(r.TP, 1), pp: max(r.PP, 1), conc: r.Concurrency,
				meas: r.Measured.OutputTokS, pred: o.Pred.OutputTokS, tpotMeas: meas, tpotPred: pred})
			continue
		}
		r := c.Row
		in, out := int(math.Round(r.InputTokens)), int(math.Round(r.OutputTokens))
		rows = append(rows, ratioRow{id: c.ID, model: r.Model, shape: fmt.Sprintf("%d/%d", in, out), in: in, out: out,
			gpus: max(r.GPUCount, 1), tp: max(r.TP, 1), pp: max(r.PP, 1), meas: r.Measured.OutputTokS, pred: o.Pred.OutputTokS})
	}
	var out []RatioScore
	add := func(kind, group string, num, den ratioRow) {
		out = append(out, RatioScore{Kind: kind, Group: group, Num: num.id, Den: den.id, Measured: num.meas / den.meas, Predicted: num.pred / den.pred})
	}
	// gpu-count
	for _, g := range groupBy(rows, func(r ratioRow) string { return r.model + " " + r.shape }) {
		base := g[0]
		for _, r := range g {
			if r.gpus < base.gpus || (r.gpus == base.gpus && r.tp > base.tp) {
				base = r
			}
		}
		for _, r := range g {
			if r.gpus != base.gpus {
				add(RatioGPUs, fmt.Sprintf("%s %s: %d GPUs over %d", r.model, r.shape, r.gpus, base.gpus), r, base)
			}
		}
	}
	// tp-vs-pp
	for _, g := range groupBy(rows, func(r ratioRow) string { return fmt.Sprintf("%s %s %d", r.model, r.shape, r.gpus) }) {
		base := g[0]
		for _, r := range g {
			if r.tp > base.tp {
				base = r
			}
		}
		for _, r := range g {
			if r.tp != base.tp || r.pp != base.pp {
				add(RatioTPPP, fmt.Sprintf("%s %s on %d GPUs: TP%d PP%d over TP%d PP%d", r.model, r.shape, r.gpus, r.tp, r.pp, base.tp, base.pp), r, base)
			}
		}
	}
	// shape
	for _, g := range groupBy(rows, func(r ratioRow) string { return fmt.Sprintf("%s TP%d PP%d", r.model, r.tp, r.pp) }) {
		var base *ratioRow
		for i := range g {
			if g[i].shape == referenceShape {
				base = &g[i]
			}
		}
		if base == nil {
			base = &g[0]
			for i := range g {
				if g[i].in+g[i].out < base.in+base.out {
					base = &g[i]
				}
			}
		}
		for _, r := range g {
			if r.id != base.id {
				add(RatioShape, fmt.Sprintf("%s TP%d PP%d: %s over %s", r.model, r.tp, r.pp, r.shape, base.shape), r, *base)
			}
		}
	}
	// concurrency
	for _, g := range groupBy(sweep, func(r ratioRow) string {
		return fmt.Sprintf("%s %s %d TP%d PP%d", r.model, r.shape, r.gpus, r.tp, r.pp)
	}) {
		base := g[0]
		for _, r := range g {
			if r.conc < base.conc {
				base = r
			}
		}
		for _, r := range g {
			if r.id == base.id {
				continue
			}
			group := fmt.Sprintf("%s %s TP%d: C = %d over C = %d", r.model, r.shape, r.tp, r.conc, base.conc)
			if usable(r.tpotMeas) && usable(base.tpotMeas) && usable(r.tpotPred) && usable(base.tpotPred) {
				out = append(out, RatioScore{Kind: RatioConcurrency, Group: group, Num: r.id, Den: base.id,
					Measured: r.tpotMeas / base.tpotMeas, Predicted: r.tpotPred / base.tpotPred})
			}
			add(RatioConcurrencyOut, group, r, base)
		}
	}
	return out
}

// groupBy groups rows by key, groups in order of first appearance, rows in input order.
func groupBy(rows []ratioRow, key func(ratioRow) string) [][]ratioRow {
	idx := map[string]int{}
	var out [][]ratioRow
	for _, r := range rows {
		k := key(r)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}
