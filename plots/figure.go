package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// DPI is the resolution of PNG figures.
const DPI = 300

// Default figure size: wide enough for the plot and a legend on its right.
const (
	DefaultWidth  = 8 * vg.Inch
	DefaultHeight = 4.5 * vg.Inch
)

// Figure is a drawn chart: one or more panels side by side, and a legend outside them on the
// right, so it never covers data.
type Figure struct {
	Header
	// Panels are drawn left to right with equal widths, in Rows rows (0 or 1: one row).
	Panels []*plot.Plot
	Rows   int
	// Heading, when set, is drawn centred above the panels (a figure of several panels: the
	// chart's title and subject; a single panel carries them in its own title).
	Heading string
	// Legend is drawn to the right of the panels, top-aligned; nil for none.
	Legend *plot.Legend
	// Width and Height are the figure's size (DefaultWidth x DefaultHeight when zero).
	Width, Height vg.Length
}

func (f *Figure) size() (w, h vg.Length) {
	w, h = f.Width, f.Height
	if w <= 0 {
		w = DefaultWidth
	}
	if h <= 0 {
		h = DefaultHeight
	}
	return w, h
}

// Draw draws the figure on c.
func (f *Figure) Draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	pad := vg.Points(8)
	area := draw.Crop(c, pad, -pad, pad, -pad)
	if f.Heading != "" {
		st := textStyle(titleSize, black())
		st.XAlign, st.YAlign = draw.XCenter, draw.YTop
		h := st.Rectangle(f.Heading).Size().Y
		c.FillText(st, vg.Point{X: (area.Min.X + area.Max.X) / 2, Y: area.Max.Y}, f.Heading)
		area.Max.Y -= h + vg.Points(8)
	}
	if f.Legend != nil {
		lw := f.Legend.Rectangle(area).Size().X
		legendArea := area
		legendArea.Min.X = area.Max.X - lw
		// Align the legend's top with the top of the data area (below a panel title).
		if len(f.Panels) > 0 && f.Panels[0].Title.Text != "" {
			t := f.Panels[0].Title
			legendArea.Max.Y -= t.TextStyle.Rectangle(t.Text).Size().Y + t.Padding + vg.Points(6)
		}
		f.Legend.Draw(legendArea)
		area.Max.X -= lw + vg.Points(14)
	}
	n := len(f.Panels)
	if n == 0 {
		return
	}
	rows := max(f.Rows, 1)
	cols := (n + rows - 1) / rows
	gap := vg.Points(18)
	w := (area.Size().X - gap*vg.Length(cols-1)) / vg.Length(cols)
	h := (area.Size().Y - gap*vg.Length(rows-1)) / vg.Length(rows)
	for i, p := range f.Panels {
		r, col := i/cols, i%cols
		pc := area
		pc.Min.X = area.Min.X + vg.Length(col)*(w+gap)
		pc.Max.X = pc.Min.X + w
		pc.Max.Y = area.Max.Y - vg.Length(r)*(h+gap)
		pc.Min.Y = pc.Max.Y - h
		p.Draw(pc)
	}
}

// SetSubject puts the subject (the model and GPUs) under the figure's title: in the heading of a
// figure with one, else in its first panel's title.
func (f *Figure) SetSubject(subject string) {
	if subject == "" {
		return
	}
	switch {
	case f.Heading != "":
		f.Heading += "\n" + subject
	case len(f.Panels) > 0:
		f.Panels[0].Title.Text += "\n" + subject
	}
}

// Format is an image format for figures.
type Format string

const (
	PNG Format = "png" // raster, DPI dots per inch
	SVG Format = "svg" // vector, text as text
)

// ParseFormats reads a comma-separated list of formats ("png,svg").
func ParseFormats(s string) ([]Format, error) {
	var out []Format
	seen := map[Format]bool{}
	for _, part := range strings.Split(s, ",") {
		f := Format(strings.ToLower(strings.TrimSpace(part)))
		switch f {
		case PNG, SVG:
		case "":
			continue
		default:
			return nil, fmt.Errorf("format %q: want png or svg", part)
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no format in %q: want png, svg or png,svg", s)
	}
	return out, nil
}

// Encode writes the figure in format: PNG at DPI, or SVG.
func (f *Figure) Encode(w io.Writer, format Format) error {
	return f.EncodeDPI(w, format, DPI)
}

// EncodeDPI is Encode with a chosen PNG resolution (SVG ignores dpi).
func (f *Figure) EncodeDPI(w io.Writer, format Format, dpi int) error {
	width, height := f.size()
	switch format {
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))
		f.Draw(draw.New(c))
		// BestSpeed: half the encoding time of the default level for files ~15 % larger.
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		return enc.Encode(w, c.Image())
	case SVG:
		c := vgsvg.New(width, height)
		f.Draw(draw.New(c))
		_, err := c.WriteTo(w)
		return err
	}
	return fmt.Errorf("figure %s: unknown format %q", f.Name, format)
}

// Bytes encodes the figure into memory.
func (f *Figure) Bytes(format Format) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Encode(&buf, format); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Text sizes (points).
const (
	titleSize  = 13
	labelSize  = 11
	tickSize   = 9.5
	legendSize = 9.5
	noteSize   = 8
)

func sans() font.Font { return font.Font{Typeface: "Liberation", Variant: "Sans"} }

func sansFont(size float64) font.Font {
	f := sans()
	f.Size = vg.Points(size)
	return f
}

// newPlot returns a plot with the package's style: sans-serif text, a light grid, and the
// given title and axis labels.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil // Figure.Draw paints the background once
	p.Title.Text = title
	p.Title.TextStyle.Font = sansFont(titleSize)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sansFont(labelSize)
		a.Tick.Label.Font = sansFont(tickSize)
		a.Label.Padding = vg.Points(4)
	}
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	return p
}

// newLegend returns an empty legend in the package's style, for Figure.Legend.
func newLegend() *plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = sansFont(legendSize)
	l.Top = true
	l.Left = true
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(22)
	return &l
}

// heading is a legend entry without a thumbnail (a section title).
type heading struct{}

func (heading) Thumbnail(*draw.Canvas) {}

// addHeading adds a section title to a legend.
func addHeading(l *plot.Legend, text string) { l.Add(text, heading{}) }

// glyphThumb draws a glyph in a legend.
type glyphThumb struct{ draw.GlyphStyle }

func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyphNoClip(g.GlyphStyle, c.Center()) }

// lineThumb draws a line in a legend.
type lineThumb struct{ draw.LineStyle }

func (l lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.LineStyle, c.Min.X, y, c.Max.X, y)
}

// boxThumb draws a filled box with an optional outline in a legend.
type boxThumb struct {
	fill    color.Color
	outline draw.LineStyle
}

func (b boxThumb) Thumbnail(c *draw.Canvas) {
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X + c.Size().X*0.2, Y: c.Min.Y}, Max: vg.Point{X: c.Max.X - c.Size().X*0.2, Y: c.Max.Y}}
	if b.fill != nil {
		c.SetColor(b.fill)
		c.Fill(r.Path())
	}
	if b.outline.Width > 0 {
		c.SetLineStyle(b.outline)
		c.Stroke(r.Path())
	}
}

// gridLines draws light horizontal (and optionally vertical) grid lines at the major ticks.
type gridLines struct{ vertical bool }

func (g gridLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: gridGrey(), Width: vg.Points(0.6)}
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.IsMinor() || t.Value < p.Y.Min || t.Value > p.Y.Max {
			continue
		}
		y := trY(t.Value)
		c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
	}
	if !g.vertical {
		return
	}
	for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if t.IsMinor() || t.Value < p.X.Min || t.Value > p.X.Max {
			continue
		}
		x := trX(t.Value)
		c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
	}
}

// constantTicks marks exactly the given positions.
func constantTicks(ts []Tick) plot.ConstantTicks {
	out := make(plot.ConstantTicks, len(ts))
	for i, t := range ts {
		out[i] = plot.Tick{Value: t.Value, Label: t.Label}
	}
	return out
}

// linearTicks labels 4 to 8 round values (steps of 1, 2, 2.5 or 5 times a power of ten) with
// thousands separators, with an unlabelled minor tick between labels.
type linearTicks struct{}

func (linearTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	span := max - min
	mag := math.Pow(10, math.Floor(math.Log10(span/6)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if span/(m*mag) <= 8 {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	for i := math.Ceil(min/step*2 - 1e-9); i/2*step <= max*(1+1e-12)+1e-12; i++ {
		v := i / 2 * step
		t := plot.Tick{Value: v}
		if math.Mod(i, 2) == 0 {
			t.Label = tickText(v)
		}
		ts = append(ts, t)
	}
	return ts
}

// logTicks labels 1-2-5 steps when the range spans less than three decades, else each decade,
// with unlabelled minor ticks at the other integers of each decade.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return nil
	}
	lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	dense := hi-lo <= 3
	// Less than a factor of 3 end to end: a 1-2-5 axis would show one label or none, so every
	// tick of a finer sequence is labelled.
	narrow := max/min < 3
	mults := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	if narrow {
		mults = []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9}
	}
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		dec := math.Pow(10, e)
		for _, m := range mults {
			v := m * dec
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if narrow || m == 1 || (dense && (m == 2 || m == 5)) {
				t.Label = tickText(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// logRange widens [lo, hi] to the next 1-2-5 steps when those are near (within a factor of
// 1.3), so log axes end on labelled ticks without wasting much of the plot.
func logRange(lo, hi float64) (float64, float64) {
	slo, shi := logSteps(lo, hi)
	if lo/slo > 1.3 {
		slo = lo
	}
	if shi/hi > 1.3 {
		shi = hi
	}
	return slo, shi
}

// logSteps widens [lo, hi] to whole 1-2-5 steps.
func logSteps(lo, hi float64) (float64, float64) {
	steps := []float64{1, 2, 5, 10}
	down := func(v float64) float64 {
		d := math.Pow(10, math.Floor(math.Log10(v)))
		for i := len(steps) - 1; i >= 0; i-- {
			if steps[i]*d <= v*(1+1e-9) {
				return steps[i] * d
			}
		}
		return d
	}
	up := func(v float64) float64 {
		d := math.Pow(10, math.Floor(math.Log10(v)))
		for _, s := range steps {
			if s*d >= v*(1-1e-9) {
				return s * d
			}
		}
		return 10 * d
	}
	return down(lo), up(hi)
}

// axisMap maps data values to plot coordinates. Log axes are drawn as linear axes over log10
// of the value, with tick labels in data units: gonum's LogScale centres axis labels at the
// arithmetic mean of the range, which shifts the padding and shrinks the plot.
type axisMap struct{ log bool }

func (m axisMap) f(v float64) float64 {
	if m.log {
		return math.Log10(v)
	}
	return v
}

func (m axisMap) xy(x, y float64, my axisMap) xy { return xy{m.f(x), my.f(y)} }

// configureAxis sets an axis up for scale s over [lo, hi] (data units), with the given ticks
// (nil: automatic), and returns the map from data values to plot coordinates.
func configureAxis(a *plot.Axis, s Scale, ticks []Tick, lo, hi float64) axisMap {
	m := axisMap{log: s != Linear}
	a.Scale = plot.LinearScale{}
	a.Min, a.Max = m.f(lo), m.f(hi)
	switch {
	case len(ticks) > 0:
		ct := make(plot.ConstantTicks, len(ticks))
		for i, t := range ticks {
			ct[i] = plot.Tick{Value: m.f(t.Value), Label: t.Label}
		}
		a.Tick.Marker = ct
	case m.log:
		a.Tick.Marker = logSpaceTicks{}
	default:
		a.Tick.Marker = linearTicks{}
	}
	return m
}

// logSpaceTicks is logTicks for an axis whose coordinates are log10 of the values.
type logSpaceTicks struct{}

func (logSpaceTicks) Ticks(min, max float64) []plot.Tick {
	ts := logTicks{}.Ticks(math.Pow(10, min), math.Pow(10, max))
	for i := range ts {
		ts[i].Value = math.Log10(ts[i].Value)
	}
	return ts
}

// note draws small text in a corner of the data area; text is called when the note is drawn,
// so it can report what earlier plotters did.
type note struct {
	text func() string
	top  bool // top-left corner; else bottom-right
}

func (n note) Plot(c draw.Canvas, _ *plot.Plot) {
	s := n.text()
	if s == "" {
		return
	}
	ts := textStyle(noteSize, darkGrey())
	pt := vg.Point{X: c.Max.X - vg.Points(4), Y: c.Min.Y + vg.Points(4)}
	ts.XAlign, ts.YAlign = draw.XRight, draw.YBottom
	if n.top {
		pt = vg.Point{X: c.Min.X + vg.Points(4), Y: c.Max.Y - vg.Points(4)}
		ts.XAlign, ts.YAlign = draw.XLeft, draw.YTop
	}
	c.FillText(ts, pt, s)
}
