package plots

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/servesim/servesim/matrix"
)

// StatusCell is one cell of the status map. A status is empty where the matrix lacks the cell.
type StatusCell struct {
	Context     string
	Concurrency int
	Pred, Meas  matrix.Status
	// Mismatch is true when both matrices have the cell and the statuses differ.
	Mismatch bool
}

// StatusMap is the decode grid: contexts (rows, shortest at the top) by concurrency (columns).
type StatusMap struct {
	Header
	Contexts      []string // rows, top to bottom
	Concurrencies []int    // columns, left to right
	Cells         []StatusCell
	HasMeasured   bool
	Compared      int // cells in both matrices
	Matched       int // of those, equal statuses
}

// Status builds the status map of the decode cells; meas may be nil.
func Status(pred, meas *matrix.Matrix) *StatusMap {
	sm := &StatusMap{HasMeasured: meas != nil}
	concs := unionInts(concurrencies(pred), concurrencies(meas))
	sort.Ints(concs)
	sm.Concurrencies = concs
	cc := NewContextColors(pred, meas)
	sm.Contexts = orderedContexts(cc, pred, meas, matrix.Decode)
	find := func(m *matrix.Matrix, ctx string, c int) matrix.Status {
		if m == nil {
			return ""
		}
		if cell, ok := m.Find(matrix.Key{Phase: matrix.Decode, Context: ctx, Concurrency: c}); ok {
			return cell.Status
		}
		return ""
	}
	for _, ctx := range sm.Contexts {
		for _, c := range concs {
			sc := StatusCell{Context: ctx, Concurrency: c, Pred: find(pred, ctx, c), Meas: find(meas, ctx, c)}
			if sc.Pred != "" && sc.Meas != "" {
				sm.Compared++
				if sc.Pred == sc.Meas {
					sm.Matched++
				} else {
					sc.Mismatch = true
				}
			}
			sm.Cells = append(sm.Cells, sc)
		}
	}
	sm.Header = Header{Name: "status-map", Title: "Decode cell status"}
	if sm.HasMeasured {
		sm.Title = fmt.Sprintf("Decode cell status: predicted vs measured (%d/%d match)", sm.Matched, sm.Compared)
		sm.Caption = "Cell colour: predicted status; symbol: measured status; red outline: the two differ."
	} else {
		sm.Caption = "Cell colour: predicted status."
	}
	return sm
}

// WriteData prints the map as a grid: predicted/measured status initials per cell, "!" on
// mismatches.
func (sm *StatusMap) WriteData(w io.Writer) error {
	ew := &errWriter{w: w}
	writeHeader(ew, "status-map", sm.Header)
	ew.printf("compared %d matched %d\n%-7s", sm.Compared, sm.Matched, "")
	for _, c := range sm.Concurrencies {
		ew.printf(" %-5d", c)
	}
	ew.printf("\n")
	for i, ctx := range sm.Contexts {
		ew.printf("%-7s", ctx)
		for j := range sm.Concurrencies {
			c := sm.Cells[i*len(sm.Concurrencies)+j]
			s := statusInitial(c.Pred) + "/" + statusInitial(c.Meas)
			if c.Mismatch {
				s += "!"
			}
			ew.printf(" %-5s", s)
		}
		ew.printf("\n")
	}
	ew.printf("key: V Valid, Q Requests queued, O Over capacity, E Error, - absent; pred/meas\n")
	return ew.err
}

// statusInitial is the first letter of the status's mark, "-" for none.
func statusInitial(s matrix.Status) string {
	if m := s.Mark(); m != "" {
		return m[:1]
	}
	return "-"
}

// statusGlyph is the symbol for a measured status.
func statusGlyph(s matrix.Status) (draw.GlyphStyle, bool) {
	g := draw.GlyphStyle{Color: black(), Radius: vg.Points(5)}
	switch s {
	case matrix.Valid:
		g.Shape = draw.CircleGlyph{}
		g.Radius = vg.Points(4)
	case matrix.RequestsQueued:
		g.Shape = draw.PyramidGlyph{}
	case matrix.OverCapacity:
		g.Shape = thickCross{}
		g.Radius = vg.Points(4)
	case matrix.Error:
		g.Shape = draw.BoxGlyph{}
		g.Radius = vg.Points(4)
	default:
		return g, false
	}
	return g, true
}

// statusGrid draws the cells: x is the column index, y the row index from the bottom.
type statusGrid struct{ sm *StatusMap }

func (g statusGrid) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(g.sm.Concurrencies)) - 0.5, -0.5, float64(len(g.sm.Contexts)) - 0.5
}

func (g statusGrid) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	nc, nr := len(g.sm.Concurrencies), len(g.sm.Contexts)
	border := draw.LineStyle{Color: white(), Width: vg.Points(2)}
	rect := func(i, j int, inset vg.Length) vg.Rectangle {
		x, y := float64(j), float64(nr-1-i)
		return vg.Rectangle{
			Min: vg.Point{X: trX(x-0.5) + inset, Y: trY(y-0.5) + inset},
			Max: vg.Point{X: trX(x+0.5) - inset, Y: trY(y+0.5) - inset},
		}
	}
	for i := 0; i < nr; i++ {
		for j := 0; j < nc; j++ {
			cell := g.sm.Cells[i*nc+j]
			r := rect(i, j, 0)
			c.SetColor(statusFill(cell.Pred))
			c.Fill(r.Path())
			c.SetLineStyle(border)
			c.Stroke(r.Path())
		}
	}
	for i := 0; i < nr; i++ {
		for j := 0; j < nc; j++ {
			cell := g.sm.Cells[i*nc+j]
			r := rect(i, j, 0)
			if gs, ok := statusGlyph(cell.Meas); ok && g.sm.HasMeasured {
				c.DrawGlyph(gs, vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2})
			}
			if cell.Mismatch {
				c.SetLineStyle(draw.LineStyle{Color: mismatchColor(), Width: vg.Points(2.5)})
				c.Stroke(rect(i, j, vg.Points(2.5)).Path())
			}
		}
	}
}

// Figure draws the map.
func (sm *StatusMap) Figure() *Figure {
	p := newPlot(sm.Title, "concurrency (simultaneous requests)", "context (prompt tokens)")
	p.Add(statusGrid{sm})
	var xt, yt []Tick
	for j, c := range sm.Concurrencies {
		xt = append(xt, Tick{Value: float64(j), Label: strconv.Itoa(c)})
	}
	for i, ctx := range sm.Contexts {
		yt = append(yt, Tick{Value: float64(len(sm.Contexts) - 1 - i), Label: ctx})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = constantTicks(xt), constantTicks(yt)
	p.X.Tick.Length, p.Y.Tick.Length = 0, 0
	p.X.LineStyle.Width, p.Y.LineStyle.Width = 0, 0
	p.X.Padding, p.Y.Padding = vg.Points(2), vg.Points(2)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = statusGrid{sm}.DataRange()

	l := newLegend()
	addHeading(l, "Predicted (colour)")
	statuses := []matrix.Status{matrix.Valid, matrix.RequestsQueued, matrix.OverCapacity, matrix.Error}
	present := func(f func(StatusCell) matrix.Status, s matrix.Status) bool {
		for _, c := range sm.Cells {
			if f(c) == s {
				return true
			}
		}
		return false
	}
	for _, s := range statuses {
		if present(func(c StatusCell) matrix.Status { return c.Pred }, s) {
			l.Add(string(s), boxThumb{fill: statusFill(s), outline: draw.LineStyle{Color: darkGrey(), Width: vg.Points(0.5)}})
		}
	}
	if sm.HasMeasured {
		l.Add("", heading{})
		addHeading(l, "Measured (symbol)")
		for _, s := range statuses {
			if gs, ok := statusGlyph(s); ok && present(func(c StatusCell) matrix.Status { return c.Meas }, s) {
				l.Add(string(s), glyphThumb{gs})
			}
		}
		if sm.Matched < sm.Compared {
			l.Add("", heading{})
			l.Add("status differs", boxThumb{outline: draw.LineStyle{Color: mismatchColor(), Width: vg.Points(2.5)}})
		}
	}
	return &Figure{Header: sm.Header, Panels: []*plot.Plot{p}, Legend: l, Width: 7.5 * vg.Inch, Height: 5 * vg.Inch}
}

// thickCross is an X with strokes as heavy as the other status symbols.
type thickCross struct{}

func (thickCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(1.6)}
	r := sty.Radius
	c.StrokeLine2(ls, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
	c.StrokeLine2(ls, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
}
