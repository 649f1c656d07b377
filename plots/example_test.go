package plots_test

import (
	"fmt"
	"io"
	"os"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/plots"
)

// A decode chart of a one-context matrix: the predicted line and the measured markers, with the
// queued cell kept (it is marked) and the over-capacity cell left out.
func ExampleDecode() {
	row := func(total ...float64) *matrix.Matrix {
		m := &matrix.Matrix{}
		for i, c := range []int{1, 2, 4} {
			cell := matrix.NewCell(matrix.Decode, "8K", 8192, c)
			switch {
			case i == 2:
				cell.Status = matrix.OverCapacity
			case i == 1:
				cell.Status, cell.TotalTokS = matrix.RequestsQueued, total[i]
			default:
				cell.Status, cell.TotalTokS = matrix.Valid, total[i]
			}
			m.Decode = append(m.Decode, cell)
		}
		return m
	}
	pred, meas := row(180, 250), row(175, 240)
	c := plots.Decode(pred, meas, matrix.DecodeTotalTokS, plots.NewContextColors(pred, meas))
	for _, s := range c.Series {
		fmt.Printf("%s %s:", s.Label, s.Kind)
		for _, p := range s.Points {
			fmt.Printf(" %s=%g (%s)", p.Cell, p.Y, p.Status)
		}
		fmt.Println()
	}
	// Output:
	// 8K predicted: 8K×1=180 (Valid) 8K×2=250 (Requests queued)
	// 8K measured: 8K×1=175 (Valid) 8K×2=240 (Requests queued)
}

// The figure set of a predicted matrix, written as SVG.
func ExampleCharts() {
	pred := &matrix.Matrix{}
	for i, ctx := range []string{"8K", "16K"} {
		p := matrix.NewCell(matrix.Prefill, ctx, 8192<<i, 1)
		p.Status, p.TotalTokS, p.TTFTms = matrix.Valid, 12000, float64(int(8192)<<i)/12
		pred.Prefill = append(pred.Prefill, p)
		d := matrix.NewCell(matrix.Decode, ctx, 8192<<i, 1)
		d.Status, d.TotalTokS, d.PerRequestTokS, d.TTFTms = matrix.Valid, 180, 180, 200
		pred.Decode = append(pred.Decode, d)
	}
	for _, c := range plots.Charts(plots.Input{Predicted: pred}) {
		fig := c.Figure()
		if err := fig.Encode(io.Discard, plots.SVG); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		fmt.Println(c.Meta().Name)
	}
	// Output:
	// decode-total-toks
	// decode-per-request-toks
	// decode-ttft
	// prefill-toks
	// prefill-ttft
	// status-map
}
