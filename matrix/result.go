package matrix

import (
	"encoding/csv"
	"io"
	"slices"
)

// Parameters says where a predicted matrix's step-time parameters come from: Source is
// "calibrated" (fitted on this GPU, engine version and model family), "transferred" (fitted
// elsewhere) or "prior"; From names the calibration or file.
type Parameters struct {
	Source string `json:"source"`
	From   string `json:"from"`
}

// colParamSource is the CSV column carrying Parameters.Source on every row; ParseCSV accepts and
// ignores it, so that a predicted CSV reads back as a measured one.
const colParamSource = "param_source"

// resultJSON is the one schema of a simulated matrix as JSON, with or without measurements.
type resultJSON struct {
	Parameters    Parameters `json:"parameters"`
	Predicted     *Matrix    `json:"predicted"`
	Measured      *Matrix    `json:"measured"`
	Summary       *Summary   `json:"summary"`
	OnlyPredicted []keyJSON  `json:"only_predicted"`
	OnlyMeasured  []keyJSON  `json:"only_measured"`
}

// WriteResultJSON writes a simulated matrix in one schema whether or not there are
// measurements: {"parameters": {"source", "from"}, "predicted": matrix, "measured": matrix or
// null, "summary": the comparison's summary or null, "only_predicted": [...], "only_measured":
// [...]} (the lists empty without measurements). ParseJSON reads the file back as its predicted
// matrix.
func WriteResultJSON(w io.Writer, pred, meas *Matrix, p Parameters) error {
	r := resultJSON{Parameters: p, Predicted: jsonMatrix(pred), OnlyPredicted: []keyJSON{}, OnlyMeasured: []keyJSON{}}
	if meas != nil {
		cmp := Compare(pred, meas)
		r.Measured, r.Summary = jsonMatrix(meas), &cmp.Summary
		for _, k := range cmp.OnlyPred {
			r.OnlyPredicted = append(r.OnlyPredicted, newKeyJSON(k))
		}
		for _, k := range cmp.OnlyMeas {
			r.OnlyMeasured = append(r.OnlyMeasured, newKeyJSON(k))
		}
	}
	return writeIndented(w, r)
}

// WriteResultCSV writes a simulated matrix as CSV, each row followed by the predicted cell's
// interval columns (IntervalHeader, from b) and a last column param_source (p.Source on every
// row). Without compare: the columns of CSVHeader, predicted values (ParseCSV reads it back).
// With compare: the columns of the comparison (keys, pred_status, meas_status, then for total,
// per-request, TTFT and TBT the predicted, measured and signed error in percent), one row per cell
// of either matrix; measured and error fields are blank where there is no measurement (meas may
// be nil: every measured field blank), interval fields where there is no prediction.
func WriteResultCSV(w io.Writer, pred, meas *Matrix, p Parameters, b Band, compare bool) error {
	cw := csv.NewWriter(w)
	header := CSVHeader()
	if compare {
		header = comparisonCSVHeader()
	}
	if err := cw.Write(slices.Concat(header, IntervalHeader(), []string{colParamSource})); err != nil {
		return err
	}
	intervals := func(c *Cell) []string {
		if c == nil {
			return make([]string, len(IntervalHeader()))
		}
		return b.IntervalRecord(c)
	}
	if compare {
		var mp, md []Cell
		if meas != nil {
			mp, md = meas.Prefill, meas.Decode
		}
		pairs := slices.Concat(joinPhase(pred.Prefill, mp), joinPhase(pred.Decode, md))
		for i := range pairs {
			if err := cw.Write(slices.Concat(comparisonRecord(&pairs[i]), intervals(pairs[i].pred), []string{p.Source})); err != nil {
				return err
			}
		}
	} else {
		for _, cells := range [][]Cell{pred.Prefill, pred.Decode} {
			for i := range cells {
				if err := cw.Write(slices.Concat(csvRecord(&cells[i]), intervals(&cells[i]), []string{p.Source})); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
