package plots

import (
	"io"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/cost"
)

// TermBar is one explained step split into the cost model's terms.
type TermBar struct {
	Cell    string                 // "8K×32"
	MS      [cost.NumTerms]float64 // per term, milliseconds
	TotalMS float64                // the step's wall time
	Binding string                 // the largest term
}

// StepTerms holds the decode steps and prefill chunks of explained cells.
type StepTerms struct {
	Header
	Terms   []string // term names, cost.Term order
	Decode  []TermBar
	Prefill []TermBar
}

// Terms builds the step-time bars of the explained cells, in the given order.
func Terms(xs []*llmbench.Explanation) *StepTerms {
	st := &StepTerms{Header: Header{
		Name:  "step-terms",
		Title: "Step time by cost term",
		Caption: "For each explained cell (context × concurrency): the steady decode step (every running request " +
			"verifying 1 + k tokens) and one prefill chunk of a cold prompt beside the other requests' decode, " +
			"split into the cost model's terms. Bar height is the step's wall time in milliseconds.",
	}}
	for t := cost.Term(0); t < cost.NumTerms; t++ {
		st.Terms = append(st.Terms, t.String())
	}
	for _, x := range xs {
		if x == nil {
			continue
		}
		name := matrix.Label(x.Context) + "×" + strconv.Itoa(x.Concurrency)
		st.Decode = append(st.Decode, termBar(name, &x.Decode))
		st.Prefill = append(st.Prefill, termBar(name, &x.Prefill))
	}
	return st
}

func termBar(name string, c *cost.StepCost) TermBar {
	b := TermBar{Cell: name, TotalMS: c.TotalSeconds * 1e3, Binding: c.Binding().String()}
	for i, v := range c.Seconds {
		b.MS[i] = v * 1e3
	}
	return b
}

// WriteData prints the bars.
func (st *StepTerms) WriteData(w io.Writer) error {
	ew := &errWriter{w: w}
	writeHeader(ew, "step-terms", st.Header)
	for _, part := range []struct {
		name string
		bars []TermBar
	}{{"decode step", st.Decode}, {"prefill chunk", st.Prefill}} {
		ew.printf("%s:\n", part.name)
		for _, b := range part.bars {
			ew.printf("  %-9s total %-8s binds on %-9s", b.Cell, num(b.TotalMS), b.Binding)
			for i, v := range b.MS {
				if v != 0 {
					ew.printf(" %s %s", st.Terms[i], num(v))
				}
			}
			ew.printf("\n")
		}
	}
	return ew.err
}

// Figure draws two panels of stacked bars, decode steps and prefill chunks, with the term
// legend on the right.
func (st *StepTerms) Figure() *Figure {
	used := [cost.NumTerms]bool{}
	for _, bars := range [][]TermBar{st.Decode, st.Prefill} {
		for _, b := range bars {
			for i, v := range b.MS {
				used[i] = used[i] || v > 0
			}
		}
	}
	panel := func(title string, bars []TermBar) *plot.Plot {
		p := newPlot(title, "cell (context × concurrency)", "time per step (ms)")
		p.Title.TextStyle.Font = sansFont(labelSize + 0.5)
		p.Y.Tick.Marker = linearTicks{}
		p.Add(gridLines{})
		n := len(bars)
		width := vg.Length(math.Min(0.55*72, 3.0*72/float64(max(n, 1))*0.65))
		var prev *plotter.BarChart
		for t := range cost.NumTerms {
			if !used[t] {
				continue
			}
			vals := make(plotter.Values, n)
			for i, b := range bars {
				vals[i] = b.MS[t]
			}
			bc, err := plotter.NewBarChart(vals, width)
			if err != nil {
				continue
			}
			bc.Color = termPalette()[t]
			bc.LineStyle = draw.LineStyle{Color: white(), Width: vg.Points(0.4)}
			if prev != nil {
				bc.StackOn(prev)
			}
			p.Add(bc)
			prev = bc
		}
		top := 0.0
		var lbl plotter.XYLabels
		for i, b := range bars {
			sum := 0.0
			for _, v := range b.MS {
				sum += v
			}
			h := math.Max(sum, b.TotalMS)
			top = math.Max(top, h)
			lbl.XYs = append(lbl.XYs, plotter.XY{X: float64(i), Y: h})
			lbl.Labels = append(lbl.Labels, msText(b.TotalMS))
		}
		if labels, err := plotter.NewLabels(lbl); err == nil {
			for i := range labels.TextStyle {
				labels.TextStyle[i] = textStyle(tickSize, black())
				labels.TextStyle[i].XAlign = draw.XCenter
			}
			labels.Offset = vg.Point{Y: vg.Points(3)}
			p.Add(labels)
		}
		names := make([]string, n)
		for i, b := range bars {
			names[i] = b.Cell
		}
		p.NominalX(names...)
		p.X.Tick.Label.Font = sansFont(tickSize)
		p.X.Min, p.X.Max = -0.6, float64(n)-0.4
		p.Y.Min, p.Y.Max = 0, top*1.15
		return p
	}
	l := newLegend()
	addHeading(l, "Term")
	for t := cost.NumTerms - 1; t >= 0; t-- { // top of the stack first
		if used[t] {
			l.Add(st.Terms[t], boxThumb{fill: termPalette()[t]})
		}
	}
	return &Figure{Header: st.Header, Legend: l, Width: 9 * vg.Inch, Height: 4.5 * vg.Inch, Panels: []*plot.Plot{
		panel("Decode step (all running requests)", st.Decode),
		panel("Prefill chunk (beside the decode batch)", st.Prefill),
	}}
}

// msText formats a duration in ms with 3 significant digits ("63.2 ms", "538 ms").
func msText(v float64) string {
	if v >= 100 {
		return thousands(v) + " ms"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " ms"
}

// ExplainCells picks decode cells worth explaining from a predicted matrix: the shortest
// context alone and at its largest Valid concurrency, the middle context at its largest Valid
// concurrency, and the longest context alone (for the seed: 8K×1, 8K×32, 128K×16, 1019K×1).
// Cells repeat at most once; a matrix without Valid decode cells gives none.
func ExplainCells(pred *matrix.Matrix) []matrix.Key {
	if pred == nil {
		return nil
	}
	ctxs := NewContextColors(&matrix.Matrix{Decode: pred.Decode}).Labels()
	valid := map[string][]int{} // context -> Valid concurrencies, ascending
	for _, c := range pred.Decode {
		if c.Status == matrix.Valid {
			valid[c.Context] = append(valid[c.Context], c.Concurrency)
		}
	}
	var rows []string
	for _, ctx := range ctxs {
		if len(valid[ctx]) > 0 {
			sort.Ints(valid[ctx])
			rows = append(rows, ctx)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	first, mid, last := rows[0], rows[len(rows)/2], rows[len(rows)-1]
	lowest := func(ctx string) int { return valid[ctx][0] }
	highest := func(ctx string) int { return valid[ctx][len(valid[ctx])-1] }
	var out []matrix.Key
	seen := map[matrix.Key]bool{}
	for _, k := range []matrix.Key{
		{Phase: matrix.Decode, Context: first, Concurrency: lowest(first)},
		{Phase: matrix.Decode, Context: first, Concurrency: highest(first)},
		{Phase: matrix.Decode, Context: mid, Concurrency: highest(mid)},
		{Phase: matrix.Decode, Context: last, Concurrency: lowest(last)},
	} {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
