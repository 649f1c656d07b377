package plots

import (
	"fmt"
	"github.com/servesim/servesim/internal/stats"
	"io"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/servesim/servesim/matrix"
)

// LabelAbovePct is the error above which a parity point is labelled with its cell.
const LabelAbovePct = 25

// ParityPoint is one cell that ran in both matrices.
type ParityPoint struct {
	Cell       string
	Context    string
	Color      int
	Meas, Pred float64
	APEPct     float64
	Status     matrix.Status // measured status (queued cells are triangles)
	// Label is the cell name when the error exceeds LabelAbovePct, else empty.
	Label string
}

// ParityChart is predicted against measured for one metric, on log-log axes.
type ParityChart struct {
	Header
	Metric         matrix.Column
	XLabel, YLabel string
	N              int
	MAPEPct        float64
	MdAPEPct       float64
	Min, Max       float64 // both axes
	Bands          []float64
	// Points are in decreasing error, so the largest errors get their labels first.
	Points   []ParityPoint
	Contexts []string
	Colors   []int
}

// Parity builds the parity chart of metric from a comparison.
func Parity(cmp *matrix.Comparison, metric matrix.Column, cc *ContextColors) *ParityChart {
	info := infoOf(metric)
	pc := &ParityChart{
		Metric: metric, Bands: []float64{10, LabelAbovePct},
		XLabel: fmt.Sprintf("measured %s (%s)", info.quantity, info.unit),
		YLabel: fmt.Sprintf("predicted %s (%s)", info.quantity, info.unit),
	}
	var apes []float64
	seenCtx := map[string]bool{}
	for i := range cmp.Pairs {
		pr := &cmp.Pairs[i]
		ape := pr.APEPct[metric]
		if math.IsNaN(ape) {
			continue
		}
		pv, mv := metric.Value(&pr.Pred), metric.Value(&pr.Meas)
		if !(pv > 0) || !(mv > 0) || math.IsInf(pv, 0) || math.IsInf(mv, 0) {
			continue
		}
		apes = append(apes, ape)
		pt := ParityPoint{Cell: cellName(pr.Key), Context: pr.Key.Context, Color: cc.Index(pr.Key.Context),
			Meas: mv, Pred: pv, APEPct: ape, Status: pr.Meas.Status}
		if ape > LabelAbovePct {
			pt.Label = pt.Cell
		}
		pc.Points = append(pc.Points, pt)
		seenCtx[pr.Key.Context] = true
	}
	sort.SliceStable(pc.Points, func(i, j int) bool { return pc.Points[i].APEPct > pc.Points[j].APEPct })
	pc.N = len(apes)
	pc.MAPEPct, pc.MdAPEPct = matrix.MAPE(apes), stats.Median(apes)
	pc.Header = Header{
		Name:  "parity-" + info.stem,
		Title: fmt.Sprintf("Parity: %s %s (MAPE %.1f %%, n = %d)", strings.ToLower(info.phase), info.quantity, pc.MAPEPct, pc.N),
		Caption: fmt.Sprintf("Each point is a cell that ran in both matrices: measured on x, predicted on y. "+
			"The diagonal is a perfect prediction; the shaded bands are ±10 %% and ±25 %%. "+
			"Cells outside ±%d %% are labelled. MAPE %.1f %%, median APE %.1f %% over %d cells.",
			LabelAbovePct, pc.MAPEPct, pc.MdAPEPct, pc.N),
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pc.Points {
		lo = math.Min(lo, math.Min(p.Meas, p.Pred))
		hi = math.Max(hi, math.Max(p.Meas, p.Pred))
	}
	if len(pc.Points) > 0 {
		pc.Min, pc.Max = logRange(lo/1.15, hi*1.15)
	}
	for _, l := range cc.Labels() {
		if seenCtx[l] {
			pc.Contexts = append(pc.Contexts, l)
			pc.Colors = append(pc.Colors, cc.Index(l))
		}
	}
	return pc
}

// WriteData prints the chart's data.
func (pc *ParityChart) WriteData(w io.Writer) error {
	ew := &errWriter{w: w}
	writeHeader(ew, "parity", pc.Header)
	ew.printf("x: %s\ny: %s\naxes: log10 %s .. %s, bands ±%v %%\n", pc.XLabel, pc.YLabel, num(pc.Min), num(pc.Max), pc.Bands)
	ew.printf("n %d MAPE %s MdAPE %s\nlegend:", pc.N, num(pc.MAPEPct), num(pc.MdAPEPct))
	for i, c := range pc.Contexts {
		ew.printf(" %s=%d", c, pc.Colors[i])
	}
	ew.printf("\n")
	for _, p := range pc.Points {
		ew.printf("  %-7s meas %-8s pred %-8s APE %-6s %s colour %d", p.Cell, num(p.Meas), num(p.Pred), num(p.APEPct), p.Status, p.Color)
		if p.Label != "" {
			ew.printf(" label %q", p.Label)
		}
		ew.printf("\n")
	}
	return ew.err
}

// Figure draws the chart.
func (pc *ParityChart) Figure() *Figure {
	p := newPlot(pc.Title, pc.XLabel, pc.YLabel)
	m := configureAxis(&p.X, Log10, nil, pc.Min, pc.Max)
	configureAxis(&p.Y, Log10, nil, pc.Min, pc.Max)
	lo, hi := pc.Min, pc.Max
	at := func(x, y float64) xy { return m.xy(x, y, m) }
	bands := append([]float64(nil), pc.Bands...)
	sort.Sort(sort.Reverse(sort.Float64Slice(bands)))
	l := newLegend()
	for i, b := range bands {
		col := band25()
		if i == len(bands)-1 {
			col = band10()
		}
		f := b / 100
		poly, err := plotter.NewPolygon(xys(at(lo, lo*(1-f)), at(hi, hi*(1-f)), at(hi, hi*(1+f)), at(lo, lo*(1+f))))
		if err == nil {
			poly.Color = col
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		l.Add(fmt.Sprintf("±%g %%", b), boxThumb{fill: col})
	}
	p.Add(gridLines{vertical: true})
	diag := draw.LineStyle{Color: black(), Width: vg.Points(0.9), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	p.Add(polyline{[]xy{at(lo, lo), at(hi, hi)}, diag})
	l.Add("y = x", lineThumb{diag})
	l.Add("", heading{})

	var marks glyphs
	labels := &pointLabels{Radius: vg.Points(4.4), Size: 8}
	queued := false
	// Draw the smallest errors first so the labelled outliers sit on top.
	for i := len(pc.Points) - 1; i >= 0; i-- {
		pt := pc.Points[i]
		marks.add(at(pt.Meas, pt.Pred), measuredMarker(pt.Color, pt.Status)...)
		queued = queued || pt.Status == matrix.RequestsQueued
		labels.Obstacles = append(labels.Obstacles, at(pt.Meas, pt.Pred))
	}
	for _, pt := range pc.Points {
		if pt.Label != "" {
			labels.Points = append(labels.Points, at(pt.Meas, pt.Pred))
			labels.Texts = append(labels.Texts, pt.Label)
			labels.Colors = append(labels.Colors, black())
		}
	}
	p.Add(&marks, labels)
	p.Add(note{top: true, text: func() string {
		if labels.Omitted > 0 {
			return fmt.Sprintf("%d of %d cells outside ±%d %% not labelled (no room)", labels.Omitted, len(labels.Points), LabelAbovePct)
		}
		return ""
	}})

	// The bands' polygons widened the axes when added: restore the square range.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = m.f(lo), m.f(hi), m.f(lo), m.f(hi)

	addHeading(l, "Context")
	for i, ctx := range pc.Contexts {
		l.Add(ctx, glyphThumbs(measuredMarker(pc.Colors[i], matrix.Valid))...)
	}
	if queued {
		l.Add("", heading{})
		l.Add("measured queued", glyphThumbs(measuredMarker(-1, matrix.RequestsQueued))...)
	}
	return &Figure{Header: pc.Header, Panels: []*plot.Plot{p}, Legend: l, Width: 7 * vg.Inch, Height: 5.6 * vg.Inch}
}

func xys(ps ...xy) plotter.XYs {
	out := make(plotter.XYs, len(ps))
	for i, p := range ps {
		out[i] = plotter.XY{X: p.X, Y: p.Y}
	}
	return out
}
