package plots

import (
	"fmt"
	"io"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/servesim/servesim/matrix"
)

// Point is one drawn value of a line chart.
type Point struct {
	X, Y   float64
	Cell   string        // the cell's short name, "8K×16"
	Status matrix.Status // queued cells are marked
	Color  int           // palette index of the marker (the cell's context)
	// Break is true when a cell between this point and the previous one on the same line is
	// absent: the line is not joined across the gap.
	Break bool
}

// SeriesKind says how a series is drawn.
type SeriesKind int

const (
	PredictedLine   SeriesKind = iota // a line through small dots
	MeasuredMarkers                   // markers only
)

func (k SeriesKind) String() string {
	if k == MeasuredMarkers {
		return "measured"
	}
	return "predicted"
}

// Series is one line (predicted) or marker set (measured).
type Series struct {
	Label  string // context label for per-context series, else "predicted"/"measured"
	Kind   SeriesKind
	Color  int // palette index of the line; -1 for neutral grey
	Points []Point
}

// LineChart is a metric against concurrency (decode) or context (prefill).
type LineChart struct {
	Header
	Metric         matrix.Column
	XLabel, YLabel string
	XScale, YScale Scale
	XTicks         []Tick // labelled x positions (nil: automatic)
	XMin, XMax     float64
	YMin, YMax     float64
	// ByContext is true when each context has its own series (decode charts); prefill charts
	// have one predicted and one measured series whose points are coloured by context.
	ByContext bool
	Series    []Series
	Contexts  []string // legend: context labels with their palette index in ContextColors
	Colors    []int
}

// Decode builds the chart of a decode metric against concurrency: one predicted line and one
// measured marker set per context, in context colour. Cells that did not run (Over capacity,
// Error) are absent; queued cells keep their status so they are marked. meas may be nil.
func Decode(pred, meas *matrix.Matrix, metric matrix.Column, cc *ContextColors) *LineChart {
	info := infoOf(metric)
	lc := &LineChart{
		Header: Header{
			Name:  info.stem,
			Title: info.phase + " " + info.quantity + " vs concurrency",
			Caption: "Lines: predicted; markers: measured, in the colour of the context. " +
				"Triangles are measured cells where requests queued, open squares predicted ones. " +
				"Over-capacity cells are not drawn.",
		},
		Metric: metric, XScale: Log2, YScale: info.scale, ByContext: true,
		XLabel: "concurrency (simultaneous requests, log2 scale)",
		YLabel: fmt.Sprintf("%s (%s)", info.axis, info.unit),
	}
	if meas == nil {
		lc.Caption = "Predicted, one line per context. Open squares mark predicted cells where requests queued. Over-capacity cells are not drawn."
	}
	concs := unionInts(concurrencies(pred), concurrencies(meas))
	sort.Ints(concs)
	for _, c := range concs {
		lc.XTicks = append(lc.XTicks, Tick{Value: float64(c), Label: fmt.Sprint(c)})
	}
	for _, ctx := range orderedContexts(cc, pred, meas, matrix.Decode) {
		col := cc.Index(ctx)
		for _, side := range []struct {
			m    *matrix.Matrix
			kind SeriesKind
		}{{pred, PredictedLine}, {meas, MeasuredMarkers}} {
			if side.m == nil {
				continue
			}
			s := Series{Label: ctx, Kind: side.kind, Color: col}
			gap := false
			for _, conc := range concs {
				cell, ok := side.m.Find(matrix.Key{Phase: matrix.Decode, Context: ctx, Concurrency: conc})
				v := math.NaN()
				if ok && cell.Status.Ran() {
					v = metric.Value(cell)
				}
				if !usable(v, info.scale) {
					gap = true
					continue
				}
				s.Points = append(s.Points, Point{X: float64(conc), Y: v, Cell: cellName(cell.Key()), Status: cell.Status,
					Color: col, Break: gap && len(s.Points) > 0})
				gap = false
			}
			if len(s.Points) > 0 {
				lc.Series = append(lc.Series, s)
			}
		}
		lc.Contexts = append(lc.Contexts, ctx)
		lc.Colors = append(lc.Colors, col)
	}
	if len(concs) > 0 {
		lc.XMin, lc.XMax = float64(concs[0])/1.3, float64(concs[len(concs)-1])*1.3
	}
	lc.YMin, lc.YMax = valueRange(lc.Series, info.scale)
	return lc
}

// Prefill builds the chart of a prefill metric against context (log axis): the predicted rows as
// one line, the measured rows as markers, each point in its context's colour. meas may be nil.
func Prefill(pred, meas *matrix.Matrix, metric matrix.Column, cc *ContextColors) *LineChart {
	info := infoOf(metric)
	lc := &LineChart{
		Header: Header{
			Name:    info.stem,
			Title:   info.phase + " " + info.quantity + " vs context",
			Caption: "One cold request per context (the prefill rows). Line: predicted; markers: measured, in the colour of the context.",
		},
		Metric: metric, XScale: Log2, YScale: info.scale,
		XLabel: "context (prompt tokens, log scale)",
		YLabel: fmt.Sprintf("%s (%s)", info.axis, info.unit),
	}
	if meas == nil {
		lc.Caption = "Predicted, one cold request per context (the prefill rows)."
	}
	minT, maxT := math.Inf(1), math.Inf(-1)
	for _, side := range []struct {
		m    *matrix.Matrix
		kind SeriesKind
	}{{pred, PredictedLine}, {meas, MeasuredMarkers}} {
		if side.m == nil {
			continue
		}
		cells := append([]matrix.Cell(nil), side.m.Prefill...)
		sort.SliceStable(cells, func(i, j int) bool { return cells[i].ContextTokens < cells[j].ContextTokens })
		s := Series{Label: side.kind.String(), Kind: side.kind, Color: -1}
		gap := false
		for i := range cells {
			c := &cells[i]
			v := math.NaN()
			if c.Status.Ran() {
				v = metric.Value(c)
			}
			if !usable(v, info.scale) || c.ContextTokens <= 0 {
				gap = true
				continue
			}
			minT, maxT = math.Min(minT, float64(c.ContextTokens)), math.Max(maxT, float64(c.ContextTokens))
			s.Points = append(s.Points, Point{X: float64(c.ContextTokens), Y: v, Cell: cellName(c.Key()), Status: c.Status,
				Color: cc.Index(c.Context), Break: gap && len(s.Points) > 0})
			gap = false
		}
		if len(s.Points) > 0 {
			lc.Series = append(lc.Series, s)
		}
	}
	for _, ctx := range orderedContexts(cc, pred, meas, matrix.Prefill) {
		lc.Contexts = append(lc.Contexts, ctx)
		lc.Colors = append(lc.Colors, cc.Index(ctx))
	}
	if len(lc.Series) > 0 {
		lc.XMin, lc.XMax = minT/1.25, maxT*1.25
		lc.XTicks = pow2TokenTicks(lc.XMin, lc.XMax)
	}
	lc.YMin, lc.YMax = valueRange(lc.Series, info.scale)
	return lc
}

// usable reports whether v can be drawn on an axis of scale s.
func usable(v float64, s Scale) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	return s == Linear || v > 0
}

// valueRange is the y range for the series: from zero with 8 % headroom on linear axes, whole
// 1-2-5 steps around the data on log axes.
func valueRange(series []Series, s Scale) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, se := range series {
		for _, p := range se.Points {
			lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
		}
	}
	if math.IsInf(lo, 0) {
		return 0, 1
	}
	if s == Linear {
		return math.Min(0, lo), hi * 1.08
	}
	return logRange(lo/1.1, hi*1.1)
}

// pow2TokenTicks labels powers of two (in KiB of tokens: "8K", "1024K") within [lo, hi].
func pow2TokenTicks(lo, hi float64) []Tick {
	var ts []Tick
	for v := 1024.0; v <= hi; v *= 2 {
		if v >= lo {
			ts = append(ts, Tick{Value: v, Label: matrix.Label(int(v))})
		}
	}
	return ts
}

func concurrencies(m *matrix.Matrix) []int {
	if m == nil {
		return nil
	}
	return m.Concurrencies()
}

func unionInts(a, b []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, x := range append(append([]int(nil), a...), b...) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// orderedContexts lists the contexts of phase present in pred or meas, in colour order.
func orderedContexts(cc *ContextColors, pred, meas *matrix.Matrix, phase matrix.Phase) []string {
	present := map[string]bool{}
	for _, m := range []*matrix.Matrix{pred, meas} {
		if m == nil {
			continue
		}
		cells := m.Decode
		if phase == matrix.Prefill {
			cells = m.Prefill
		}
		for _, c := range cells {
			present[c.Context] = true
		}
	}
	var out []string
	for _, l := range cc.Labels() {
		if present[l] {
			out = append(out, l)
		}
	}
	return out
}

// WriteData prints the chart's data.
func (lc *LineChart) WriteData(w io.Writer) error {
	ew := &errWriter{w: w}
	writeHeader(ew, "line-chart", lc.Header)
	ew.printf("x: %s [%s] %s .. %s ticks", lc.XLabel, lc.XScale, num(lc.XMin), num(lc.XMax))
	for _, t := range lc.XTicks {
		ew.printf(" %s", t.Label)
	}
	ew.printf("\ny: %s [%s] %s .. %s\n", lc.YLabel, lc.YScale, num(lc.YMin), num(lc.YMax))
	ew.printf("legend:")
	for i, c := range lc.Contexts {
		ew.printf(" %s=%d", c, lc.Colors[i])
	}
	ew.printf("\n")
	for _, s := range lc.Series {
		ew.printf("series %q %s colour %d\n", s.Label, s.Kind, s.Color)
		for _, p := range s.Points {
			ew.printf("  %-7s x %-8s y %-8s %s colour %d", p.Cell, num(p.X), num(p.Y), p.Status, p.Color)
			if p.Break {
				ew.printf(" break")
			}
			ew.printf("\n")
		}
	}
	return ew.err
}

// Marker styles shared by the line charts and the parity plots.
func predictedDot(col int) draw.GlyphStyle {
	return draw.GlyphStyle{Color: PaletteColor(col), Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
}

func queuedRing(col int) draw.GlyphStyle {
	return draw.GlyphStyle{Color: PaletteColor(col), Radius: vg.Points(5), Shape: draw.SquareGlyph{}}
}

// measuredMarker is a filled circle (valid) or triangle (queued) with a dark outline.
func measuredMarker(col int, s matrix.Status) []draw.GlyphStyle {
	r := vg.Points(3.6)
	fill, outline := draw.GlyphDrawer(draw.CircleGlyph{}), draw.GlyphDrawer(draw.RingGlyph{})
	if s == matrix.RequestsQueued {
		r = vg.Points(4.4)
		fill, outline = draw.PyramidGlyph{}, draw.TriangleGlyph{}
	}
	return []draw.GlyphStyle{
		{Color: PaletteColor(col), Radius: r, Shape: fill},
		{Color: black(), Radius: r, Shape: outline},
	}
}

// glyphs draws one glyph per point (a Plotter without data range).
type glyphs struct {
	pts    []xy
	styles [][]draw.GlyphStyle
}

func (g *glyphs) add(p xy, s ...draw.GlyphStyle) {
	g.pts = append(g.pts, p)
	g.styles = append(g.styles, s)
}

func (g *glyphs) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, pt := range g.pts {
		for _, s := range g.styles[i] {
			c.DrawGlyph(s, vg.Point{X: trX(pt.X), Y: trY(pt.Y)})
		}
	}
}

// polyline draws a line through points (a Plotter without data range).
type polyline struct {
	pts []xy
	draw.LineStyle
}

func (l polyline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ps := make([]vg.Point, len(l.pts))
	for i, pt := range l.pts {
		ps[i] = vg.Point{X: trX(pt.X), Y: trY(pt.Y)}
	}
	c.StrokeLines(l.LineStyle, c.ClipLinesXY(ps)...)
}

// Figure draws the chart.
func (lc *LineChart) Figure() *Figure {
	if lc.ByContext && len(lc.Contexts) > smallMultiplesFrom {
		return lc.smallMultiples()
	}
	p := newPlot(lc.Title, lc.XLabel, lc.YLabel)
	mx := configureAxis(&p.X, lc.XScale, lc.XTicks, lc.XMin, lc.XMax)
	my := configureAxis(&p.Y, lc.YScale, nil, lc.YMin, lc.YMax)
	p.Add(gridLines{vertical: true})
	var marks glyphs
	queued := map[SeriesKind]bool{}
	hasMeas := false
	for _, s := range lc.Series {
		if s.Kind == PredictedLine {
			ls := draw.LineStyle{Color: PaletteColor(s.Color), Width: vg.Points(1.6)}
			var seg []xy
			for _, pt := range s.Points {
				if pt.Break && len(seg) > 0 {
					p.Add(polyline{seg, ls})
					seg = nil
				}
				seg = append(seg, mx.xy(pt.X, pt.Y, my))
			}
			p.Add(polyline{seg, ls})
		}
	}
	// Markers after every line, measured last, so lines never hide a marker.
	for _, kind := range []SeriesKind{PredictedLine, MeasuredMarkers} {
		for _, s := range lc.Series {
			if s.Kind != kind {
				continue
			}
			for _, pt := range s.Points {
				q := pt.Status == matrix.RequestsQueued
				queued[kind] = queued[kind] || q
				if kind == PredictedLine {
					if q {
						marks.add(mx.xy(pt.X, pt.Y, my), predictedDot(pt.Color), queuedRing(pt.Color))
					} else {
						marks.add(mx.xy(pt.X, pt.Y, my), predictedDot(pt.Color))
					}
					continue
				}
				hasMeas = true
				marks.add(mx.xy(pt.X, pt.Y, my), measuredMarker(pt.Color, pt.Status)...)
			}
		}
	}
	p.Add(&marks)

	l := newLegend()
	if lc.ByContext {
		addHeading(l, "Context")
		for i, ctx := range lc.Contexts {
			col := lc.Colors[i]
			l.Add(ctx, lineThumb{draw.LineStyle{Color: PaletteColor(col), Width: vg.Points(1.6)}}, glyphThumb{predictedDot(col)})
		}
		l.Add("", heading{})
		addHeading(l, "Marks")
		l.Add("predicted", lineThumb{draw.LineStyle{Color: darkGrey(), Width: vg.Points(1.6)}}, glyphThumb{predictedDot(-1)})
	} else {
		l.Add("predicted", lineThumb{draw.LineStyle{Color: darkGrey(), Width: vg.Points(1.6)}}, glyphThumb{predictedDot(-1)})
	}
	if hasMeas {
		l.Add("measured", glyphThumbs(measuredMarker(-1, matrix.Valid))...)
	}
	if queued[MeasuredMarkers] {
		l.Add("measured, queued", glyphThumbs(measuredMarker(-1, matrix.RequestsQueued))...)
	}
	if queued[PredictedLine] {
		l.Add("predicted, queued", glyphThumb{predictedDot(-1)}, glyphThumb{queuedRing(-1)})
	}
	if !lc.ByContext {
		l.Add("", heading{})
		addHeading(l, "Context (colour)")
		for i, ctx := range lc.Contexts {
			l.Add(ctx, glyphThumbs(measuredMarker(lc.Colors[i], matrix.Valid))...)
		}
	}
	return &Figure{Header: lc.Header, Panels: []*plot.Plot{p}, Legend: l}
}

func glyphThumbs(gs []draw.GlyphStyle) []plot.Thumbnailer {
	out := make([]plot.Thumbnailer, len(gs))
	for i, g := range gs {
		out[i] = glyphThumb{g}
	}
	return out
}

// smallMultiplesFrom: a decode chart with more contexts than this draws one panel per context,
// since lines of nearby contexts lie on one another.
const smallMultiplesFrom = 4

// smallMultiples draws a decode chart as one panel per context (two rows, shared axes): the
// predicted line and the measured markers of that context in its colour, the other contexts'
// predicted lines in light grey behind them for comparison.
func (lc *LineChart) smallMultiples() *Figure {
	n := len(lc.Contexts)
	rows := 2
	cols := (n + rows - 1) / rows
	_ = cols
	f := &Figure{Header: lc.Header, Rows: rows, Heading: lc.Title + ": " + lc.YLabel, Width: 10 * vg.Inch, Height: 5.6 * vg.Inch}
	// Every other concurrency is labelled: eight labels do not fit a small panel.
	var ticks []Tick
	for i, t := range lc.XTicks {
		if i%2 == 1 {
			t.Label = ""
		}
		ticks = append(ticks, t)
	}
	queued := map[SeriesKind]bool{}
	hasMeas := false
	for _, ctx := range lc.Contexts {
		p := newPlot(ctx, "", "")
		p.Title.Padding = vg.Points(3)
		p.Title.TextStyle.Font = sansFont(labelSize)
		mx := configureAxis(&p.X, lc.XScale, ticks, lc.XMin, lc.XMax)
		my := configureAxis(&p.Y, lc.YScale, nil, lc.YMin, lc.YMax)
		p.X.Tick.Label.Font = sansFont(tickSize - 1.5)
		p.Y.Tick.Label.Font = sansFont(tickSize - 1.5)
		p.Y.Label.TextStyle.Font = sansFont(labelSize - 1.5)
		p.X.Label.TextStyle.Font = sansFont(labelSize - 1.5)
		p.Add(gridLines{vertical: true})
		line := func(s Series, ls draw.LineStyle) {
			var seg []xy
			for _, pt := range s.Points {
				if pt.Break && len(seg) > 0 {
					p.Add(polyline{seg, ls})
					seg = nil
				}
				seg = append(seg, mx.xy(pt.X, pt.Y, my))
			}
			p.Add(polyline{seg, ls})
		}
		for _, s := range lc.Series {
			if s.Kind == PredictedLine && s.Label != ctx {
				line(s, draw.LineStyle{Color: lightGrey(), Width: vg.Points(0.8)})
			}
		}
		var marks glyphs
		for _, kind := range []SeriesKind{PredictedLine, MeasuredMarkers} {
			for _, s := range lc.Series {
				if s.Kind != kind || s.Label != ctx {
					continue
				}
				if kind == PredictedLine {
					line(s, draw.LineStyle{Color: PaletteColor(s.Color), Width: vg.Points(1.6)})
				}
				for _, pt := range s.Points {
					q := pt.Status == matrix.RequestsQueued
					queued[kind] = queued[kind] || q
					switch {
					case kind == PredictedLine && q:
						marks.add(mx.xy(pt.X, pt.Y, my), predictedDot(pt.Color), queuedRing(pt.Color))
					case kind == PredictedLine:
						marks.add(mx.xy(pt.X, pt.Y, my), predictedDot(pt.Color))
					default:
						hasMeas = true
						marks.add(mx.xy(pt.X, pt.Y, my), measuredMarker(pt.Color, pt.Status)...)
					}
				}
			}
		}
		p.Add(&marks)
		f.Panels = append(f.Panels, p)
	}
	l := newLegend()
	addHeading(l, "Marks")
	l.Add("predicted", lineThumb{draw.LineStyle{Color: darkGrey(), Width: vg.Points(1.6)}}, glyphThumb{predictedDot(-1)})
	if hasMeas {
		l.Add("measured", glyphThumbs(measuredMarker(-1, matrix.Valid))...)
	}
	if queued[MeasuredMarkers] {
		l.Add("measured, queued", glyphThumbs(measuredMarker(-1, matrix.RequestsQueued))...)
	}
	if queued[PredictedLine] {
		l.Add("predicted, queued", glyphThumb{predictedDot(-1)}, glyphThumb{queuedRing(-1)})
	}
	l.Add("other contexts", lineThumb{draw.LineStyle{Color: lightGrey(), Width: vg.Points(0.8)}})
	l.Add("", heading{})
	addHeading(l, "One panel per context;")
	addHeading(l, "x: concurrency (log2)")
	f.Legend = l
	return f
}
