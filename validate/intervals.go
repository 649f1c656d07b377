package validate

import (
	"fmt"
	summary "github.com/servesim/servesim/internal/stats"
	"io"
	"math"
	"sort"
	"text/tabwriter"

	"github.com/servesim/servesim/model/param"
)

// metricOf is the interval metric of a scored family.
func metricOf(family string) param.Metric {
	switch family {
	case FamTPOT:
		return param.MetricTPOT
	case FamTTFT:
		return param.MetricTTFT
	case FamE2E:
		return param.MetricE2E
	}
	return param.MetricThroughput
}

// Coverage is the share of measured values inside their 80 % interval, for one source (or "all")
// and one metric family (or "all").
type Coverage struct {
	Source string `json:"source"`
	Metric string `json:"metric"`
	N      int    `json:"n"`
	Inside int    `json:"inside"`
}

// Fraction is Inside / N (NaN when N is 0).
func (c Coverage) Fraction() float64 {
	if c.N == 0 {
		return math.NaN()
	}
	return float64(c.Inside) / float64(c.N)
}

// CoverageSet is the coverage of one set of widths: per source and metric, per source, per
// metric and overall.
type CoverageSet struct {
	// Widths names the widths ("shipped", "in-sample", "leave one source out").
	Widths string     `json:"widths"`
	Cells  []Coverage `json:"cells"`
}

// IntervalReport is the check of the prediction intervals on the corpus: the coverage of the
// shipped widths (param.Widths), the prior widths estimated from this run (in-sample) with their
// coverage, and the leave-one-source-out coverage (each source scored with prior widths estimated
// without it).
type IntervalReport struct {
	Shipped  CoverageSet `json:"shipped"`
	InSample CoverageSet `json:"in_sample"`
	LOSO     CoverageSet `json:"leave_one_source_out"`
	// Estimated are the prior widths estimated on every source, per metric (ln units), and
	// EstimatedApprox the approximated engine's extra widths; LOSOWidths and LOSOApprox per
	// held-out source, those estimated without it (a width no other source informs stays the
	// shipped one).
	Estimated       map[param.Metric]float64            `json:"estimated_prior_widths"`
	EstimatedApprox map[param.Metric]float64            `json:"estimated_approximate_engine_widths"`
	LOSOWidths      map[string]map[param.Metric]float64 `json:"loso_prior_widths"`
	LOSOApprox      map[string]map[param.Metric]float64 `json:"loso_approximate_engine_widths"`
}

// scoredPoint is one primary, scored absolute comparison of a case with a provenance summary.
type scoredPoint struct {
	source string
	family string
	logErr float64 // ln(measured / predicted)
	prov   *param.Summary
	pred   float64
	meas   float64
}

// scoredPoints are the primary, scored comparisons of absolute-scored cases with a provenance,
// less the output tok/s of open-loop rows that keep up (measured and predicted): the arrival
// rate sets it, so no interval is given for it (as simulate gives none) and it tests none.
func scoredPoints(cases []CaseReport) []scoredPoint {
	var out []scoredPoint
	for i := range cases {
		c := &cases[i]
		if !c.Expressed || c.Scoring != Absolute || c.Provenance == nil {
			continue
		}
		keepsUp := c.Overload != nil && !c.Overload.Measured && !c.Overload.Predicted
		for _, cmp := range c.Comparisons {
			if !cmp.Primary || !cmp.Scored || !usable(cmp.Predicted) || !usable(cmp.Measured) || (keepsUp && cmp.Family == FamOutput) {
				continue
			}
			out = append(out, scoredPoint{source: c.Source, family: cmp.Family, logErr: math.Log(cmp.Measured / cmp.Predicted),
				prov: c.Provenance, pred: cmp.Predicted, meas: cmp.Measured})
		}
	}
	return out
}

// estimateWidths estimates the prior widths per metric from the points of rows resting on priors
// only (every group prior) whose engine servesim expresses: the 80th percentile of
// |ln(measured / predicted)| divided by z_0.9, so that a central 80 % interval of that width holds
// 80 % of them; and the extra width of an approximated engine (vLLM V0) from such points of rows
// of that engine: their own width less the prior width in quadrature. Sources in exclude are left
// out. A width without points keeps the shipped one.
func estimateWidths(pts []scoredPoint, exclude string) (prior, approx map[param.Metric]float64) {
	exact, approxAbs := map[param.Metric][]float64{}, map[param.Metric][]float64{}
	for _, p := range pts {
		if p.source == exclude || p.prov.Class != param.ClassPrior {
			continue
		}
		m := metricOf(p.family)
		if p.prov.ApproxEngine != "" {
			approxAbs[m] = append(approxAbs[m], math.Abs(p.logErr))
		} else {
			exact[m] = append(exact[m], math.Abs(p.logErr))
		}
	}
	def := param.DefaultWidths()
	width := func(v []float64) float64 {
		sort.Float64s(v)
		return summary.Quantile(v, 0.8) / param.Z80
	}
	prior, approx = map[param.Metric]float64{}, map[param.Metric]float64{}
	for _, m := range param.Metrics() {
		prior[m] = def[param.ClassPrior][m]
		if v := exact[m]; len(v) > 0 {
			prior[m] = width(v)
		}
		approx[m] = def[param.ClassApproxEngine][m]
		if v := approxAbs[m]; len(v) > 0 {
			w := width(v)
			approx[m] = math.Sqrt(math.Max(0, w*w-prior[m]*prior[m]))
		}
	}
	return prior, approx
}

// withEstimates is the shipped widths with the prior class's and the approximated engine's
// replaced.
func withEstimates(prior, approx map[param.Metric]float64) param.WidthTable {
	t := param.DefaultWidths()
	for m, v := range prior {
		t[param.ClassPrior][m] = v
	}
	for m, v := range approx {
		t[param.ClassApproxEngine][m] = v
	}
	return t
}

// coverage counts the points inside their intervals under widths (per point: widthsFor).
func coverage(name string, pts []scoredPoint, widthsFor func(source string) param.WidthTable) CoverageSet {
	type key struct{ s, m string }
	count := map[key]*Coverage{}
	var order []key
	add := func(k key, in bool) {
		c := count[k]
		if c == nil {
			c = &Coverage{Source: k.s, Metric: k.m}
			count[k] = c
			order = append(order, k)
		}
		c.N++
		if in {
			c.Inside++
		}
	}
	for _, p := range pts {
		iv := widthsFor(p.source).Interval80(p.prov, metricOf(p.family), p.pred)
		in := iv.Contains(p.meas)
		for _, k := range []key{{p.source, p.family}, {p.source, "all"}, {"all", p.family}, {"all", "all"}} {
			add(k, in)
		}
	}
	rank := func(s string) string {
		if s == "all" {
			return "\xff"
		}
		return s
	}
	famRank := map[string]int{FamOutput: 0, FamTPOT: 1, FamTTFT: 2, FamE2E: 3, "all": 4}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if rank(a.s) != rank(b.s) {
			return rank(a.s) < rank(b.s)
		}
		return famRank[a.m] < famRank[b.m]
	})
	cs := CoverageSet{Widths: name}
	for _, k := range order {
		cs.Cells = append(cs.Cells, *count[k])
	}
	return cs
}

// NewIntervalReport checks the intervals on the report's absolute-scored cases (ratio-scored
// rows have no absolute prediction to cover).
func NewIntervalReport(cases []CaseReport) *IntervalReport {
	pts := scoredPoints(cases)
	ir := &IntervalReport{LOSOWidths: map[string]map[param.Metric]float64{}, LOSOApprox: map[string]map[param.Metric]float64{}}
	shipped := param.DefaultWidths()
	ir.Shipped = coverage("shipped (param.Widths)", pts, func(string) param.WidthTable { return shipped })
	ir.Estimated, ir.EstimatedApprox = estimateWidths(pts, "")
	est := withEstimates(ir.Estimated, ir.EstimatedApprox)
	ir.InSample = coverage("prior widths estimated on every source (in-sample)", pts, func(string) param.WidthTable { return est })
	loso := map[string]param.WidthTable{}
	for _, p := range pts {
		if _, ok := loso[p.source]; !ok {
			w, a := estimateWidths(pts, p.source)
			ir.LOSOWidths[p.source], ir.LOSOApprox[p.source] = w, a
			loso[p.source] = withEstimates(w, a)
		}
	}
	ir.LOSO = coverage("prior widths estimated without the source scored (leave one source out)", pts, func(s string) param.WidthTable { return loso[s] })
	return ir
}

func covCell(c Coverage) string {
	if c.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*c.Fraction(), c.Inside, c.N)
}

// WriteTable writes the coverage tables for people.
func (ir *IntervalReport) WriteTable(w io.Writer) {
	fmt.Fprintln(w, "80 % prediction intervals: share of measured values inside (primary statistics of absolute-scored rows; target 70-90 %)")
	for _, cs := range []CoverageSet{ir.Shipped, ir.InSample, ir.LOSO} {
		fmt.Fprintf(w, "  widths: %s\n", cs.Widths)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    source\toutput tok/s\tTPOT\tTTFT\tE2E\tall")
		var sources []string
		cells := map[string]map[string]Coverage{}
		for _, c := range cs.Cells {
			if cells[c.Source] == nil {
				cells[c.Source] = map[string]Coverage{}
				sources = append(sources, c.Source)
			}
			cells[c.Source][c.Metric] = c
		}
		for _, s := range sources {
			fmt.Fprintf(tw, "    %s", s)
			for _, f := range append(Families(), "all") {
				fmt.Fprintf(tw, "\t%s", covCell(cells[s][f]))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	line := func(name string, m map[param.Metric]float64) {
		fmt.Fprintf(w, "  %s:", name)
		for _, x := range param.Metrics() {
			fmt.Fprintf(w, " %s %.3f", x, m[x])
		}
		fmt.Fprintln(w)
	}
	var ss []string
	for s := range ir.LOSOWidths {
		ss = append(ss, s)
	}
	sort.Strings(ss)
	def := param.DefaultWidths()
	fmt.Fprintln(w, "Prior widths (sigma_prior_*, ln units) estimated from rows at priors only of engines servesim expresses:")
	line("every source", ir.Estimated)
	for _, s := range ss {
		line("without "+s, ir.LOSOWidths[s])
	}
	line("shipped", def[param.ClassPrior])
	fmt.Fprintln(w, "Approximated engine's extra widths (sigma_v0_engine_*, ln units) from rows at priors only of vLLM V0:")
	line("every source", ir.EstimatedApprox)
	for _, s := range ss {
		line("without "+s, ir.LOSOApprox[s])
	}
	line("shipped", def[param.ClassApproxEngine])
}
