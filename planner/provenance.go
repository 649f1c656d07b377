package planner

import (
	"fmt"
	"math"
	"strings"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
)

// ProvenanceFunc sums up the provenance of a candidate's parameters (param.Summary); native as
// for ParamsChooser.
type ProvenanceFunc func(d *deploy.Deployment, native bool) param.Summary

// PolicyProvenance is the provenance of the parameters PolicyParams(pol) chooses: the policy's
// summary (scenario.ParamsChoice.Summary), with calibrated groups counted as transferred when
// the weights are a variant of the model's checkpoint (as PolicyParams tags the source).
func PolicyProvenance(pol *scenario.ParamsPolicy) ProvenanceFunc {
	return func(d *deploy.Deployment, native bool) param.Summary {
		c, _ := pol.Choose(d)
		s := c.Summary
		if !native {
			s.Groups = append([]param.GroupProvenance(nil), s.Groups...)
			for i := range s.Groups {
				if s.Groups[i].Class == param.ClassCalibrated {
					s.Groups[i].Class = param.ClassTransferred
				}
			}
			if s.Class == param.ClassCalibrated {
				s.Class = param.ClassTransferred
			}
		}
		return s
	}
}

// ProvenanceWidths is the Uncertainty of the 80 % intervals by provenance (param.Widths): with
// a row's provenance the evaluation takes its intervals from it (provenanceIntervals); Interval
// serves rows without one, taking every group to be of the source's class.
type ProvenanceWidths struct{}

// Name identifies the widths in the plan's fingerprint.
func (ProvenanceWidths) Name() string {
	var b strings.Builder
	b.WriteString("80 % intervals by parameter provenance (ln-scale sigma)")
	for _, w := range param.Widths() {
		fmt.Fprintf(&b, " %s=%g", w.Name, w.Value)
	}
	return b.String()
}

// planMetric is the interval metric of a plan metric name.
func planMetric(name string) (param.Metric, bool) {
	switch name {
	case "output_tok_s":
		return param.MetricThroughput, true
	case "ttft_ms_q":
		return param.MetricTTFT, true
	case "tpot_ms_q", "user_tok_s":
		return param.MetricTPOT, true
	}
	return "", false
}

// Interval implements Uncertainty for a row known only by its source tag.
func (ProvenanceWidths) Interval(src scenario.Source, metric string, v float64) (lo, hi float64, ok bool) {
	m, ok := planMetric(metric)
	if !ok {
		return 0, 0, false
	}
	c := param.Class(src)
	w := param.DefaultWidths()
	sg, known := w[c][m]
	if !known {
		sg = w[param.ClassPrior][m]
	}
	s := param.Summary{Class: c}
	iv := param.WidthTable{c: {m: sg}}.Interval80(&s, m, v)
	return iv.Lo, iv.Hi, true
}

// provenanceIntervals are a row's intervals from its provenance.
func provenanceIntervals(s *param.Summary, p *Perf) []param.NamedInterval {
	var out []param.NamedInterval
	for _, x := range []struct {
		n string
		v float64
	}{{"output_tok_s", p.OutputTokS}, {"ttft_ms_q", p.TTFTq}, {"tpot_ms_q", p.TPOTq}, {"user_tok_s", p.UserTokS}} {
		m, _ := planMetric(x.n)
		out = append(out, param.NamedInterval{Name: x.n, Interval: s.Interval80(m, x.v)})
	}
	return out
}

// SourceLabel is the row's source for tables: the source tag, or "PRIORS ONLY" when the row
// rests on priors for a GPU family no measured data supports.
func (r *Result) SourceLabel() string {
	if r.Provenance != nil && r.Provenance.Unsupported {
		return "PRIORS ONLY"
	}
	return r.Source
}

// unsupportedNote is the table's footnote for rows that rest on unsupported priors ("" when
// none does).
func unsupportedNote(rows ...[]*Result) string {
	seen := map[string]bool{}
	var whys []string
	for _, rs := range rows {
		for _, r := range rs {
			if r.Provenance != nil && r.Provenance.Unsupported && !seen[r.Provenance.Why] {
				seen[r.Provenance.Why] = true
				whys = append(whys, r.Provenance.Why)
			}
		}
	}
	if len(whys) == 0 {
		return ""
	}
	return "  PRIORS ONLY: " + strings.Join(whys, "; ") + ": treat these rows as estimates to measure, not to buy on."
}

// hookInterval is the interval lo..hi an Uncertainty hook gave for the row metric name at value
// v, with its metric class and the log-normal sigma it spans as an 80 % interval.
func hookInterval(name string, v, lo, hi float64) param.NamedInterval {
	m, _ := planMetric(name)
	sigma := 0.0
	if lo > 0 && hi > lo {
		sigma = math.Log(hi/lo) / (2 * param.Z80)
	}
	return param.NamedInterval{Name: name, Interval: param.Interval{Metric: m, Value: v, Lo: lo, Hi: hi, Sigma: sigma}}
}

// upgradeIntervals reads the intervals of a plan written before they carried their metric class:
// {"metric": "output_tok_s", "lo", "hi"} is the row metric output_tok_s (class throughput).
func upgradeIntervals(ivs []param.NamedInterval) {
	for i := range ivs {
		if iv := &ivs[i]; iv.Name == "" {
			iv.Name = string(iv.Metric)
			iv.Metric, _ = planMetric(iv.Name)
		}
	}
}
