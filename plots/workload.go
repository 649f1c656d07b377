package plots

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/servesim/servesim/workload"
)

// CDFPanel is one latency's distribution: X[i] is its quantile at q = i / (len(X) - 1).
type CDFPanel struct {
	Metric string // "TTFT", "TPOT", "E2E"
	X      []float64
	// Limit is the objective's limit (0: none) and Quantile the share that must meet it.
	Limit, Quantile float64
	// Measured, when set, is the measured distribution in the same form (a vllm bench result
	// file's per-request values), drawn beside the predicted one.
	Measured []float64
}

// LatencyCDF is a run's latency distributions, one panel per metric (log x axis; X in ms, drawn in
// seconds when the panel's latencies and limit are all 1 s or more).
type LatencyCDF struct {
	Header
	Panels []CDFPanel
}

// TimeSeries is a run's engine state over time: KV-cache use, running and queued requests.
type TimeSeries struct {
	Header
	T                []float64 // s
	KV               []float64 // fraction of blocks in use
	Running, Waiting []float64 // requests
}

// WorkloadCharts is a workload run's figure set: the latency CDFs (with the objectives'
// limits) and the KV cache and queue over time, with subject under their titles. m must come
// from workload.Run.
func WorkloadCharts(m *workload.Metrics, subject string) []Chart {
	var out []Chart
	cdf := &LatencyCDF{Header: Header{Name: "latency-cdf", Title: "Latency distributions",
		Caption: "The share of requests (y) with at most a latency (x, log scale): time to first token, time per output token, end to end. A dashed line marks an objective's limit and a dotted line its quantile."}}
	var slo workload.SLO
	if m.SLO != nil {
		slo = *m.SLO
	}
	for _, d := range []struct {
		name  string
		dist  workload.Dist
		limit float64
	}{{"TTFT", m.TTFT, slo.TTFTms}, {"TPOT", m.TPOT, slo.TPOTms}, {"E2E", m.E2E, slo.E2Ems}} {
		if d.dist.N == 0 || len(d.dist.Curve) < 2 {
			continue
		}
		cdf.Panels = append(cdf.Panels, CDFPanel{Metric: d.name, X: d.dist.Curve, Limit: d.limit, Quantile: slo.Q()})
	}
	if len(cdf.Panels) > 0 {
		out = append(out, cdf)
	}
	if len(m.KV.Samples) > 1 {
		ts := &TimeSeries{Header: Header{Name: "kv-queue", Title: "KV cache and queue over time",
			Caption: fmt.Sprintf("Left: the share of KV-cache blocks that requests hold, sampled every %g s of simulated time. Right: requests running in the engine and waiting for admission.", m.KV.IntervalS)}}
		for _, s := range m.KV.Samples {
			ts.T = append(ts.T, s.TimeS)
			ts.KV = append(ts.KV, s.Usage)
			ts.Running = append(ts.Running, float64(s.Running))
			ts.Waiting = append(ts.Waiting, float64(s.Waiting))
		}
		out = append(out, ts)
	}
	return withSubject(out, subject)
}

// MeasuredRunCharts is a simulated run against a vllm bench result file's measurement: the
// latency distributions predicted and measured (meas: the file's per-request distributions),
// TTFT and TPOT in one figure (measured-ttft-tpot), the inter-token gaps and end to end in another
// (measured-itl-e2e); a panel is drawn where both sides have values.
func MeasuredRunCharts(m *workload.Metrics, measTTFT, measTPOT, measITL, measE2E workload.Dist, subject string) []Chart {
	type side struct {
		name       string
		pred, meas workload.Dist
	}
	var out []Chart
	for _, f := range []struct {
		name, title, what string
		sides             []side
	}{
		{"measured-ttft-tpot", "Time to first token and per output token, predicted and measured", "time to first token and time per output token",
			[]side{{"TTFT", m.TTFT, measTTFT}, {"TPOT", m.TPOT, measTPOT}}},
		{"measured-itl-e2e", "Inter-token gaps and end-to-end latency, predicted and measured", "the gaps between streamed tokens (ITL) and end-to-end latency",
			[]side{{"ITL", m.ITL, measITL}, {"E2E", m.E2E, measE2E}}},
	} {
		cdf := &LatencyCDF{Header: Header{Name: f.name, Title: f.title,
			Caption: "The share of requests (y; of gaps for ITL) with at most a latency (x, log scale), simulated (solid) and measured by vllm bench serve (dashed, the result file's per-request values): " + f.what + "."}}
		for _, d := range f.sides {
			if len(d.pred.Curve) < 2 || len(d.meas.Curve) < 2 {
				continue
			}
			cdf.Panels = append(cdf.Panels, CDFPanel{Metric: d.name, X: d.pred.Curve, Measured: d.meas.Curve})
		}
		if len(cdf.Panels) > 0 {
			out = append(out, cdf)
		}
	}
	return withSubject(out, subject)
}

// WriteData prints the chart's data: each panel's deciles, its limit.
func (c *LatencyCDF) WriteData(w io.Writer) error {
	ew := &errWriter{w: w}
	writeHeader(ew, "latency-cdf", c.Header)
	for _, p := range c.Panels {
		ew.printf("panel %s limit %s at q %s; deciles (ms):", p.Metric, num(p.Limit), num(p.Quantile))
		n := len(p.X) - 1
		for i := 0; i <= 10; i++ {
			ew.printf(" %s", num(p.X[i*n/10]))
		}
		ew.printf("\n")
		if m := len(p.Measured) - 1; m > 0 {
			ew.printf("panel %s measured deciles (ms):", p.Metric)
			for i := 0; i <= 10; i++ {
				ew.printf(" %s", num(p.Measured[i*m/10]))
			}
			ew.printf("\n")
		}
	}
	return ew.err
}

// Figure draws one panel per metric.
func (c *LatencyCDF) Figure() *Figure {
	f := &Figure{Header: c.Header, Heading: c.Title}
	for _, pn := range c.Panels {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range append(append([]float64(nil), pn.X...), pn.Measured...) {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if pn.Limit > 0 {
			lo, hi = math.Min(lo, pn.Limit), math.Max(hi, pn.Limit)
		}
		if math.IsInf(lo, 0) {
			continue
		}
		// Latencies of seconds read in seconds (2, 5, 10 rather than 2,000, 5,000, 10,000).
		unit, scale := "ms", 1.0
		if lo >= 1000 {
			unit, scale = "s", 1e-3
		}
		lo, hi = logRange(lo*scale/1.2, hi*scale*1.2)
		p := newPlot(pn.Metric, pn.Metric+" ("+unit+", log scale)", "")
		p.Title.TextStyle.Font = sansFont(labelSize)
		mx := configureAxis(&p.X, Log10, sparseLogTicks(lo, hi), lo, hi)
		my := configureAxis(&p.Y, Linear, []Tick{{0, "0"}, {0.25, "25 %"}, {0.5, "50 %"}, {0.75, "75 %"}, {0.9, "90 %"}, {1, "100 %"}}, 0, 1.02)
		p.Add(gridLines{vertical: true})
		var pts []xy
		n := len(pn.X) - 1
		for i, v := range pn.X {
			if v > 0 {
				pts = append(pts, mx.xy(v*scale, float64(i)/float64(n), my))
			}
		}
		p.Add(polyline{pts, draw.LineStyle{Color: PaletteColor(0), Width: vg.Points(1.8)}})
		if m := len(pn.Measured) - 1; m > 0 {
			var mpts []xy
			for i, v := range pn.Measured {
				if v > 0 {
					mpts = append(mpts, mx.xy(v*scale, float64(i)/float64(m), my))
				}
			}
			p.Add(polyline{mpts, measuredLine()})
		}
		if pn.Limit > 0 {
			dash := draw.LineStyle{Color: PaletteColor(3), Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			p.Add(polyline{[]xy{mx.xy(pn.Limit*scale, 0, my), mx.xy(pn.Limit*scale, 1.02, my)}, dash})
			dot := draw.LineStyle{Color: darkGrey(), Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
			p.Add(polyline{[]xy{mx.xy(lo, pn.Quantile, my), mx.xy(hi, pn.Quantile, my)}, dot})
		}
		f.Panels = append(f.Panels, p)
	}
	l := newLegend()
	measured, limits := false, false
	for _, pn := range c.Panels {
		measured = measured || len(pn.Measured) > 1
		limits = limits || pn.Limit > 0
	}
	if measured {
		l.Add("predicted", lineThumb{draw.LineStyle{Color: PaletteColor(0), Width: vg.Points(1.8)}})
		l.Add("measured", lineThumb{measuredLine()})
		if !limits {
			f.Legend = l
			return f
		}
	} else {
		l.Add("share of requests", lineThumb{draw.LineStyle{Color: PaletteColor(0), Width: vg.Points(1.8)}})
	}
	l.Add("objective's limit", lineThumb{draw.LineStyle{Color: PaletteColor(3), Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}})
	l.Add("its quantile", lineThumb{draw.LineStyle{Color: darkGrey(), Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}})
	f.Legend = l
	return f
}

// WriteData prints the series.
func (c *TimeSeries) WriteData(w io.Writer) error {
	ew := &errWriter{w: w}
	writeHeader(ew, "time-series", c.Header)
	for i := range c.T {
		ew.printf("  t %-8s kv %-6s running %-5s waiting %s\n", num(c.T[i]), num(c.KV[i]), num(c.Running[i]), num(c.Waiting[i]))
	}
	return ew.err
}

// Figure draws KV use (left) and the running and waiting requests (right) against time.
func (c *TimeSeries) Figure() *Figure {
	f := &Figure{Header: c.Header, Heading: c.Title}
	t0, t1 := c.T[0], c.T[len(c.T)-1]
	kv := newPlot("KV cache in use", "time (s)", "share of blocks")
	kv.Title.TextStyle.Font = sansFont(labelSize)
	mx := configureAxis(&kv.X, Linear, nil, t0, t1)
	my := configureAxis(&kv.Y, Linear, []Tick{{0, "0"}, {0.25, "25 %"}, {0.5, "50 %"}, {0.75, "75 %"}, {1, "100 %"}}, 0, 1.05)
	kv.Add(gridLines{})
	var pts []xy
	for i := range c.T {
		pts = append(pts, mx.xy(c.T[i], c.KV[i], my))
	}
	kv.Add(polyline{pts, draw.LineStyle{Color: PaletteColor(0), Width: vg.Points(1.4)}})
	q := newPlot("Requests", "time (s)", "requests")
	q.Title.TextStyle.Font = sansFont(labelSize)
	hi := 1.0
	for i := range c.T {
		hi = math.Max(hi, math.Max(c.Running[i], c.Waiting[i]))
	}
	mx2 := configureAxis(&q.X, Linear, nil, t0, t1)
	my2 := configureAxis(&q.Y, Linear, nil, 0, hi*1.08)
	q.Add(gridLines{})
	for k, s := range [][]float64{c.Running, c.Waiting} {
		var pts []xy
		for i := range c.T {
			pts = append(pts, mx2.xy(c.T[i], s[i], my2))
		}
		q.Add(polyline{pts, draw.LineStyle{Color: PaletteColor(2 + k), Width: vg.Points(1.4)}})
	}
	f.Panels = []*plot.Plot{kv, q}
	l := newLegend()
	l.Add("KV cache in use", lineThumb{draw.LineStyle{Color: PaletteColor(0), Width: vg.Points(1.4)}})
	l.Add("running", lineThumb{draw.LineStyle{Color: PaletteColor(2), Width: vg.Points(1.4)}})
	l.Add("waiting", lineThumb{draw.LineStyle{Color: PaletteColor(3), Width: vg.Points(1.4)}})
	f.Legend = l
	return f
}

// CostPoint is one configuration in the plan's cost figure.
type CostPoint struct {
	Label string // "1 x H100-SXM TP1"
	GPU   string
	// X is the SLO-feasible output throughput (tok/s of the requests that meet every
	// objective); Y the price, $/h.
	X, Y float64
	Met  bool
	// Color is the palette index of the GPU kind.
	Color int
}

// CostChart is a plan's cost against SLO-feasible throughput, one point per hardware layout's
// best configuration, with the frontier: the cheapest price for at least each throughput.
type CostChart struct {
	Header
	Points   []CostPoint
	Frontier []int // indices into Points, by throughput
	GPUs     []string
}

// NewCostChart builds the chart and its frontier from the points.
func NewCostChart(h Header, pts []CostPoint) *CostChart {
	c := &CostChart{Header: h, Points: pts}
	seen := map[string]bool{}
	for _, p := range pts {
		if !seen[p.GPU] {
			seen[p.GPU] = true
			c.GPUs = append(c.GPUs, p.GPU)
		}
	}
	// The frontier: by throughput descending, a point is on it when it is cheaper than every
	// point with at least its throughput.
	idx := make([]int, 0, len(pts))
	for i, p := range pts {
		if p.X > 0 {
			idx = append(idx, i)
		}
	}
	for a := 1; a < len(idx); a++ {
		for b := a; b > 0 && lessCost(pts[idx[b]], pts[idx[b-1]]); b-- {
			idx[b], idx[b-1] = idx[b-1], idx[b]
		}
	}
	best := math.Inf(1)
	var front []int
	for _, i := range idx {
		if pts[i].Y < best {
			best = pts[i].Y
			front = append(front, i)
		}
	}
	for a, b := 0, len(front)-1; a < b; a, b = a+1, b-1 {
		front[a], front[b] = front[b], front[a]
	}
	c.Frontier = front
	return c
}

// lessCost orders by throughput descending, then price ascending.
func lessCost(a, b CostPoint) bool {
	if a.X != b.X {
		return a.X > b.X
	}
	return a.Y < b.Y
}

// WriteData prints the points and the frontier.
func (c *CostChart) WriteData(w io.Writer) error {
	ew := &errWriter{w: w}
	writeHeader(ew, "cost-chart", c.Header)
	for _, p := range c.Points {
		ew.printf("  %-40s x %-8s y %-6s met %v colour %d\n", p.Label, num(p.X), num(p.Y), p.Met, p.Color)
	}
	ew.printf("frontier:")
	for _, i := range c.Frontier {
		ew.printf(" %q", c.Points[i].Label)
	}
	ew.printf("\n")
	return ew.err
}

// Figure draws price against feasible throughput: filled markers meet every objective, rings
// miss one; the frontier is a step line.
func (c *CostChart) Figure() *Figure {
	p := newPlot(c.Title, "SLO-feasible output throughput (tok/s of requests meeting every objective)", "price ($/h)")
	xhi, yhi := 1.0, 1.0
	for _, pt := range c.Points {
		xhi, yhi = math.Max(xhi, pt.X), math.Max(yhi, pt.Y)
	}
	mx := configureAxis(&p.X, Linear, nil, 0, xhi*1.08)
	my := configureAxis(&p.Y, Linear, nil, 0, yhi*1.1)
	p.Add(gridLines{vertical: true})
	if len(c.Frontier) > 0 {
		var st []xy
		for k, i := range c.Frontier {
			pt := c.Points[i]
			if k > 0 {
				st = append(st, mx.xy(c.Points[c.Frontier[k-1]].X, pt.Y, my))
			}
			st = append(st, mx.xy(pt.X, pt.Y, my))
		}
		p.Add(polyline{st, draw.LineStyle{Color: darkGrey(), Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}})
	}
	var marks glyphs
	for _, pt := range c.Points {
		if pt.Met {
			marks.add(mx.xy(pt.X, pt.Y, my), draw.GlyphStyle{Color: GPUColor(pt.Color), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}},
				draw.GlyphStyle{Color: black(), Radius: vg.Points(3.5), Shape: draw.RingGlyph{}})
		} else {
			marks.add(mx.xy(pt.X, pt.Y, my), draw.GlyphStyle{Color: GPUColor(pt.Color), Radius: vg.Points(3.5), Shape: draw.RingGlyph{}})
		}
	}
	p.Add(&marks)
	l := newLegend()
	addHeading(l, "GPU")
	for _, g := range c.GPUs {
		for _, pt := range c.Points {
			if pt.GPU == g {
				l.Add(g, glyphThumb{draw.GlyphStyle{Color: GPUColor(pt.Color), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}})
				break
			}
		}
	}
	l.Add("", heading{})
	l.Add("meets the objectives", glyphThumb{draw.GlyphStyle{Color: darkGrey(), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}})
	l.Add("misses one", glyphThumb{draw.GlyphStyle{Color: darkGrey(), Radius: vg.Points(3.5), Shape: draw.RingGlyph{}}})
	l.Add("frontier", lineThumb{draw.LineStyle{Color: darkGrey(), Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}})
	return &Figure{Header: c.Header, Panels: []*plot.Plot{p}, Legend: l}
}

// sparseLogTicks labels a log axis for a narrow panel (about 16 characters of labels fit under
// it): ticks at 1, 2 and 5 times the powers of ten, labelled where the labels fit (the powers of
// ten first, then the 5s, then the 2s); nil (the automatic ticks) when fewer than two ticks fall
// in [lo, hi].
func sparseLogTicks(lo, hi float64) []Tick {
	const budget = 16 // characters of labels, a space between two
	var ts []Tick
	for d := math.Pow(10, math.Floor(math.Log10(lo))); d <= hi; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := d * m; v >= lo && v <= hi {
				ts = append(ts, Tick{Value: v})
			}
		}
	}
	if len(ts) < 2 {
		return nil
	}
	width := func(keep func(float64) bool) int {
		n := 0
		for _, t := range ts {
			if keep(t.Value) {
				n += len(tickText(t.Value)) + 1
			}
		}
		return n
	}
	mant := func(v float64) float64 { return math.Round(v / math.Pow(10, math.Floor(math.Log10(v)+1e-9))) }
	keep := func(v float64) bool { return true }
	if width(keep) > budget {
		keep = func(v float64) bool { return mant(v) != 2 }
		if width(keep) > budget {
			keep = func(v float64) bool { return mant(v) == 1 }
		}
	}
	labelled := 0
	for i := range ts {
		if keep(ts[i].Value) {
			ts[i].Label = tickText(ts[i].Value)
			labelled++
		}
	}
	if labelled == 0 {
		return nil
	}
	return ts
}

// measuredLine is the style of a measured distribution beside a predicted one.
func measuredLine() draw.LineStyle {
	return draw.LineStyle{Color: PaletteColor(1), Width: vg.Points(1.4), Dashes: []vg.Length{vg.Points(5), vg.Points(2)}}
}
