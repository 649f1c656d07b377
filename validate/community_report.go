package validate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeFactors writes, for the sources that publish them, the accuracy of the factors scored
// apart (FactFamilies): accepted tokens per verifier step, verifier steps/s, a single prefill's
// prompt tok/s and the KV capacity; and the per-case comparisons of those factors.
func (r *Report) writeFactors(w io.Writer) {
	n := len(Families())
	var rows []SourceSummary
	for _, s := range append(append([]SourceSummary{}, r.Sources...), r.Total) {
		for _, m := range s.Metrics[min(n, len(s.Metrics)):] {
			if m.Accuracy.N > 0 {
				rows = append(rows, s)
				break
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Factors scored apart (acceptance and verifier step rate of speculative decoding, prefill, KV capacity): MAPE / median APE / bias in %, (values)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "source\t"+strings.Join(FactFamilies(), "\t"))
	for _, s := range rows {
		cells := []string{s.Source}
		for _, m := range s.Metrics[n:] {
			cells = append(cells, pctCell(m.Accuracy))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// writeFactorCases lists the per-case comparisons of the factors (after the per-case table).
func (r *Report) writeFactorCases(w io.Writer) {
	any := false
	for _, c := range r.Cases {
		for _, cmp := range c.Comparisons {
			any = any || isFactFamily(cmp.Family)
		}
	}
	if !any {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Per case, factors: predicted / measured (error %)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tmetric\tpredicted / measured")
	for _, c := range r.Cases {
		for _, cmp := range c.Comparisons {
			if !isFactFamily(cmp.Family) {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s / %s (%+.1f%%)\n", c.ID, cmp.Metric, num(cmp.Predicted), num(cmp.Measured), 100*cmp.Err())
		}
	}
	tw.Flush()
}

func isFactFamily(f string) bool {
	for _, x := range FactFamilies() {
		if x == f {
			return true
		}
	}
	return false
}
