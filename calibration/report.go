package calibration

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// ParamEstimate is one fitted parameter with its uncertainty.
type ParamEstimate struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// StdErr is the standard error from the Jacobian at the optimum (or a seeded bootstrap);
	// NaN-free: -1 when it could not be estimated.
	StdErr float64 `json:"stderr"`
	// Prior is the deployment's prior (its GPU generation's for gpu-level parameters).
	Prior   float64 `json:"prior"`
	Meaning string  `json:"meaning"`
	// AtBound is true when the value sits within 1 % of a bound (a warning: the model may be
	// missing a mechanism, or the bound is too tight).
	AtBound bool `json:"at_bound"`
	Fitted  bool `json:"fitted"`
	// BoundLo and BoundHi state a scanned parameter's uncertainty where it has no standard error
	// (a grid choice): the values whose loss is within ScanTolerance of the best, widened by the
	// grid's resolution (both 0: none).
	BoundLo float64 `json:"bound_lo,omitempty"`
	BoundHi float64 `json:"bound_hi,omitempty"`
	// Unidentifiable: left at its starting value because the fit had more free parameters than
	// weighted targets and the data could not tell it from the others.
	Unidentifiable bool `json:"unidentifiable,omitempty"`
}

// UncertaintyText is a fitted parameter's uncertainty for people: its standard error, its
// stated bound ("in [a, b]"), or why it has none.
func (p *ParamEstimate) UncertaintyText() string {
	switch {
	case p.Unidentifiable:
		return "fixed: unidentifiable"
	case !p.Fitted:
		return "fixed"
	case p.StdErr >= 0:
		return fmt.Sprintf("%.3g", p.StdErr)
	case p.BoundLo != 0 || p.BoundHi != 0:
		return fmt.Sprintf("in [%.4g, %.4g]", p.BoundLo, p.BoundHi)
	}
	return "not estimable"
}

// Errors summarises prediction errors over a set of cells (percentages).
type Errors struct {
	Cells                int     `json:"cells"`
	DecodeTotalMAPE      float64 `json:"decode_total_mape"`
	DecodePerRequestMAPE float64 `json:"decode_per_request_mape"`
	PrefillMAPE          float64 `json:"prefill_mape"`
	TTFTMdAPE            float64 `json:"ttft_mdape"`
	TBTMAPE              float64 `json:"tbt_mape"`
	StatusMatched        int     `json:"status_matched"`
	StatusCells          int     `json:"status_cells"`
}

// CellError is one cell's largest error, for the worst-cells list.
type CellError struct {
	Cell      string  `json:"cell"`
	Metric    string  `json:"metric"`
	Predicted float64 `json:"predicted"`
	Measured  float64 `json:"measured"`
	APE       float64 `json:"ape"`
}

// Split is one cross-validation split: fitted on Train cells, judged on Test cells.
type Split struct {
	Name   string `json:"name"`
	Filter string `json:"filter"`
	Train  Errors `json:"train"`
	Test   Errors `json:"test"`
	// Parameters fitted on the split's training cells.
	Parameters map[string]float64 `json:"parameters,omitempty"`
}

// Report is the machine-readable result of a fit (servesim fit --report).
type Report struct {
	NParameters int                      `json:"n_parameters"`
	Parameters  map[string]ParamEstimate `json:"parameters"`
	Train       Errors                   `json:"train"`
	Test        *Errors                  `json:"test,omitempty"`
	TrainFilter string                   `json:"train_filter,omitempty"`
	// Excluded are the errors on the cells the fit neither trained on nor judged
	// (Problem.Exclude), ExcludeFilters the filters that chose them.
	Excluded       *Errors     `json:"excluded,omitempty"`
	ExcludeFilters []string    `json:"exclude_filters,omitempty"`
	CV             []Split     `json:"cv,omitempty"`
	Worst          []CellError `json:"worst_cells,omitempty"`
	Loss           float64     `json:"loss"`
	Evaluations    int         `json:"evaluations"`
	Starts         int         `json:"starts"`
	Seed           uint64      `json:"seed"`
	Converged      bool        `json:"converged"`
	Status         string      `json:"status"`
	// KVTokens is the measured kv_cache_size_tokens that pinned the memory terms (0 = none).
	KVTokens int `json:"kv_tokens,omitempty"`
	// Priors are the errors on the training cells under the deployment's priors
	// (priors.Of: the GPU generation's where known, else the generic ones), the
	// reference the fit should improve on.
	Priors *Errors `json:"priors,omitempty"`
	// Warnings say where the fit ends worse than the priors and which cross-validation splits
	// the matrix could not make.
	Warnings []string `json:"warnings,omitempty"`
	// Targets are the result files of a fit to vllm bench results (TargetReport's), each metric
	// measured, at the start and fitted; a matrix fit has none (its errors are Train).
	Targets []TargetFit `json:"targets,omitempty"`
}

// WorseThanPriors lists the metrics on which fitted ends worse than prior (by more than 0.1
// percentage point of error, or fewer statuses matched), one warning each, naming the cells
// compared: e.g. "decode TTFT MdAPE on the training cells 12.3% after the fit, 9.8% under the
// priors (the fit trades it for the weighted loss: see --weights)".
func WorseThanPriors(fitted, prior *Errors, cells string) []string {
	var out []string
	for _, m := range []struct {
		name string
		f, p float64
	}{
		{"decode total MAPE", fitted.DecodeTotalMAPE, prior.DecodeTotalMAPE},
		{"decode per-request MAPE", fitted.DecodePerRequestMAPE, prior.DecodePerRequestMAPE},
		{"prefill MAPE", fitted.PrefillMAPE, prior.PrefillMAPE},
		{"decode TTFT MdAPE", fitted.TTFTMdAPE, prior.TTFTMdAPE},
		{"decode TBT MAPE", fitted.TBTMAPE, prior.TBTMAPE},
	} {
		if m.f >= 0 && m.p >= 0 && m.f > m.p+0.1 {
			out = append(out, fmt.Sprintf("%s on the %s: %.1f%% after the fit, %.1f%% under the priors (the fit trades it for the weighted loss; see --weights)", m.name, cells, m.f, m.p))
		}
	}
	if fitted.StatusMatched < prior.StatusMatched {
		out = append(out, fmt.Sprintf("statuses on the %s: %d/%d match after the fit, %d/%d under the priors", cells, fitted.StatusMatched, fitted.StatusCells, prior.StatusMatched, prior.StatusCells))
	}
	return out
}

// WriteJSON writes the report as indented JSON: the file `servesim fit --report` writes and
// report.ReadFit reads.
func (r *Report) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// Note is a one-line account of the fit, for the parameter file it produces: the measured
// matrix it was fitted to (as the caller names it), the training cells and the loss.
func (r *Report) Note(measured string) string {
	x := ""
	if len(r.ExcludeFilters) > 0 {
		x = fmt.Sprintf(", excluded %q", strings.Join(r.ExcludeFilters, "; "))
	}
	return fmt.Sprintf("servesim fit on %s: %d cells, train %q%s, loss %.4f", measured, r.Train.Cells, r.TrainFilter, x, r.Loss)
}
