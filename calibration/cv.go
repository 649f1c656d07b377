package calibration

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/servesim/servesim/matrix"
)

// CrossValidate runs the standard splits and returns them with warnings for the splits the
// matrix cannot make: by concurrency (the lower half of the measured decode concurrencies trains
// with the prefill rows, the upper half tests: C <= 8 against C >= 16 on the seed's 1..128) and by
// context (the lower half of the decode contexts trains: <= 64K against >= 128K on the seed's
// 8K..1019K; a 1K..8K matrix trains on <= 2K), then 5-fold by cell (every fifth cell in matrix
// order held out). A split needs two levels; a split whose test cells did not run (none measured
// valid) is kept, with a warning. Each split is a full fit on its training cells.
func CrossValidate(p *Problem, s *Settings) ([]Split, []string, error) {
	var out []Split
	var warnings []string
	for _, f := range halfSplits(p.Measured) {
		if f.expr == "" {
			warnings = append(warnings, f.warning)
			continue
		}
		flt, err := ParseFilter(f.expr)
		if err != nil {
			return nil, nil, fmt.Errorf("cv split %s: %w", f.name, err)
		}
		sp, err := runSplit(p, s, f.name, f.expr, flt.Match)
		if err != nil {
			return nil, nil, err
		}
		if sp.Test.Cells == 0 {
			warnings = append(warnings, fmt.Sprintf("cv split %s (train %s): no measured cell to test on", f.name, f.expr))
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
			return nil, nil, err
		}
		out = append(out, sp)
	}
	return out, warnings, nil
}

// halfSplit is a split by one field: expr selects the training cells ("" when the matrix cannot
// be split, warning says why).
type halfSplit struct{ name, expr, warning string }

// halfSplits picks the concurrency and context thresholds from the measured decode cells that
// ran: the lower ceil(n/2) of the n distinct levels train.
func halfSplits(m *matrix.Matrix) []halfSplit {
	var concs []int
	var ctxs []int
	label := map[int]string{}
	for i := range m.Decode {
		c := &m.Decode[i]
		if !c.Status.Ran() {
			continue
		}
		if !slices.Contains(concs, c.Concurrency) {
			concs = append(concs, c.Concurrency)
		}
		v := contextValue(c)
		if !slices.Contains(ctxs, v) {
			ctxs = append(ctxs, v)
			label[v] = c.Context
		}
	}
	slices.Sort(concs)
	slices.Sort(ctxs)
	var out []halfSplit
	if len(concs) < 2 {
		out = append(out, halfSplit{name: "concurrency", warning: fmt.Sprintf("cv split by concurrency skipped: the measured decode cells have %d concurrency level(s); it needs two", len(concs))})
	} else {
		out = append(out, halfSplit{name: "concurrency", expr: "concurrency<=" + strconv.Itoa(concs[(len(concs)+1)/2-1])})
	}
	if len(ctxs) < 2 {
		out = append(out, halfSplit{name: "context", warning: fmt.Sprintf("cv split by context skipped: the measured decode cells have %d context(s); it needs two", len(ctxs))})
	} else {
		v := ctxs[(len(ctxs)+1)/2-1]
		x := strconv.Itoa(v)
		// The label reads like the table ("64K") when it names the same size.
		if n, err := matrix.ParseContext(label[v]); err == nil && n == v {
			x = label[v]
		}
		out = append(out, halfSplit{name: "context", expr: "context<=" + x})
	}
	return out
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
