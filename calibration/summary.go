package calibration

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/model/param"
)

// WriteSummary prints the human summary of a fit: parameters with uncertainties, errors on
// training and test cells, the worst cells, and parameters stuck on a bound.
func WriteSummary(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "Fitted %d parameters (%d evaluations, %d start(s), %s); loss %.4f\n\n", r.NParameters, r.Evaluations, r.Starts, r.Status, r.Loss)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "parameter\tvalue\t± stderr\tunit\tprior\tbounds\t")
	var atBound []string
	for _, d := range param.Defs() {
		p, ok := r.Parameters[d.Name]
		if !ok {
			continue
		}
		se := p.UncertaintyText()
		mark := ""
		if p.AtBound {
			mark = "  <- at bound"
			atBound = append(atBound, d.Name)
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t%g\t[%g, %g]%s\t\n", d.Name, p.Value, se, d.Unit, p.Prior, p.Lo, p.Hi, mark)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cells\tn\tstatuses\tdecode total MAPE\tper-request MAPE\tprefill MAPE\tTTFT MdAPE\tTBT MAPE\t")
	row := func(name string, e *Errors) {
		fmt.Fprintf(tw, "%s\t%d\t%d/%d\t%s\t%s\t%s\t%s\t%s\t\n", name, e.Cells, e.StatusMatched, e.StatusCells,
			pct(e.DecodeTotalMAPE), pct(e.DecodePerRequestMAPE), pct(e.PrefillMAPE), pct(e.TTFTMdAPE), pct(e.TBTMAPE))
	}
	trainName := "train (all)"
	if r.TrainFilter != "" {
		trainName = "train (" + r.TrainFilter + ")"
	}
	row(trainName, &r.Train)
	if r.Priors != nil {
		row("the same cells, priors", r.Priors)
	}
	if r.Test != nil {
		row("test (the rest)", r.Test)
	}
	if r.Excluded != nil {
		row("excluded ("+strings.Join(r.ExcludeFilters, "; ")+")", r.Excluded)
	}
	for _, s := range r.CV {
		row("cv "+s.Name+" train", &s.Train)
		row("cv "+s.Name+" test", &s.Test)
	}
	tw.Flush()
	if len(r.Worst) > 0 {
		fmt.Fprintln(w, "\nWorst cells:")
		for _, c := range r.Worst {
			fmt.Fprintf(w, "  %-22s %-26s predicted %10.1f measured %10.1f  %5.1f%%\n", c.Cell, c.Metric, c.Predicted, c.Measured, c.APE)
		}
	}
	for _, m := range r.Warnings {
		fmt.Fprintf(w, "\nwarning: %s", m)
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w)
	}
	if len(atBound) > 0 {
		sort.Strings(atBound)
		fmt.Fprintf(w, "\nwarning: parameters at a bound: %s (the model may lack a mechanism, or the bound is too tight)\n", strings.Join(atBound, ", "))
	}
	return nil
}

func pct(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", v)
}
