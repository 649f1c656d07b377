package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func textStyle(size float64, c color.Color) text.Style {
	return text.Style{Color: c, Font: sansFont(size), Handler: plot.DefaultTextHandler}
}

// xy is a point in data coordinates.
type xy struct{ X, Y float64 }

// pointLabels writes a text next to each of its points, choosing for each the first of several
// positions around the point that overlaps neither an earlier label nor any obstacle point; a
// label with no free position is left out and counted in Omitted. Labels are placed in order, so
// the most important come first.
type pointLabels struct {
	Points    []xy
	Texts     []string
	Colors    []color.Color
	Obstacles []xy      // other markers to keep clear of
	Radius    vg.Length // marker radius to keep clear of
	Size      float64   // text size, points
	Omitted   int       // set by Plot
}

func (l *pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var taken []vg.Rectangle
	r := l.Radius
	for _, o := range l.Obstacles {
		pt := vg.Point{X: trX(o.X), Y: trY(o.Y)}
		taken = append(taken, vg.Rectangle{Min: vg.Point{X: pt.X - r, Y: pt.Y - r}, Max: vg.Point{X: pt.X + r, Y: pt.Y + r}})
	}
	l.Omitted = 0
	gap := r + vg.Points(1.5)
	for i, pnt := range l.Points {
		sty := textStyle(l.Size, l.Colors[i])
		size := sty.Rectangle(l.Texts[i]).Size()
		pt := vg.Point{X: trX(pnt.X), Y: trY(pnt.Y)}
		placed := false
		for _, step := range []vg.Length{1, 2.2, 3.6} {
			g := gap * step
			// Candidate lower-left corners: right, left, above, below, then the diagonals.
			cands := []vg.Point{
				{X: pt.X + g, Y: pt.Y - size.Y/2},
				{X: pt.X - g - size.X, Y: pt.Y - size.Y/2},
				{X: pt.X - size.X/2, Y: pt.Y + g},
				{X: pt.X - size.X/2, Y: pt.Y - g - size.Y},
				{X: pt.X + g*0.7, Y: pt.Y + g*0.7},
				{X: pt.X + g*0.7, Y: pt.Y - g*0.7 - size.Y},
				{X: pt.X - g*0.7 - size.X, Y: pt.Y + g*0.7},
				{X: pt.X - g*0.7 - size.X, Y: pt.Y - g*0.7 - size.Y},
			}
			for _, min := range cands {
				rect := vg.Rectangle{Min: min, Max: vg.Point{X: min.X + size.X, Y: min.Y + size.Y}}
				if !inside(rect, c.Rectangle) || overlapsAny(rect, taken) {
					continue
				}
				taken = append(taken, rect)
				sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
				c.FillText(sty, min, l.Texts[i])
				if step > 1 {
					leader(c, pt, rect, r)
				}
				placed = true
				break
			}
			if placed {
				break
			}
		}
		if !placed {
			l.Omitted++
		}
	}
}

func inside(r, bounds vg.Rectangle) bool {
	return r.Min.X >= bounds.Min.X && r.Min.Y >= bounds.Min.Y && r.Max.X <= bounds.Max.X && r.Max.Y <= bounds.Max.Y
}

func overlapsAny(r vg.Rectangle, rs []vg.Rectangle) bool {
	for _, o := range rs {
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			return true
		}
	}
	return false
}

// leader draws a thin line from the edge of the marker at pt (radius r) to the nearest point of
// the label's rectangle, so a label set apart still points at its marker.
func leader(c draw.Canvas, pt vg.Point, rect vg.Rectangle, r vg.Length) {
	clamp := func(v, lo, hi vg.Length) vg.Length { return max(lo, min(v, hi)) }
	to := vg.Point{X: clamp(pt.X, rect.Min.X, rect.Max.X), Y: clamp(pt.Y, rect.Min.Y, rect.Max.Y)}
	dx, dy := float64(to.X-pt.X), float64(to.Y-pt.Y)
	d := math.Hypot(dx, dy)
	if d <= float64(r)+1 {
		return
	}
	from := vg.Point{X: pt.X + vg.Length(dx/d)*r, Y: pt.Y + vg.Length(dy/d)*r}
	c.StrokeLine2(draw.LineStyle{Color: darkGrey(), Width: vg.Points(0.5)}, from.X, from.Y, to.X, to.Y)
}
