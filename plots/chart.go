package plots

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
)

// Header names a chart: the file stem its figure is written under, the title drawn above it, and
// a caption saying how to read it (the report prints it under the figure).
type Header struct {
	Name    string // file stem, e.g. "decode-total-toks"
	Title   string
	Caption string
	// Subject names what the figure is of, the model and GPUs ("GLM-5.3-Flash-NVFP4 on 4 x
	// RTX-PRO-6000-Server"); it is drawn under the title, so a figure read on its own says so.
	Subject string
}

// Meta returns the header (promoted to every chart that embeds one).
func (h Header) Meta() Header { return h }

// Chart is one figure's data: what it draws, and how to draw it.
type Chart interface {
	// Meta returns the chart's name, title and caption.
	Meta() Header
	// Figure lays the data out as gonum/plot panels with a legend.
	Figure() *Figure
	// WriteData prints what the figure draws, as text (series, points, labels, ranges).
	WriteData(w io.Writer) error
}

// Input is everything the figure set is drawn from.
type Input struct {
	// Predicted is the simulated matrix (required).
	Predicted *matrix.Matrix
	// Measured is the measured matrix to compare with; nil draws predictions only and leaves out
	// the parity plots.
	Measured *matrix.Matrix
	// Explain lists explained cells for the step-time bars; empty leaves the figure out.
	Explain []*llmbench.Explanation
	// Subject is every chart's Header.Subject: the model and GPUs.
	Subject string
}

// withSubject sets the subject of every chart that has none.
func withSubject(cs []Chart, subject string) []Chart {
	for _, c := range cs {
		if h, ok := c.(interface{ setSubject(string) }); ok {
			h.setSubject(subject)
		}
	}
	return cs
}

func (h *Header) setSubject(s string) {
	if h.Subject == "" {
		h.Subject = s
	}
}

// Charts returns the figure set for in, in report order: decode curves, prefill curves, the
// status map, parity plots (when there are measurements), step-time terms (when there are
// explained cells).
func Charts(in Input) []Chart {
	if in.Predicted == nil {
		return nil
	}
	cc := NewContextColors(in.Predicted, in.Measured)
	var out []Chart
	for _, m := range []matrix.Column{matrix.DecodeTotalTokS, matrix.DecodePerRequestTokS, matrix.DecodeTTFTms} {
		if c := Decode(in.Predicted, in.Measured, m, cc); len(c.Series) > 0 {
			out = append(out, c)
		}
	}
	for _, m := range []matrix.Column{matrix.PrefillTokS, matrix.PrefillTTFTms} {
		if c := Prefill(in.Predicted, in.Measured, m, cc); len(c.Series) > 0 {
			out = append(out, c)
		}
	}
	if len(in.Predicted.Decode) > 0 {
		out = append(out, Status(in.Predicted, in.Measured))
	}
	if in.Measured != nil {
		cmp := matrix.Compare(in.Predicted, in.Measured)
		for _, m := range matrix.Columns() {
			if c := Parity(cmp, m, cc); len(c.Points) > 0 {
				out = append(out, c)
			}
		}
	}
	if len(in.Explain) > 0 {
		out = append(out, Terms(in.Explain))
	}
	return withSubject(out, in.Subject)
}

// Figures draws every chart of Charts(in).
func Figures(in Input) []*Figure {
	return Draw(Charts(in))
}

// Draw draws charts, each with its subject under its title.
func Draw(charts []Chart) []*Figure {
	out := make([]*Figure, len(charts))
	for i, c := range charts {
		out[i] = c.Figure()
		out[i].SetSubject(c.Meta().Subject)
	}
	return out
}

// Scale is an axis scale.
type Scale int

const (
	Linear Scale = iota
	Log2         // logarithmic, ticks at powers of two
	Log10        // logarithmic, ticks at 1-2-5 or decades
)

func (s Scale) String() string {
	switch s {
	case Log2:
		return "log2"
	case Log10:
		return "log10"
	}
	return "linear"
}

// Tick is a labelled axis position.
type Tick struct {
	Value float64
	Label string
}

// metricInfo describes a matrix metric for titles, axis labels and file names.
type metricInfo struct {
	stem     string // file-name part
	phase    string // "Decode" or "Prefill"
	quantity string // lower-case noun phrase without the phase
	unit     string
	axis     string // axis label without the unit
	scale    Scale  // natural value scale
}

func infoOf(m matrix.Column) metricInfo {
	switch m {
	case matrix.DecodeTotalTokS:
		return metricInfo{"decode-total-toks", "Decode", "total throughput", "tok/s", "total output throughput, all streams", Linear}
	case matrix.DecodePerRequestTokS:
		return metricInfo{"decode-per-request-toks", "Decode", "per-request speed", "tok/s", "output speed per request", Linear}
	case matrix.DecodeTTFTms:
		return metricInfo{"decode-ttft", "Decode", "time to first token", "ms", "median time to first token", Log10}
	case matrix.DecodeTBTms:
		return metricInfo{"decode-tbt", "Decode", "time between tokens", "ms", "median time between tokens", Linear}
	case matrix.PrefillTokS:
		return metricInfo{"prefill-toks", "Prefill", "throughput", "tok/s", "prompt throughput", Linear}
	case matrix.PrefillTTFTms:
		return metricInfo{"prefill-ttft", "Prefill", "time to first token", "ms", "time to first token", Log10}
	}
	return metricInfo{stem: "metric-" + strconv.Itoa(int(m)), phase: string(m.Phase()), quantity: m.String(), axis: m.String()}
}

// cellName is a cell's short name in figures: "8K×16" for decode, "8K" for prefill.
func cellName(k matrix.Key) string {
	if k.Phase == matrix.Prefill {
		return k.Context
	}
	return k.Context + "×" + strconv.Itoa(k.Concurrency)
}

// num formats a value for data dumps: 5 significant digits, "—" when absent.
func num(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'g', 5, 64)
}

// Thousands formats v rounded to an integer with comma thousands separators ("12,345").
func thousands(v float64) string {
	s := numfmt.Commas(strconv.FormatFloat(math.Abs(math.Round(v)), 'f', 0, 64))
	if v < 0 {
		return "-" + s
	}
	return s
}

// tickText formats an axis tick value: thousands separators for large values, up to 3
// significant digits otherwise.
func tickText(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case a >= 1000 || a == math.Round(a):
		return thousands(v)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// errWriter remembers the first write error so dumps can print without checking each line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

func writeHeader(ew *errWriter, kind string, h Header) {
	ew.printf("%s %s\ntitle: %s\ncaption: %s\n", kind, h.Name, h.Title, h.Caption)
	if h.Subject != "" {
		ew.printf("subject: %s\n", h.Subject)
	}
}
