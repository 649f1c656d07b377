package calibration

import (
	"fmt"

	"github.com/servesim/servesim/matrix"
)

// CrossValidate runs the standard splits: by concurrency (train C <= 8 with the prefill rows,
// test C >= 16), by context (train <= 64K, test >= 128K) and 5-fold by cell (every fifth cell in
// matrix order held out). Each split is a full fit on its training cells.
func CrossValidate(p *Problem, s *Settings) ([]Split, error) {
	var out []Split
	for _, f := range []struct{ name, expr string }{
		{"concurrency", "concurrency<=8"},
		{"context", "context<=64K"},
	} {
		flt, _ := ParseFilter(f.expr)
		sp, err := runSplit(p, s, f.name, f.expr, flt.Match)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	cells := p.Measured.Cells()
	index := map[matrix.Key]int{}
	for i := range cells {
		index[cells[i].Key()] = i
	}
	for k := 0; k < 5; k++ {
		k := k
		sel := func(c *matrix.Cell) bool { return index[c.Key()]%5 != k }
		sp, err := runSplit(p, s, fmt.Sprintf("fold %d/5", k+1), fmt.Sprintf("cell index mod 5 != %d", k), sel)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

func runSplit(p *Problem, s *Settings, name, expr string, train func(*matrix.Cell) bool) (Split, error) {
	q := *p
	q.Train = Filter{src: expr, custom: train}
	res, err := Fit(&q, s)
	if err != nil {
		return Split{}, fmt.Errorf("cv split %s: %w", name, err)
	}
	sp := Split{Name: name, Filter: expr, Train: res.Report.Train, Parameters: map[string]float64{}}
	if res.Report.Test != nil {
		sp.Test = *res.Report.Test
	}
	for _, id := range res.Free {
		sp.Parameters[id.Def().Name] = res.Params[id]
	}
	return sp, nil
}
