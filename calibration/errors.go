package calibration

import (
	"github.com/servesim/servesim/internal/stats"
	"math"
	"sort"

	"github.com/servesim/servesim/matrix"
)

// CellErrors summarises the errors of pred against meas over the cells where sel is true.
func CellErrors(pred, meas *matrix.Matrix, sel func(*matrix.Cell) bool) Errors {
	var e Errors
	var total, perReq, prefill, ttft, tbt []float64
	cmp := matrix.Compare(pred, meas)
	for i := range cmp.Pairs {
		pr := &cmp.Pairs[i]
		m := pr.Meas
		if !sel(&m) {
			continue
		}
		e.Cells++
		if m.Phase == matrix.Decode {
			e.StatusCells++
			if pr.StatusMatch {
				e.StatusMatched++
			}
		}
		add := func(dst *[]float64, metric matrix.Column) {
			if v := pr.APEPct[metric]; !math.IsNaN(v) {
				*dst = append(*dst, v)
			}
		}
		add(&total, matrix.DecodeTotalTokS)
		add(&perReq, matrix.DecodePerRequestTokS)
		add(&prefill, matrix.PrefillTokS)
		add(&ttft, matrix.DecodeTTFTms)
		add(&tbt, matrix.DecodeTBTms)
	}
	e.DecodeTotalMAPE = matrix.MAPE(total)
	e.DecodePerRequestMAPE = matrix.MAPE(perReq)
	e.PrefillMAPE = matrix.MAPE(prefill)
	e.TTFTMdAPE = stats.Median(ttft)
	e.TBTMAPE = matrix.MAPE(tbt)
	clean := func(v *float64) {
		if math.IsNaN(*v) {
			*v = -1
		}
	}
	for _, v := range []*float64{&e.DecodeTotalMAPE, &e.DecodePerRequestMAPE, &e.PrefillMAPE, &e.TTFTMdAPE, &e.TBTMAPE} {
		clean(v)
	}
	return e
}

// worstCells lists the n largest errors over the throughput and latency metrics.
func worstCells(cmp *matrix.Comparison, n int) []CellError {
	var out []CellError
	for i := range cmp.Pairs {
		pr := &cmp.Pairs[i]
		for _, m := range matrix.Columns() {
			v := pr.APEPct[m]
			if math.IsNaN(v) {
				continue
			}
			out = append(out, CellError{Cell: pr.Key.String(), Metric: m.String(), Predicted: m.Value(&pr.Pred), Measured: m.Value(&pr.Meas), APE: v})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].APE > out[b].APE })
	if len(out) > n {
		out = out[:n]
	}
	return out
}
