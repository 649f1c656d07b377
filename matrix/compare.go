package matrix

import (
	"encoding/json"
	"github.com/servesim/servesim/internal/stats"
	"math"
	"sort"
	"strconv"
)

// Column is a measurement compared between a predicted and a measured matrix.
type Column int

const (
	DecodeTotalTokS      Column = iota // decode cells: output tok/s over all streams
	DecodePerRequestTokS               // decode cells: 1 / median time between tokens
	DecodeTTFTms                       // decode cells: median time to first token
	DecodeTBTms                        // decode cells: median time between tokens
	PrefillTokS                        // prefill rows: prompt tok/s
	PrefillTTFTms                      // prefill rows: time to first token
)

// NumColumns is the number of Column values; Pair.APEPct is indexed by Column.
const NumColumns = 6

// WorstCells is how many cells ColumnSummary.Worst keeps.
const WorstCells = 3

// Columns lists the compared columns in report order.
func Columns() []Column {
	return []Column{DecodeTotalTokS, DecodePerRequestTokS, DecodeTTFTms, DecodeTBTms, PrefillTokS, PrefillTTFTms}
}

func columnNames() [NumColumns]string {
	return [NumColumns]string{
		"decode total tok/s", "decode per-request tok/s", "decode TTFT ms", "decode TBT ms",
		"prefill tok/s", "prefill TTFT ms",
	}
}

func (m Column) String() string {
	if m < 0 || m >= NumColumns {
		return "metric(" + strconv.Itoa(int(m)) + ")"
	}
	return columnNames()[m]
}

// MarshalText writes the metric's name.
func (m Column) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// Phase is the phase whose cells the metric is measured on.
func (m Column) Phase() Phase {
	if m == PrefillTokS || m == PrefillTTFTms {
		return Prefill
	}
	return Decode
}

// Value returns the metric's value in c (NaN when c is of the other phase or lacks it).
func (m Column) Value(c *Cell) float64 {
	if c.Phase != m.Phase() {
		return math.NaN()
	}
	switch m {
	case DecodeTotalTokS, PrefillTokS:
		return c.TotalTokS
	case DecodePerRequestTokS:
		return c.PerRequestTokS
	case DecodeTTFTms, PrefillTTFTms:
		return c.TTFTms
	case DecodeTBTms:
		return c.TBTms
	}
	return math.NaN()
}

// Pair is a cell present in both matrices.
type Pair struct {
	Key         Key // the measured cell's key
	Pred, Meas  Cell
	StatusMatch bool
	// APEPct is the absolute percentage error per Column; NaN where the column is of the other
	// phase, either cell did not run (Status.Ran) or either value is absent.
	APEPct [NumColumns]float64
}

// CellError is one cell's error in one metric.
type CellError struct {
	Key        Key
	Pred, Meas float64
	APEPct     float64
}

// SignedPct is the signed percentage error (pred - meas) / meas * 100.
func (e CellError) SignedPct() float64 { return SignedPct(e.Pred, e.Meas) }

// ColumnSummary aggregates one metric over the cells where both matrices ran.
type ColumnSummary struct {
	Column   Column
	N        int         // cells compared
	MAPEPct  float64     // mean APE, percent; NaN when N == 0
	MdAPEPct float64     // median APE, percent; NaN when N == 0
	Worst    []CellError // up to WorstCells cells, largest APE first, ties in matrix order
}

// Summary aggregates a comparison.
type Summary struct {
	DecodeCells   int             // decode cells present in both matrices
	StatusMatched int             // of those, cells whose statuses are equal
	Columns       []ColumnSummary // in Columns() order
}

// Comparison is a predicted matrix set against a measured one.
type Comparison struct {
	Pairs    []Pair // cells in both, in the measured matrix's order
	OnlyPred []Key  // cells only in the predicted matrix, in its order
	OnlyMeas []Key  // cells only in the measured matrix, in its order
	Summary  Summary
}

// Compare matches cells by key (prefill rows by context) and computes errors of pred against
// meas. Either matrix may be nil (no cells).
func Compare(pred, meas *Matrix) *Comparison {
	predCells, measCells := cellsOf(pred), cellsOf(meas)
	predIndex := map[Key]int{}
	for i := range predCells {
		predIndex[matchKey(&predCells[i])] = i
	}
	cmp := &Comparison{}
	matched := map[Key]bool{}
	for i := range measCells {
		k := matchKey(&measCells[i])
		j, ok := predIndex[k]
		if !ok {
			cmp.OnlyMeas = append(cmp.OnlyMeas, measCells[i].Key())
			continue
		}
		matched[k] = true
		cmp.Pairs = append(cmp.Pairs, newPair(&predCells[j], &measCells[i]))
	}
	for i := range predCells {
		if !matched[matchKey(&predCells[i])] {
			cmp.OnlyPred = append(cmp.OnlyPred, predCells[i].Key())
		}
	}
	cmp.Summary = summarize(cmp.Pairs)
	return cmp
}

func cellsOf(m *Matrix) []Cell {
	if m == nil {
		return nil
	}
	return m.Cells()
}

func newPair(pred, meas *Cell) Pair {
	p := Pair{Key: meas.Key(), Pred: *pred, Meas: *meas, StatusMatch: pred.Status == meas.Status}
	ran := pred.Status.Ran() && meas.Status.Ran()
	for _, m := range Columns() {
		p.APEPct[m] = math.NaN()
		if ran {
			p.APEPct[m] = APE(m.Value(pred), m.Value(meas))
		}
	}
	return p
}

func summarize(pairs []Pair) Summary {
	var s Summary
	for i := range pairs {
		if pairs[i].Key.Phase == Decode {
			s.DecodeCells++
			if pairs[i].StatusMatch {
				s.StatusMatched++
			}
		}
	}
	for _, m := range Columns() {
		s.Columns = append(s.Columns, summarizeColumn(m, pairs))
	}
	return s
}

func summarizeColumn(m Column, pairs []Pair) ColumnSummary {
	var errs []CellError
	var apes []float64
	for i := range pairs {
		p := &pairs[i]
		if ape := p.APEPct[m]; !math.IsNaN(ape) {
			errs = append(errs, CellError{Key: p.Key, Pred: m.Value(&p.Pred), Meas: m.Value(&p.Meas), APEPct: ape})
			apes = append(apes, ape)
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].APEPct > errs[j].APEPct })
	return ColumnSummary{Column: m, N: len(apes), MAPEPct: MAPE(apes), MdAPEPct: stats.Median(apes),
		Worst: errs[:min(len(errs), WorstCells)]}
}

// APE is the absolute percentage error |pred - meas| / |meas| * 100. It is NaN when either value
// is NaN, 0 when both are 0 and +Inf when only meas is 0.
func APE(pred, meas float64) float64 {
	if math.IsNaN(pred) || math.IsNaN(meas) {
		return math.NaN()
	}
	if meas == 0 {
		if pred == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(pred-meas) / math.Abs(meas) * 100
}

// SignedPct is (pred - meas) / |meas| * 100, with APE's conventions for NaN and zero.
func SignedPct(pred, meas float64) float64 {
	ape := APE(pred, meas)
	if pred < meas {
		return -ape
	}
	return ape
}

// MAPE is the mean of the values (absolute percentage errors), NaN entries skipped; NaN when
// there are none.
func MAPE(apes []float64) float64 {
	sum, n := 0.0, 0
	for _, v := range apes {
		if !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// keyJSON is a key as JSON.
type keyJSON struct {
	Cell        string `json:"cell"`
	Phase       Phase  `json:"phase"`
	Context     string `json:"context"`
	Concurrency int    `json:"concurrency,omitempty"`
}

func newKeyJSON(k Key) keyJSON {
	j := keyJSON{Cell: k.String(), Phase: k.Phase, Context: k.Context, Concurrency: k.Concurrency}
	if k.Phase == Prefill {
		j.Concurrency = 0
	}
	return j
}

// MarshalJSON writes the cell error with null for non-finite numbers.
func (e CellError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		keyJSON
		Pred   *float64 `json:"predicted"`
		Meas   *float64 `json:"measured"`
		APEPct *float64 `json:"ape_pct"`
	}{newKeyJSON(e.Key), nullFloat(e.Pred), nullFloat(e.Meas), nullFloat(e.APEPct)})
}

// MarshalJSON writes the metric summary with null for non-finite numbers.
func (s ColumnSummary) MarshalJSON() ([]byte, error) {
	worst := s.Worst
	if worst == nil {
		worst = []CellError{}
	}
	return json.Marshal(struct {
		Metric   Column      `json:"metric"`
		N        int         `json:"n"`
		MAPEPct  *float64    `json:"mape_pct"`
		MdAPEPct *float64    `json:"mdape_pct"`
		Worst    []CellError `json:"worst"`
	}{s.Column, s.N, nullFloat(s.MAPEPct), nullFloat(s.MdAPEPct), worst})
}

// MarshalJSON writes the summary as {"decode_cells", "status_matched", "metrics"}.
func (s Summary) MarshalJSON() ([]byte, error) {
	metrics := s.Columns
	if metrics == nil {
		metrics = []ColumnSummary{}
	}
	return json.Marshal(struct {
		DecodeCells   int             `json:"decode_cells"`
		StatusMatched int             `json:"status_matched"`
		Metrics       []ColumnSummary `json:"metrics"`
	}{s.DecodeCells, s.StatusMatched, metrics})
}
