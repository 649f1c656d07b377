package calibration

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
)

// HeldOutAcceptance is the accuracy a source predicted without its own data must reach, in %:
// output tok/s and TPOT MAPE (a ratio-scored source: its ratios' MAPE) at most Output and TPOT,
// TTFT median APE where the server keeps up at most TTFT, and every overload call right.
type HeldOutAcceptance struct{ Output, TPOT, TTFT float64 }

// DefaultAcceptance is the held-out acceptance fit --cv loso|logo|lofo checks: 20 % on output
// tok/s and TPOT, 30 % on TTFT (TTFT carries the queueing a small step-time error amplifies).
func DefaultAcceptance() HeldOutAcceptance { return HeldOutAcceptance{Output: 20, TPOT: 20, TTFT: 30} }

// Verdict checks a held-out figure against a: "pass", or "FAIL: " and what failed.
func (a HeldOutAcceptance) Verdict(h HeldOut) string {
	var fails []string
	check := func(name string, v float64, n int, lim float64) {
		if n > 0 && !(v <= lim) {
			fails = append(fails, fmt.Sprintf("%s %.0f%% > %.0f%%", name, v, lim))
		}
	}
	check("output", h.OutputMAPE, h.NOutput, a.Output)
	check("TPOT", h.TPOTMAPE, h.NTPOT, a.TPOT)
	check("TTFT", h.TTFTMdAPE, h.NTTFT, a.TTFT)
	check("ratios", h.RatioMAPE, h.NRatio, a.Output)
	if h.OverloadRight < h.OverloadRows {
		fails = append(fails, fmt.Sprintf("overload %d/%d", h.OverloadRight, h.OverloadRows))
	}
	if len(fails) == 0 {
		return "pass"
	}
	return "FAIL: " + strings.Join(fails, ", ")
}

// WriteHeldOut writes held-out figures as a table, one line per fold and source; with accept
// non-nil each line ends with its verdict.
func WriteHeldOut(w io.Writer, hs []HeldOut, accept *HeldOutAcceptance) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "fold\theld-out source\trows\toutput tok/s MAPE\tTPOT MAPE\tTTFT MdAPE (keeps up)\toverload right\tratio MAPE\tinside 80 % interval\t"
	if accept != nil {
		head += "acceptance\t"
	}
	fmt.Fprintln(tw, head)
	f := func(v float64, n int) string {
		if n == 0 || math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf("%.1f%% (%d)", v, n)
	}
	for _, h := range hs {
		ov := "-"
		if h.OverloadRows > 0 {
			ov = fmt.Sprintf("%d/%d", h.OverloadRight, h.OverloadRows)
		}
		cov := "-"
		if h.NInterval > 0 {
			cov = fmt.Sprintf("%.0f%% (%d/%d)", 100*float64(h.Inside)/float64(h.NInterval), h.Inside, h.NInterval)
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t", h.Fold, h.Source, h.Rows, f(h.OutputMAPE, h.NOutput), f(h.TPOTMAPE, h.NTPOT),
			f(h.TTFTMdAPE, h.NTTFT), ov, f(h.RatioMAPE, h.NRatio), cov)
		if accept != nil {
			line += accept.Verdict(h) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	var facts []HeldOut
	for _, h := range hs {
		if len(h.Factors) > 0 {
			facts = append(facts, h)
		}
	}
	if len(facts) == 0 {
		return
	}
	fmt.Fprintln(w, "Factors scored apart (speculative acceptance per verifier step and verifier steps/s; prefill tok/s; KV capacity): MAPE (values)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fold\theld-out source\tfactor\tMAPE\t")
	for _, h := range facts {
		for _, x := range h.Factors {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", h.Fold, h.Source, x.Family, f(x.MAPE, x.N))
		}
	}
	tw.Flush()
}

// WriteEntries writes a multi-source fit's values as a table: level, key, parameter, value with
// its standard error, prior and band, simulations that saw it.
func WriteEntries(w io.Writer, res *MultiResult) {
	fmt.Fprintf(w, "Multi-source fit of %d values over %s: loss %.4f (data %.4f), %d simulations, %s\n\n",
		len(res.Entries), strings.Join(res.Sources, ", "), res.Loss, res.DataLoss, res.Evaluations, res.Status)
	es := append([]EntryEstimate(nil), res.Entries...)
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Level != es[j].Level {
			return es[i].Level < es[j].Level
		}
		return es[i].Key < es[j].Key
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "level\tkey\tparameter\tvalue\t± stderr\tprior\tprior sd from\tsimulations\t")
	for _, e := range es {
		se := "n/a"
		if !e.Seen {
			se = "unseen (prior)"
		} else if e.StdErr >= 0 {
			se = fmt.Sprintf("%.3g", e.StdErr)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%s\t%.4g\t%s\t%d\t\n", e.Level, e.Key, e.Param, e.Value, se, e.Prior, e.Band, e.Jobs)
	}
	tw.Flush()
}

// WriteSourceNotes writes each source's simulations, residuals and notes; the notes of
// simulations shortened to the request cap are counted, not listed.
func WriteSourceNotes(w io.Writer, srcs []*MultiSource) {
	for _, s := range srcs {
		fmt.Fprintf(w, "  source %s: %d simulation(s), %d residuals\n", s.Name, len(s.Jobs), s.NResid)
		shortened := 0
		for _, n := range s.Notes {
			if strings.HasPrefix(n, "shortened ") {
				shortened++
				continue
			}
			fmt.Fprintf(w, "    %s\n", n)
		}
		if shortened > 0 {
			fmt.Fprintf(w, "    %d simulation(s) shortened to at most the request cap (see the JSON report's notes)\n", shortened)
		}
	}
}
