package matrix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// cellJSON is a Cell as JSON: absent (NaN, -1) values are null.
type cellJSON struct {
	Phase          Phase    `json:"phase"`
	Context        string   `json:"context"`
	ContextTokens  int      `json:"context_tokens"`
	Concurrency    int      `json:"concurrency"`
	Status         Status   `json:"status"`
	TotalTokS      *float64 `json:"total_tok_s"`
	PerRequestTokS *float64 `json:"per_request_tok_s"`
	TTFTms         *float64 `json:"ttft_ms"`
	TBTms          *float64 `json:"tbt_ms"`
	AvgActive      *float64 `json:"avg_active"`
	Completed      *int     `json:"completed"`
	OutputTokens   *int     `json:"output_tokens"`
	MeasuredS      *float64 `json:"measured_s"`
}

// nullFloat is nil for NaN and infinities (JSON has no such numbers), else &v.
func nullFloat(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func nullCount(n int) *int {
	if n < 0 {
		return nil
	}
	return &n
}

func floatOrNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func countOrAbsent(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// MarshalJSON writes the cell with null for absent values (non-finite floats are absent too).
func (c Cell) MarshalJSON() ([]byte, error) {
	return json.Marshal(cellJSON{
		Phase: c.Phase, Context: c.Context, ContextTokens: c.ContextTokens, Concurrency: c.Concurrency,
		Status: c.Status, TotalTokS: nullFloat(c.TotalTokS), PerRequestTokS: nullFloat(c.PerRequestTokS),
		TTFTms: nullFloat(c.TTFTms), TBTms: nullFloat(c.TBTms), AvgActive: nullFloat(c.AvgActive),
		Completed: nullCount(c.Completed), OutputTokens: nullCount(c.OutputTokens), MeasuredS: nullFloat(c.MeasuredS),
	})
}

// UnmarshalJSON reads a cell; null and missing measurements are absent. Unknown fields, an
// unknown phase or status are errors.
func (c *Cell) UnmarshalJSON(data []byte) error {
	var j cellJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	phase, err := parsePhase(string(j.Phase))
	if err != nil {
		return err
	}
	status, err := ParseStatus(string(j.Status))
	if err != nil {
		return err
	}
	*c = Cell{Phase: phase, Context: j.Context, ContextTokens: j.ContextTokens, Concurrency: j.Concurrency,
		Status: status, TotalTokS: floatOrNaN(j.TotalTokS), PerRequestTokS: floatOrNaN(j.PerRequestTokS),
		TTFTms: floatOrNaN(j.TTFTms), TBTms: floatOrNaN(j.TBTms), AvgActive: floatOrNaN(j.AvgActive),
		Completed: countOrAbsent(j.Completed), OutputTokens: countOrAbsent(j.OutputTokens),
		MeasuredS: floatOrNaN(j.MeasuredS)}
	return nil
}

// WriteJSON writes the matrix as indented JSON (two spaces, HTML not escaped), absent values as
// null, empty cell lists as [].
func WriteJSON(w io.Writer, m *Matrix) error {
	return writeIndented(w, jsonMatrix(m))
}

// jsonMatrix returns a shallow copy of m whose cell lists are non-nil, so they print as [].
func jsonMatrix(m *Matrix) *Matrix {
	out := *m
	if out.Prefill == nil {
		out.Prefill = []Cell{}
	}
	if out.Decode == nil {
		out.Decode = []Cell{}
	}
	return &out
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// matrixJSON is the outer shape, read before the cells so cell errors can name their index.
type matrixJSON struct {
	Info    Info              `json:"info"`
	Prefill []json.RawMessage `json:"prefill"`
	Decode  []json.RawMessage `json:"decode"`
}

// ParseJSON parses a matrix as WriteJSON writes it, or the predicted matrix of a result as
// WriteResultJSON writes it ('servesim matrix --format json'). Unknown fields and trailing data are errors;
// a cell without context_tokens gets its label times 1,024. Errors name the line (syntax) or the
// cell ("decode[3]").
func ParseJSON(r io.Reader, name string) (*Matrix, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &ParseError{Name: name, Want: "readable input", Err: err}
	}
	// A result (WriteResultJSON) gives its predicted matrix.
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) == nil && probe["predicted"] != nil && probe["info"] == nil {
		var rj struct {
			Predicted json.RawMessage `json:"predicted"`
		}
		if err := json.Unmarshal(data, &rj); err == nil && len(rj.Predicted) > 0 && string(rj.Predicted) != "null" {
			data = rj.Predicted
		}
	}
	var mj matrixJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&mj); err != nil {
		return nil, jsonError(name, data, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		line := lineAt(data, dec.InputOffset())
		return nil, &ParseError{Name: name, Line: line, Found: "data after the matrix", Want: "one JSON object"}
	}
	m := &Matrix{Info: mj.Info}
	if m.Prefill, err = jsonCells(name, Prefill, mj.Prefill); err != nil {
		return nil, err
	}
	if m.Decode, err = jsonCells(name, Decode, mj.Decode); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, &ParseError{Name: name, Want: "a consistent matrix", Err: err}
	}
	return m, nil
}

func jsonCells(name string, phase Phase, raws []json.RawMessage) ([]Cell, error) {
	if raws == nil {
		return nil, nil
	}
	cells := make([]Cell, len(raws))
	for i, raw := range raws {
		c := &cells[i]
		if err := json.Unmarshal(raw, c); err != nil {
			return nil, &ParseError{Name: name, Column: fmt.Sprintf("%s[%d]", phase, i), Want: "a cell", Err: err}
		}
		if c.ContextTokens == 0 {
			c.ContextTokens, _ = ParseContext(c.Context)
		}
	}
	return cells, nil
}

// jsonError locates a decoding error by line where encoding/json gives an offset.
func jsonError(name string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &ParseError{Name: name, Line: lineAt(data, syn.Offset), Want: "well-formed JSON", Err: err}
	case errors.As(err, &typ):
		return &ParseError{Name: name, Line: lineAt(data, typ.Offset), Column: typ.Field,
			Found: "a JSON " + typ.Value, Want: "a " + typ.Type.String()}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &ParseError{Name: name, Found: "incomplete input", Want: "a JSON object {\"info\":..., \"prefill\":[...], \"decode\":[...]}"}
	}
	return &ParseError{Name: name, Want: "a matrix object", Err: err}
}

// lineAt returns the 1-based line of a byte offset.
func lineAt(data []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(data)))
	return bytes.Count(data[:offset], []byte{'\n'}) + 1
}
