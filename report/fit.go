package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/model/param"
)

// ReadFit parses a fit report (the JSON `servesim fit --report FILE` writes); name labels
// errors. Unknown fields are allowed (newer reports may carry more); a report without
// parameters is rejected.
func ReadFit(r io.Reader, name string) (*calibration.Report, error) {
	var rep calibration.Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s: not a fit report: JSON syntax error at byte %d: %v", name, se.Offset, err)
		}
		return nil, fmt.Errorf("%s: not a fit report: %w", name, err)
	}
	if len(rep.Parameters) == 0 {
		return nil, fmt.Errorf("%s: not a fit report: no \"parameters\" (want the JSON of servesim fit --report)", name)
	}
	return &rep, nil
}

// LoadFit reads a fit report file.
func LoadFit(path string) (*calibration.Report, error) {
	data, err := fsutil.ReadFile(path, fsutil.MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("fit report: %w", err)
	}
	return ReadFit(bytes.NewReader(data), path)
}

type fitView struct {
	Name     string
	Facts    []kv
	Warnings []string
	Params   *table
	Errors   *table
	CV       *table
	Worst    *table
	// Targets are a result-file fit's tables, one per file.
	Targets []*table
}

// targetTables is one table per result file of a fit to vllm bench results: every metric
// measured, predicted with the starting and the fitted parameters, the errors and the fit weight.
func targetTables(ts []calibration.TargetFit) []*table {
	var out []*table
	for i, t := range ts {
		tb := &table{ID: fmt.Sprintf("table-fit-target-%d", i+1), Caption: t.Name + ": measured, at the start and fitted",
			Head: []string{"metric", "measured", "start", "error", "fitted", "error", "fit weight"}}
		for j, a := range t.After {
			b := calibration.Observation{Predicted: math.NaN(), Measured: a.Measured}
			if j < len(t.Before) {
				b = t.Before[j]
			}
			wt := "—"
			if a.Weight > 0 {
				wt = gnum(a.Weight)
			}
			tb.Rows = append(tb.Rows, []cellView{{Text: a.Metric, Class: "name"}, {Text: obsNum(a.Measured), Class: "num"},
				{Text: obsNum(b.Predicted), Class: "num"}, obsErr(b), {Text: obsNum(a.Predicted), Class: "num"}, obsErr(a), {Text: wt, Class: "num"}})
		}
		out = append(out, tb)
	}
	return out
}

// obsNum is a measured or predicted value: whole numbers from 1,000 up, else 4 significant
// digits.
func obsNum(v float64) string {
	if math.Abs(v) >= 1000 {
		return fnum(v, 0)
	}
	return gnum(v)
}

// obsErr is an observation's signed error in percent, coloured by its size.
func obsErr(o calibration.Observation) cellView {
	if math.IsNaN(o.Predicted) || math.IsNaN(o.Measured) || o.Measured == 0 {
		return cellView{Text: "—", Class: "num"}
	}
	e := 100 * (o.Predicted - o.Measured) / o.Measured
	return cellView{Text: fmt.Sprintf("%+.1f %%", e), Class: "num " + errClass(math.Abs(e))}
}

func buildFit(rep *calibration.Report, name string) *fitView {
	fv := &fitView{Name: name}
	conv := "no"
	if rep.Converged {
		conv = "yes"
	}
	fv.Facts = []kv{
		{"status", rep.Status}, {"converged", conv}, {"loss", strconv.FormatFloat(rep.Loss, 'g', 5, 64)},
		{"fitted parameters", strconv.Itoa(rep.NParameters)}, {"evaluations", fnum(float64(rep.Evaluations), 0)},
		{"starts", strconv.Itoa(rep.Starts)}, {"seed", strconv.FormatUint(rep.Seed, 10)},
	}
	if rep.TrainFilter != "" {
		fv.Facts = append(fv.Facts, kv{"training cells", rep.TrainFilter})
	}
	if rep.KVTokens > 0 {
		fv.Facts = append(fv.Facts, kv{"kv_cache_size_tokens pinned to", fnum(float64(rep.KVTokens), 0)})
	}

	fv.Warnings = append(fv.Warnings, rep.Warnings...)
	fv.Params = &table{ID: "table-fit-params", Caption: "Parameters: fitted value ± standard error, prior and bounds (fitted first, in table order)",
		Head: []string{"parameter", "value", "± std. error", "relative", "unit", "prior", "bounds", "fitted", "meaning"}}
	for _, n := range paramOrder(rep.Parameters) {
		p := rep.Parameters[n]
		se, rel := "—", "—"
		switch {
		case p.StdErr >= 0:
			se = "± " + gnum(p.StdErr)
			if p.Value != 0 {
				rel = strconv.FormatFloat(100*p.StdErr/math.Abs(p.Value), 'f', 1, 64) + " %"
			}
		case p.Fitted || p.Unidentifiable:
			se = p.UncertaintyText()
		}
		fitted, class := "no", ""
		if p.Fitted {
			fitted = "yes"
		}
		if p.AtBound {
			class = "err-poor"
			fitted += ", at bound"
			fv.Warnings = append(fv.Warnings, fmt.Sprintf("%s = %s sits at a bound [%s, %s]: the model may miss a mechanism, or the bound is too tight.",
				n, gnum(p.Value), gnum(p.Lo), gnum(p.Hi)))
		}
		fv.Params.Rows = append(fv.Params.Rows, []cellView{
			{Text: n, Class: "name"}, {Text: gnum(p.Value), Class: "num " + class}, {Text: se, Class: "num"}, {Text: rel, Class: "num"},
			{Text: p.Unit}, {Text: gnum(p.Prior), Class: "num"}, {Text: "[" + gnum(p.Lo) + ", " + gnum(p.Hi) + "]", Class: "num"},
			{Text: fitted, Class: class}, {Text: p.Meaning, Class: "meaning"},
		})
	}

	if len(rep.Targets) > 0 {
		// A fit to vllm bench result files: each file's metrics, measured, at the start and
		// fitted (the matrix's error sets are empty).
		fv.Targets = targetTables(rep.Targets)
		return fv
	}
	errHead := []string{"cells", "decode total MAPE", "decode per-request MAPE", "prefill MAPE", "TTFT median APE", "TBT MAPE", "statuses matched"}
	fv.Errors = &table{ID: "table-fit-errors", Caption: "Errors after the fit", Head: append([]string{"set"}, errHead...)}
	fv.Errors.Rows = append(fv.Errors.Rows, errorsRow("training", rep.Train))
	if rep.Test != nil {
		fv.Errors.Rows = append(fv.Errors.Rows, errorsRow("held out", *rep.Test))
	}
	if len(rep.CV) > 0 {
		fv.CV = &table{ID: "table-fit-cv", Caption: "Cross-validation: each split is fitted on its training cells and judged on the held-out cells",
			Head: append([]string{"split", "held out", "set"}, errHead...)}
		for _, s := range rep.CV {
			train := errorsRow("train", s.Train)
			test := errorsRow("test", s.Test)
			fv.CV.Rows = append(fv.CV.Rows,
				append([]cellView{{Text: s.Name, Class: "name"}, {Text: s.Filter}}, train...),
				append([]cellView{{Text: ""}, {Text: ""}}, test...))
		}
	}
	if len(rep.Worst) > 0 {
		fv.Worst = &table{ID: "table-fit-worst", Caption: "Worst cells after the fit", Head: []string{"cell", "metric", "predicted", "measured", "APE"}}
		for _, w := range rep.Worst {
			fv.Worst.Rows = append(fv.Worst.Rows, []cellView{{Text: w.Cell, Class: "name"}, {Text: w.Metric},
				{Text: fnum(w.Predicted, 1), Class: "num"}, {Text: fnum(w.Measured, 1), Class: "num"},
				{Text: apeText(w.APE), Class: "num " + errClass(w.APE)}})
		}
	}
	return fv
}

func errorsRow(set string, e calibration.Errors) []cellView {
	pct := func(v float64) cellView {
		if v < 0 { // the fit writes -1 when a set has no cells of the metric
			return cellView{Text: "—", Class: "num"}
		}
		return cellView{Text: apeText(v), Class: "num " + errClass(v)}
	}
	status := "—"
	if e.StatusCells > 0 {
		status = fmt.Sprintf("%d / %d", e.StatusMatched, e.StatusCells)
	}
	return []cellView{{Text: set, Class: "name"}, {Text: strconv.Itoa(e.Cells), Class: "num"},
		pct(e.DecodeTotalMAPE), pct(e.DecodePerRequestMAPE), pct(e.PrefillMAPE), pct(e.TTFTMdAPE), pct(e.TBTMAPE),
		{Text: status, Class: "num"}}
}

// paramOrder lists fitted parameters first, then the others, each in parameter (ID) order; names
// the table does not know come last, sorted.
func paramOrder(ps map[string]calibration.ParamEstimate) []string {
	rank := map[string]int{}
	for i, d := range param.Defs() {
		rank[d.Name] = i
	}
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if ps[a].Fitted != ps[b].Fitted {
			return ps[a].Fitted
		}
		ra, oka := rank[a]
		rb, okb := rank[b]
		switch {
		case oka && okb:
			return ra < rb
		case oka != okb:
			return oka
		}
		return a < b
	})
	return names
}
