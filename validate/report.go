package validate

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/model/param"
)

// CaseReport is one case in the report.
type CaseReport struct {
	ID          string        `json:"case_id"`
	Source      string        `json:"source"`
	File        string        `json:"file,omitempty"`
	Line        int           `json:"line,omitempty"`
	Scoring     Scoring       `json:"scoring"`
	Expressed   bool          `json:"expressed"`
	ReasonClass string        `json:"reason_class,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	Model       string        `json:"model"`
	ModelFrom   string        `json:"model_from,omitempty"`
	Server      string        `json:"server,omitempty"`
	Params      string        `json:"params,omitempty"`
	Workload    string        `json:"workload,omitempty"`
	Notes       []string      `json:"notes,omitempty"`
	Comparisons []Comparison  `json:"comparisons,omitempty"`
	Overload    *OverloadCall `json:"overload,omitempty"`
	// Provenance is the parameters' provenance by group (what the intervals widen with).
	Provenance *param.Summary `json:"provenance,omitempty"`
}

// FamilyAccuracy is one metric family's accuracy.
type FamilyAccuracy struct {
	Family   string   `json:"family"`
	Accuracy Accuracy `json:"accuracy"`
}

// RatioAccuracy is one ratio kind's accuracy.
type RatioAccuracy struct {
	Kind     string   `json:"kind"`
	Accuracy Accuracy `json:"accuracy"`
}

// SourceSummary is one source's accuracy (or the whole corpus's: Source "all").
type SourceSummary struct {
	Source    string           `json:"source"`
	Rows      int              `json:"rows"`
	Expressed int              `json:"expressed"`
	Scoring   string           `json:"scoring"`
	Metrics   []FamilyAccuracy `json:"metrics"`
	// Overload counts the overload calls of open-loop rows.
	Overload     Confusion       `json:"overload"`
	OverloadRows int             `json:"overload_rows"`
	Ratios       []RatioAccuracy `json:"ratios,omitempty"`
}

// ReasonCount counts the rows not expressed for one reason class.
type ReasonCount struct {
	Class string `json:"class"`
	Count int    `json:"count"`
}

// Report is a validation run: per case, per source, the ratios and what could not be expressed.
type Report struct {
	Params       string          `json:"params"`
	Sources      []SourceSummary `json:"sources"`
	Total        SourceSummary   `json:"total"`
	Ratios       []RatioScore    `json:"ratios"`
	NotExpressed []ReasonCount   `json:"not_expressed"`
	// Intervals checks the 80 % prediction intervals' coverage (nil without provenance).
	Intervals *IntervalReport `json:"intervals,omitempty"`
	Cases     []CaseReport    `json:"cases"`
}

// NewReport scores the outcomes. measured gives each outcome's measurement (the row's, or a
// result file's).
func NewReport(outs []*Outcome) *Report {
	rep := &Report{}
	params := map[string]bool{}
	for _, o := range outs {
		c := o.Case
		cr := CaseReport{ID: c.ID, Source: c.Source, Scoring: c.Scoring, Expressed: c.Expressed() && o.Pred != nil,
			ReasonClass: c.ReasonClass, Reason: c.Reason, ModelFrom: c.ModelFrom, Server: o.Server, Params: o.Params,
			Workload: c.Workload, Notes: c.Notes, Provenance: o.Summary}
		if o.Params != "" {
			params[o.Params] = true
		}
		var m *Measured
		if c.Row != nil {
			cr.File, cr.Line, cr.Model = c.Row.File, c.Row.Line, c.Row.Model
			m = &c.Row.Measured
		} else if c.measured != nil {
			m = c.measured
			cr.Model = c.model
		}
		if cr.Expressed && m != nil {
			over, overWhy, open := false, "", false
			failed := false
			if c.Row != nil {
				over, overWhy, open = MeasuredOverloaded(c.Row)
				failed = c.Row.NumFailed > 0
			}
			cr.Comparisons = append(compare(m, o.Pred, over, failed), factComparisons(c, o.Pred, failed)...)
			if o.Summary != nil {
				for i := range cr.Comparisons {
					x := &cr.Comparisons[i]
					iv := o.Summary.Interval80(metricOf(x.Family), x.Predicted)
					x.Lo80, x.Hi80 = iv.Lo, iv.Hi
				}
			}
			if c.Scoring == Ratio {
				for i := range cr.Comparisons {
					cr.Comparisons[i].Scored = false
				}
			}
			if open && o.Pred.Overloaded != nil {
				cr.Overload = &OverloadCall{Measured: over, MeasuredWhy: overWhy, Predicted: *o.Pred.Overloaded, PredictedWhy: o.Pred.OverloadWhy}
			}
		}
		rep.Cases = append(rep.Cases, cr)
	}
	var ps []string
	for p := range params {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	rep.Params = strings.Join(ps, "; ")
	rep.Ratios = Ratios(outs)
	// Per source, in order of first appearance.
	var order []string
	bySource := map[string][]*CaseReport{}
	for i := range rep.Cases {
		cr := &rep.Cases[i]
		if _, ok := bySource[cr.Source]; !ok {
			order = append(order, cr.Source)
		}
		bySource[cr.Source] = append(bySource[cr.Source], cr)
	}
	ratioSource := map[string]string{}
	for i := range rep.Cases {
		ratioSource[rep.Cases[i].ID] = rep.Cases[i].Source
	}
	for _, s := range order {
		rep.Sources = append(rep.Sources, summarise(s, bySource[s], rep.Ratios, ratioSource))
	}
	all := make([]*CaseReport, len(rep.Cases))
	for i := range rep.Cases {
		all[i] = &rep.Cases[i]
	}
	rep.Total = summarise("all", all, rep.Ratios, nil)
	for _, o := range outs {
		if o.Summary != nil {
			rep.Intervals = NewIntervalReport(rep.Cases)
			break
		}
	}
	counts := map[string]int{}
	for _, cr := range rep.Cases {
		if !cr.Expressed {
			class := cr.ReasonClass
			if class == "" {
				class = ReasonRun
			}
			counts[class]++
		}
	}
	for k, v := range counts {
		rep.NotExpressed = append(rep.NotExpressed, ReasonCount{k, v})
	}
	sort.Slice(rep.NotExpressed, func(i, j int) bool {
		a, b := rep.NotExpressed[i], rep.NotExpressed[j]
		return a.Count > b.Count || (a.Count == b.Count && a.Class < b.Class)
	})
	return rep
}

func summarise(source string, cases []*CaseReport, ratios []RatioScore, ratioSource map[string]string) SourceSummary {
	s := SourceSummary{Source: source, Rows: len(cases)}
	errs := map[string][]float64{}
	kinds := map[Scoring]bool{}
	for _, c := range cases {
		kinds[c.Scoring] = true
		if !c.Expressed {
			continue
		}
		s.Expressed++
		for _, cmp := range c.Comparisons {
			if cmp.Primary && cmp.Scored {
				errs[cmp.Family] = append(errs[cmp.Family], cmp.Err())
			}
		}
		if o := c.Overload; o != nil {
			s.OverloadRows++
			switch {
			case o.Predicted && o.Measured:
				s.Overload.Both++
			case o.Predicted:
				s.Overload.PredictedOnly++
			case o.Measured:
				s.Overload.MeasuredOnly++
			default:
				s.Overload.Neither++
			}
		}
	}
	var k []string
	for x := range kinds {
		k = append(k, string(x))
	}
	sort.Strings(k)
	s.Scoring = strings.Join(k, "+")
	for _, f := range append(Families(), FactFamilies()...) {
		s.Metrics = append(s.Metrics, FamilyAccuracy{f, accuracy(errs[f])})
	}
	rerrs := map[string][]float64{}
	for _, r := range ratios {
		if ratioSource != nil && ratioSource[r.Num] != source {
			continue
		}
		rerrs[r.Kind] = append(rerrs[r.Kind], r.Err())
	}
	for _, kind := range []string{RatioGPUs, RatioTPPP, RatioShape, RatioConcurrency, RatioConcurrencyOut} {
		if len(rerrs[kind]) > 0 {
			s.Ratios = append(s.Ratios, RatioAccuracy{kind, accuracy(rerrs[kind])})
		}
	}
	return s
}

// Expressed is the number of cases simulated and compared, and the total.
func (r *Report) Expressed() (n, total int) {
	for _, c := range r.Cases {
		if c.Expressed {
			n++
		}
	}
	return n, len(r.Cases)
}

func pctCell(a Accuracy) string {
	if a.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f / %.1f / %+.1f (%d)", a.MAPE, a.MedianAPE, a.Bias, a.N)
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// WriteTable writes the report for people: the per-source summary, the ratio summary, the
// per-case comparisons with their notes, the ratios and the rows not expressed.
func (r *Report) WriteTable(w io.Writer) error {
	n, total := r.Expressed()
	fmt.Fprintf(w, "servesim validate: %d of %d rows expressed (%.1f%%); parameters: %s\n\n", n, total, 100*float64(n)/float64(max(total, 1)), r.Params)
	fmt.Fprintln(w, "Accuracy per source: MAPE / median APE / bias in %, (rows); TensorRT-LLM and SGLang rows only as ratios")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "source\trows\texpressed\tscoring\toutput tok/s\tTPOT\tTTFT\tE2E\toverload: both / pred only / meas only / neither")
	for _, s := range append(append([]SourceSummary{}, r.Sources...), r.Total) {
		over := "-"
		if s.OverloadRows > 0 {
			over = fmt.Sprintf("%d / %d / %d / %d", s.Overload.Both, s.Overload.PredictedOnly, s.Overload.MeasuredOnly, s.Overload.Neither)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Source, s.Rows, s.Expressed, s.Scoring,
			pctCell(s.Metrics[0].Accuracy), pctCell(s.Metrics[1].Accuracy), pctCell(s.Metrics[2].Accuracy), pctCell(s.Metrics[3].Accuracy), over)
	}
	tw.Flush()
	r.writeFactors(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ratio scoring (predicted ratio / measured ratio - 1): MAPE / median APE / bias in %, (ratios)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "source\tkind\taccuracy")
	any := false
	for _, s := range r.Sources {
		for _, ra := range s.Ratios {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Source, ra.Kind, pctCell(ra.Accuracy))
			any = true
		}
	}
	if !any {
		fmt.Fprintln(tw, "-\t-\tno ratio-scored rows")
	}
	tw.Flush()
	if len(r.NotExpressed) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Rows not expressed, by reason:")
		for _, c := range r.NotExpressed {
			fmt.Fprintf(w, "  %3d  %s\n", c.Count, c.Class)
		}
	}
	if r.Intervals != nil {
		fmt.Fprintln(w)
		r.Intervals.WriteTable(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Per case (primary statistic per metric: the median when the row has it, else the mean): predicted / measured (error %)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\toutput tok/s\tTPOT ms\tTTFT ms\tE2E ms\toverload pred/meas")
	for _, c := range r.Cases {
		if !c.Expressed {
			fmt.Fprintf(tw, "%s\tnot expressed: %s\t\t\t\t\n", c.ID, c.ReasonClass)
			continue
		}
		cells := make([]string, 4)
		for i, f := range Families() {
			cells[i] = "-"
			for _, cmp := range c.Comparisons {
				if cmp.Family == f && cmp.Primary {
					mark := ""
					if !cmp.Scored {
						mark = " *"
					}
					cells[i] = fmt.Sprintf("%s / %s (%+.0f%%)%s", num(cmp.Predicted), num(cmp.Measured), 100*cmp.Err(), mark)
				}
			}
		}
		over := "-"
		if o := c.Overload; o != nil {
			over = fmt.Sprintf("%s / %s", yesNo(o.Predicted), yesNo(o.Measured))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, cells[0], cells[1], cells[2], cells[3], over)
	}
	tw.Flush()
	fmt.Fprintln(w, "  * not scored: ratio-only rows, latencies of overloaded runs, runs with failed requests")
	r.writeFactorCases(w)
	if len(r.Ratios) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Ratios: predicted / measured (error %)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "kind\tratio\tpredicted\tmeasured\terror")
		for _, x := range r.Ratios {
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%+.1f%%\n", x.Kind, x.Group, x.Predicted, x.Measured, 100*x.Err())
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Cases: mapping, assumptions and approximations")
	for _, c := range r.Cases {
		loc := ""
		if c.File != "" {
			loc = fmt.Sprintf(" (%s:%d)", c.File, c.Line)
		}
		fmt.Fprintf(w, "%s%s\n", c.ID, loc)
		if !c.Expressed {
			fmt.Fprintf(w, "    NOT EXPRESSED (%s): %s\n", c.ReasonClass, c.Reason)
		}
		if c.ModelFrom != "" {
			fmt.Fprintf(w, "    model: %s\n", c.ModelFrom)
		}
		if c.Server != "" {
			fmt.Fprintf(w, "    server: %s\n", c.Server)
		}
		if c.Workload != "" {
			fmt.Fprintf(w, "    workload: %s\n", c.Workload)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(w, "    - %s\n", n)
		}
		if o := c.Overload; o != nil {
			fmt.Fprintf(w, "    overload: predicted %s (%s); measured %s (%s)\n", yesNo(o.Predicted), o.PredictedWhy, yesNo(o.Measured), o.MeasuredWhy)
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// WriteCSV writes one line per comparison (every statistic of every case, the overload calls, the
// ratios) and one per case not expressed, for tools.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"case_id", "source", "scoring", "expressed", "reason_class", "reason", "metric", "predicted", "measured", "err_pct", "primary", "scored"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, c := range r.Cases {
		if !c.Expressed {
			cw.Write([]string{c.ID, c.Source, string(c.Scoring), "false", c.ReasonClass, c.Reason, "", "", "", "", "", ""})
			continue
		}
		for _, cmp := range c.Comparisons {
			cw.Write([]string{c.ID, c.Source, string(c.Scoring), "true", "", "", cmp.Metric, f(cmp.Predicted), f(cmp.Measured),
				f(100 * cmp.Err()), strconv.FormatBool(cmp.Primary), strconv.FormatBool(cmp.Scored)})
		}
		if o := c.Overload; o != nil {
			b := func(x bool) string {
				if x {
					return "1"
				}
				return "0"
			}
			cw.Write([]string{c.ID, c.Source, string(c.Scoring), "true", "", "", "overloaded", b(o.Predicted), b(o.Measured), "", "true", "true"})
		}
	}
	for _, x := range r.Ratios {
		cw.Write([]string{x.Num + " / " + x.Den, "", string(Ratio), "true", "", "", "ratio:" + x.Kind, f(x.Predicted), f(x.Measured), f(100 * x.Err()), "true", "true"})
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the whole report. NaN values are written as null.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// MarshalJSON writes NaN accuracies as null.
func (a Accuracy) MarshalJSON() ([]byte, error) {
	type out struct {
		N         int      `json:"n"`
		MAPE      *float64 `json:"mape_pct"`
		MedianAPE *float64 `json:"median_ape_pct"`
		Bias      *float64 `json:"bias_pct"`
	}
	p := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(out{a.N, p(a.MAPE), p(a.MedianAPE), p(a.Bias)})
}
