package workload

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/internal/numfmt"
)

// WriteJSON writes the metrics as indented JSON (deterministic: fixed field order, no maps).
func WriteJSON(w io.Writer, m *Metrics) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// CSVHeader lists the columns of WriteCSV.
func CSVHeader() []string {
	return []string{"workload", "kind", "seed", "status", "replicas", "requests", "completed", "rejected", "cancelled",
		"duration_s", "input_tokens", "output_tokens", "output_tok_s", "total_tok_s", "req_s",
		"ttft_ms_mean", "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99",
		"tpot_ms_mean", "tpot_ms_p50", "tpot_ms_p90", "tpot_ms_p99",
		"itl_ms_mean", "itl_ms_p50", "itl_ms_p90", "itl_ms_p99",
		"e2e_ms_mean", "e2e_ms_p50", "e2e_ms_p90", "e2e_ms_p99",
		"queue_ms_mean", "queue_ms_p50", "queue_ms_p90", "queue_ms_p99",
		"user_tok_s", "preemptions", "preempted_requests", "kv_usage_mean", "kv_usage_peak",
		"goodput_req_s", "goodput_fraction", "slo_met", "engine_steps", "sim_time_s"}
}

func fnum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func f3(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// CSVRow is one run's row under CSVHeader.
func CSVRow(m *Metrics) []string {
	d := func(x Dist) []string {
		if x.N == 0 {
			return []string{"", "", "", ""}
		}
		return []string{f3(x.Mean), f3(x.P50), f3(x.P90), f3(x.P99)}
	}
	row := []string{m.Workload, string(m.Kind), strconv.FormatUint(m.Seed, 10), m.Status, strconv.Itoa(m.Replicas),
		strconv.Itoa(m.Requests), strconv.Itoa(m.Completed), strconv.Itoa(m.Rejected), strconv.Itoa(m.Cancelled),
		f3(m.DurationS), strconv.FormatInt(m.InputTokens, 10), strconv.FormatInt(m.OutputTokens, 10),
		f3(m.OutputTokS), f3(m.TotalTokS), fnum(round(m.RequestsPerS, 6))}
	row = append(row, d(m.TTFT)...)
	row = append(row, d(m.TPOT)...)
	row = append(row, d(m.ITL)...)
	row = append(row, d(m.E2E)...)
	row = append(row, d(m.Queue)...)
	userTokS := f3(m.UserTokS)
	if m.TPOT.N == 0 {
		userTokS = "" // undefined, as the TPOT columns
	}
	row = append(row, userTokS, strconv.Itoa(m.Preemptions), strconv.Itoa(m.PreemptedRequests),
		fnum(round(m.KV.Mean, 6)), fnum(round(m.KV.Peak, 6)))
	if g := m.Goodput; g != nil {
		row = append(row, fnum(round(g.RequestsPerS, 6)), fnum(round(g.Fraction, 6)), strconv.FormatBool(g.Met))
	} else {
		row = append(row, "", "", "")
	}
	row = append(row, strconv.FormatInt(m.Steps, 10), f3(m.SimTimeS))
	return row
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// WriteCSV writes a header and one row per run.
func WriteCSV(w io.Writer, ms ...*Metrics) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader())
	for _, m := range ms {
		cw.Write(CSVRow(m))
	}
	cw.Flush()
	return cw.Error()
}

// WriteSeriesCSV writes the KV-usage samples: t_s,kv_usage,running,waiting.
func WriteSeriesCSV(w io.Writer, m *Metrics) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"t_s", "kv_usage", "running", "waiting"})
	for _, s := range m.KV.Samples {
		cw.Write([]string{fnum(s.TimeS), fnum(round(s.Usage, 6)), strconv.Itoa(s.Running), strconv.Itoa(s.Waiting)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable prints a human summary.
func WriteTable(w io.Writer, m *Metrics) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	status := ""
	if m.Status != "ok" {
		status = " [" + m.Status + "]"
	}
	rep := ""
	if m.Replicas > 1 {
		rep = fmt.Sprintf(" over %d replicas", m.Replicas)
	}
	p("Requests     %s submitted, %s completed", commas(int64(m.Requests)), commas(int64(m.Completed)))
	if m.Rejected > 0 {
		p(", %s rejected (longer than max_model_len)", commas(int64(m.Rejected)))
	}
	if m.Cancelled > 0 {
		p(", %d cut at the window's end", m.Cancelled)
	}
	p("%s%s\n", rep, status)
	if o := m.Overload; o != nil {
		p("Overloaded   %s\n", o.Message)
	}
	if m.Status == "Over capacity" {
		p("The benchmark does not run this cell: concurrency x (context + max output) exceeds the KV cache.\n")
		return nil
	}
	span := "duration"
	if m.Kind == KindLLMBenchCell {
		span = "window"
	}
	p("Throughput   output %s tok/s, total %s tok/s, %.3g req/s (%s %.1f s)\n", fmtRate(m.OutputTokS), fmtRate(m.TotalTokS), m.RequestsPerS, span, m.DurationS)
	if m.TPOT.N == 0 {
		p("Per user     n/a (TPOT needs requests with more than one output token)\n")
	} else {
		p("Per user     %.1f tok/s (1000 / median TPOT)\n", m.UserTokS)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "latency ms\tn\tmean\tp50\tp90\tp99\tmax\t")
	row := func(name string, d Dist) {
		if d.N == 0 {
			fmt.Fprintf(tw, "%s\t0\tn/a\tn/a\tn/a\tn/a\tn/a\t\n", name)
			return
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, commas(int64(d.N)), ms(d.Mean), ms(d.P50), ms(d.P90), ms(d.P99), ms(d.Max))
	}
	row("TTFT", m.TTFT)
	row("TPOT", m.TPOT)
	row("ITL", m.ITL)
	row("E2E", m.E2E)
	row("queue", m.Queue)
	tw.Flush()
	for _, d := range []Dist{m.TTFT, m.TPOT, m.E2E, m.Queue} {
		if d.RelErr > 0 {
			p("             quantiles past %s requests from a histogram, within %.2g %% (ITL: within 0.4 %%)\n", commas(int64(exactLimit)), 100*d.RelErr)
			break
		}
	}
	p("Preemptions  %d (%d requests)\n", m.Preemptions, m.PreemptedRequests)
	p("KV cache     mean %.1f%%, peak %.1f%% of blocks in use (sampled every %g s)\n", 100*m.KV.Mean, 100*m.KV.Peak, m.KV.IntervalS)
	if len(m.KV.Samples) > 1 {
		first, last := m.KV.Samples[0].TimeS, m.KV.Samples[len(m.KV.Samples)-1].TimeS
		p("             %s  %.0f..%.0f s\n", sparkline(m.KV.Samples, 60), first, last)
	}
	if g := m.Goodput; g != nil {
		verdict := "met"
		if !g.Met {
			verdict = "MISSED"
		}
		p("SLO          %s (p%g):", verdict, 100*m.SLO.Q())
		for _, c := range g.Checks {
			p("\n  %s", c.Text())
		}
		if !g.Met && m.Overload != nil {
			p("\n  %s; binds: %s", m.Overload.Short(), m.Overload.Binds)
		}
		p("\nGoodput      %.3g req/s, %s output tok/s (%.1f%% of requests meet every objective)\n", g.RequestsPerS, fmtRate(g.OutputTokS), 100*g.Fraction)
	}
	p("Engine       %s steps, %.1f s simulated\n", commas(m.Steps), m.SimTimeS)
	return nil
}

func ms(v float64) string {
	switch {
	case v >= 100:
		return commas(int64(math.Round(v)))
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func fmtRate(v float64) string {
	if v >= 1000 {
		return commas(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func commas(n int64) string { return numfmt.Commas(strconv.FormatInt(n, 10)) }

// sparkline draws KV usage over time in at most width characters (bucket means).
func sparkline(s []KVSample, width int) string {
	bars := []rune(" ▁▂▃▄▅▆▇█")
	n := min(width, len(s))
	var b strings.Builder
	for i := 0; i < n; i++ {
		lo, hi := i*len(s)/n, (i+1)*len(s)/n
		var sum float64
		for _, x := range s[lo:hi] {
			sum += x.Usage
		}
		u := sum / float64(hi-lo)
		k := int(math.Round(u * float64(len(bars)-1)))
		k = min(max(k, 0), len(bars)-1)
		b.WriteRune(bars[k])
	}
	return b.String()
}
