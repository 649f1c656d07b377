package fleet

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/internal/numfmt"
)

func commas(n int) string { return numfmt.Commas(strconv.Itoa(n)) }

// ms writes a latency in milliseconds for people ("-" when there is none).
func ms(v float64) string {
	if math.IsNaN(v) || v == 0 {
		return "-"
	}
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// routerName is policy p, with its view's refresh interval when it reads one.
func routerName(p Policy, refreshS float64) string {
	if refreshS > 0 && p != RoundRobin && p != Random {
		return fmt.Sprintf("%s (its view refreshed every %s)", p, refreshMs(refreshS))
	}
	return string(p)
}

// refreshMs is a refresh interval for people: as ms() prints latencies, below 0.1 ms in full.
func refreshMs(s float64) string {
	if v := s * 1e3; v < 0.1 {
		return fmt.Sprintf("%g ms", v)
	}
	return ms(s * 1e3)
}

// WriteText prints a fleet run: the fleet, the replicas, the series.
func WriteText(w io.Writer, res *Result, t *Traffic, deployment string) {
	m := res.Fleet
	if len(res.Groups) > 1 {
		fmt.Fprintf(w, "fleet: %d replicas in %d groups, router %s; traffic %s (%s requests over %.1f min)\n",
			len(res.Replicas), len(res.Groups), routerName(res.Policy, res.RefreshS), t.Spec.Name, commas(t.Requests), t.Last.Seconds()/60)
		for i, g := range res.Groups {
			src := ""
			if g.Source != "" {
				src = " (" + g.Source + ")"
			}
			fmt.Fprintf(w, "  g%d  %d x %s%s\n", i, g.Count, g.Deployment, src)
		}
	} else {
		fmt.Fprintf(w, "fleet: %d replicas of %s, router %s; traffic %s (%s requests over %.1f min)\n",
			len(res.Replicas), deployment, routerName(res.Policy, res.RefreshS), t.Spec.Name, commas(t.Requests), t.Last.Seconds()/60)
	}
	fmt.Fprintf(w, "status %s", m.Status)
	if m.Overload != nil {
		fmt.Fprintf(w, ": %s", m.Overload.Short())
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "requests      %s routed, %s completed, %s rejected at the router, %s longer than max_model_len\n",
		commas(int(res.Routed)), commas(m.Completed), commas(int(res.Rejected)), commas(m.Rejected))
	fmt.Fprintf(w, "throughput    %.1f req/s, %.0f output tok/s, %.0f total tok/s\n", m.RequestsPerS, m.OutputTokS, m.TotalTokS)
	fmt.Fprintf(w, "TTFT          p50 %s  p90 %s  p99 %s\n", ms(m.TTFT.P50), ms(m.TTFT.P90), ms(m.TTFT.P99))
	fmt.Fprintf(w, "TPOT          p50 %s  p90 %s  p99 %s\n", ms(m.TPOT.P50), ms(m.TPOT.P90), ms(m.TPOT.P99))
	fmt.Fprintf(w, "prefix cache  %.1f %% hit: %s of %s prompt tokens (vLLM's prefix_cache_hits / _queries)\n",
		100*res.PrefixHitRate, commas(int(res.PrefixHits)), commas(int(res.PrefixQueries)))
	fmt.Fprintf(w, "replicas      peak %d, %.2f replica-hours", res.PeakReplicas, res.ReplicaHours)
	if res.CostPerHour > 0 {
		fmt.Fprintf(w, ", $%.2f/h, $%.3f per million output tokens", res.CostPerHour, res.CostPerMTokens)
	}
	fmt.Fprintln(w)
	if g := m.Goodput; g != nil {
		verdict := "met"
		if !g.Met {
			verdict = "NOT met"
		}
		var parts []string
		for _, c := range g.Checks {
			parts = append(parts, fmt.Sprintf("%s p%g %.4g (limit %.4g)", c.Name, 100*c.Quantile, c.Value, c.Limit))
		}
		fmt.Fprintf(w, "objectives    %s: %s; goodput %.1f %% of requests\n", verdict, strings.Join(parts, ", "), 100*g.Fraction)
	}
	writeGroups(w, res)
	fmt.Fprintf(w, "\nper replica (balance: the busiest got %.2f x the mean)\n", res.BalanceMaxToMean)
	// In a fleet of several groups, a column names each replica's group (g<i>, as above).
	label := map[string]string{}
	for i, g := range res.Groups {
		label[g.Name] = fmt.Sprintf("g%d\t", i)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "replica\t"
	if len(label) > 0 {
		head += "group\t"
	}
	fmt.Fprintln(tw, head+"routed\tbusy\tprefix hit\tTTFT p50\tTTFT p99\tTPOT p50\tserving\t")
	for _, r := range res.Replicas {
		hit := 0.0
		if r.PrefixQueries > 0 {
			hit = float64(r.PrefixHits) / float64(r.PrefixQueries)
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%.0f %%\t%.1f %%\t%s\t%s\t%s\t%.0f-%.0f s\t\n", r.Name, label[r.Group], commas(int(r.Routed)), 100*r.BusyShare, 100*hit,
			ms(r.Metrics.TTFT.P50), ms(r.Metrics.TTFT.P99), ms(r.Metrics.TPOT.P50), r.UpS, r.StopS)
	}
	tw.Flush()
	writeSeries(w, res)
}

// writeGroups prints each group's share of a fleet of several groups.
func writeGroups(w io.Writer, res *Result) {
	if len(res.Groups) < 2 {
		return
	}
	fmt.Fprintln(w, "\nper group")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "group\treplicas\trouted\tcompleted\toutput tok/s\tTTFT p50\tTTFT p99\tTPOT p50\treplica-hours\t$/h a replica\t")
	for i, g := range res.Groups {
		m := g.Metrics
		fmt.Fprintf(tw, "g%d\t%d\t%s\t%s\t%.0f\t%s\t%s\t%s\t%.2f\t%.2f\t\n", i, g.Replicas, commas(int(g.Routed)), commas(m.Completed), m.OutputTokS,
			ms(m.TTFT.P50), ms(m.TTFT.P99), ms(m.TPOT.P50), g.ReplicaHours, g.PricePerHour)
	}
	tw.Flush()
}

// writeSeries prints the run over time, in at most 24 rows.
func writeSeries(w io.Writer, res *Result) {
	if len(res.Series) == 0 {
		return
	}
	k := (len(res.Series) + 23) / 24
	fmt.Fprintf(w, "\nover the run (%.0f s a row)\n", res.SeriesIntervalS*float64(k))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "from\tarrivals/s\treplicas\trouter queue\tengine waiting\tTTFT p50\tTTFT p99\trejected\t")
	for i := 0; i < len(res.Series); i += k {
		var arr, rej, reps, rq, n int
		var wait, p50, p99 float64
		for _, p := range res.Series[i:min(i+k, len(res.Series))] {
			arr += p.Arrivals
			rej += p.Rejected
			reps = max(reps, p.Replicas)
			rq = max(rq, p.RouterQueue)
			wait = math.Max(wait, p.EngineWaiting)
			if p.TTFTn > 0 {
				p50 = math.Max(p50, p.TTFTp50)
				p99 = math.Max(p99, p.TTFTp99)
				n += p.TTFTn
			}
		}
		span := res.SeriesIntervalS * float64(min(k, len(res.Series)-i))
		fmt.Fprintf(tw, "%s\t%.2f\t%d\t%d\t%.1f\t%s\t%s\t%d\t\n", clockS(res.Series[i].TimeS), float64(arr)/span, reps, rq, wait, ms(p50), ms(p99), rej)
	}
	tw.Flush()
	fmt.Fprintln(w, "(per row: the most replicas, the longest router queue, the highest mean engine queue, the worst bucket's TTFT percentiles)")
}

func clockS(s float64) string {
	h := int(s) / 3600
	m := int(s) % 3600 / 60
	sec := int(s) % 60
	return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
}
