package plots

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/plot/cmpimg"
	"gonum.org/v1/plot/vg"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/scenario"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The fixtures are frozen: a predicted seed matrix and four explained cells saved from the
// simulator (testdata/pred_seed.json, testdata/explain_seed.json), and the embedded measured
// seed page. Plots only draw, so their goldens must not move when the model is recalibrated.
var (
	fixtureOnce sync.Once
	fixture     Input
	fixtureErr  error
)

func seedInput(t testing.TB) Input {
	t.Helper()
	fixtureOnce.Do(func() {
		fixture, fixtureErr = loadFixture()
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixture
}

func loadFixture() (Input, error) {
	pred, err := matrix.Load("testdata/pred_seed.json")
	if err != nil {
		return Input{}, err
	}
	meas, err := matrix.LoadBytes(scenario.SeedMeasured(), "embedded seed")
	if err != nil {
		return Input{}, err
	}
	data, err := os.ReadFile("testdata/explain_seed.json")
	if err != nil {
		return Input{}, err
	}
	var xs []*llmbench.Explanation
	if err := json.Unmarshal(data, &xs); err != nil {
		return Input{}, err
	}
	return Input{Predicted: pred, Measured: meas, Explain: xs}, nil
}

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plots -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./plots -update rewrites it); got:\n%s", path, got)
	}
}

// TestChartData checks what every figure of the seed set draws against golden text files.
func TestChartData(t *testing.T) {
	charts := Charts(seedInput(t))
	want := []string{"decode-total-toks", "decode-per-request-toks", "decode-ttft", "prefill-toks", "prefill-ttft",
		"status-map", "parity-decode-total-toks", "parity-decode-per-request-toks", "parity-decode-ttft",
		"parity-decode-tbt", "parity-prefill-toks", "parity-prefill-ttft", "step-terms"}
	var names []string
	for _, c := range charts {
		names = append(names, c.Meta().Name)
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("charts:\n got %v\nwant %v", names, want)
	}
	for _, c := range charts {
		t.Run(c.Meta().Name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := c.WriteData(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("golden", c.Meta().Name+".txt"), buf.Bytes())
		})
	}
}

// TestPredictedOnly: without measurements there are no parity plots and no measured series.
func TestPredictedOnly(t *testing.T) {
	in := seedInput(t)
	in.Measured = nil
	for _, c := range Charts(in) {
		name := c.Meta().Name
		if strings.HasPrefix(name, "parity-") {
			t.Errorf("parity chart %s without measurements", name)
		}
		if lc, ok := c.(*LineChart); ok {
			for _, s := range lc.Series {
				if s.Kind == MeasuredMarkers {
					t.Errorf("%s: measured series %q without measurements", name, s.Label)
				}
			}
		}
		if sm, ok := c.(*StatusMap); ok && (sm.HasMeasured || sm.Compared != 0) {
			t.Errorf("status map compares without measurements: %+v", sm)
		}
	}
	if Charts(Input{}) != nil {
		t.Errorf("Charts without a predicted matrix: want nil")
	}
}

// smallMatrix is a 2-context matrix with an Error cell inside the 8K row and an Over-capacity
// cell at the end of the 16K row.
func smallMatrix(perReq func(ctx string, c int) float64) *matrix.Matrix {
	m := &matrix.Matrix{}
	for _, ctx := range []struct {
		label  string
		tokens int
	}{{"8K", 8192}, {"16K", 16384}} {
		p := matrix.NewCell(matrix.Prefill, ctx.label, ctx.tokens, 1)
		p.Status, p.TotalTokS, p.TTFTms = matrix.Valid, 10000, float64(ctx.tokens)/10
		m.Prefill = append(m.Prefill, p)
		for _, c := range []int{1, 2, 4, 8} {
			cell := matrix.NewCell(matrix.Decode, ctx.label, ctx.tokens, c)
			switch {
			case ctx.label == "8K" && c == 2:
				cell.Status = matrix.Error
			case ctx.label == "16K" && c == 8:
				cell.Status = matrix.OverCapacity
			default:
				cell.Status = matrix.Valid
				if c == 4 {
					cell.Status = matrix.RequestsQueued
				}
				cell.PerRequestTokS = perReq(ctx.label, c)
				cell.TotalTokS = cell.PerRequestTokS * float64(c)
				cell.TTFTms, cell.TBTms = 100*float64(c), 1000/cell.PerRequestTokS
			}
			m.Decode = append(m.Decode, cell)
		}
	}
	return m
}

func TestDecodeGapsAndStatuses(t *testing.T) {
	pred := smallMatrix(func(string, int) float64 { return 100 })
	meas := smallMatrix(func(string, int) float64 { return 80 })
	lc := Decode(pred, meas, matrix.DecodePerRequestTokS, NewContextColors(pred, meas))
	if len(lc.Series) != 4 {
		t.Fatalf("series: got %d, want 4 (2 contexts x predicted/measured)", len(lc.Series))
	}
	s := lc.Series[0] // 8K predicted: 1, (2 Error), 4, 8
	if s.Label != "8K" || s.Kind != PredictedLine || len(s.Points) != 3 {
		t.Fatalf("8K predicted: got %+v", s)
	}
	if s.Points[0].Break || !s.Points[1].Break || s.Points[2].Break {
		t.Errorf("breaks: got %v %v %v, want false true false", s.Points[0].Break, s.Points[1].Break, s.Points[2].Break)
	}
	if s.Points[1].Status != matrix.RequestsQueued {
		t.Errorf("8K x 4 status: got %q, want queued", s.Points[1].Status)
	}
	if got := lc.Series[2]; got.Label != "16K" || len(got.Points) != 3 || got.Points[2].X != 4 {
		t.Errorf("16K predicted: got %+v, want 3 points ending at C=4 (8 is over capacity)", got)
	}
	if lc.Series[0].Color == lc.Series[2].Color || lc.Series[0].Color != lc.Series[1].Color {
		t.Errorf("colours: 8K pred %d, 8K meas %d, 16K pred %d: want one colour per context",
			lc.Series[0].Color, lc.Series[1].Color, lc.Series[2].Color)
	}

	// Every metric equal up to 25 %: per-request is 25 % off, so every cell is labelled...
	pc := Parity(matrix.Compare(pred, meas), matrix.DecodePerRequestTokS, NewContextColors(pred, meas))
	if pc.N != 6 || math.Abs(pc.MAPEPct-25) > 1e-9 {
		t.Errorf("parity: n %d MAPE %v, want 6 and 25", pc.N, pc.MAPEPct)
	}
	for _, p := range pc.Points {
		if p.Label != "" {
			t.Errorf("%s: APE exactly 25 %% must not be labelled (got %q)", p.Cell, p.Label)
		}
	}
}

func TestStatusMismatch(t *testing.T) {
	pred := smallMatrix(func(string, int) float64 { return 100 })
	meas := smallMatrix(func(string, int) float64 { return 100 })
	meas.Decode[3].Status = matrix.RequestsQueued // 8K x 8: predicted Valid
	sm := Status(pred, meas)
	if sm.Compared != 8 || sm.Matched != 7 {
		t.Fatalf("compared %d matched %d, want 8 and 7", sm.Compared, sm.Matched)
	}
	for _, c := range sm.Cells {
		want := c.Context == "8K" && c.Concurrency == 8
		if c.Mismatch != want {
			t.Errorf("%s x %d: mismatch %v, want %v", c.Context, c.Concurrency, c.Mismatch, want)
		}
	}
	var buf bytes.Buffer
	if err := sm.WriteData(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "golden/small-status-map.txt", buf.Bytes())
	// The mismatch outline and its legend entry are drawn.
	if _, err := sm.Figure().Bytes(SVG); err != nil {
		t.Fatal(err)
	}
}

// TestEncode draws every figure in both formats: PNG at 300 dpi of the figure's size, SVG as
// well-formed XML, and the same bytes when drawn twice.
func TestEncode(t *testing.T) {
	for _, f := range Figures(seedInput(t)) {
		svg1, err := f.Bytes(SVG)
		if err != nil {
			t.Fatal(err)
		}
		svg2, _ := f.Bytes(SVG)
		if !bytes.Equal(svg1, svg2) {
			t.Errorf("%s: SVG differs between two draws", f.Name)
		}
		if err := wellFormed(svg1); err != nil {
			t.Errorf("%s: SVG: %v", f.Name, err)
		}
		if !bytes.Contains(svg1, []byte(xmlEscape(f.Panels[0].Title.Text))) {
			t.Errorf("%s: SVG lacks the title %q", f.Name, f.Panels[0].Title.Text)
		}
	}
	// PNG for two figures only: encoding 300 dpi rasters is the slow part.
	for _, f := range Figures(seedInput(t))[:2] {
		data, err := f.Bytes(PNG)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		w, h := f.size()
		if got, want := img.Bounds().Dx(), int(math.Round(float64(w/vg.Inch)*DPI)); got != want {
			t.Errorf("%s: PNG width %d px, want %d (300 dpi)", f.Name, got, want)
		}
		if got, want := img.Bounds().Dy(), int(math.Round(float64(h/vg.Inch)*DPI)); got != want {
			t.Errorf("%s: PNG height %d px, want %d", f.Name, got, want)
		}
	}
}

func xmlEscape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return strings.ReplaceAll(b.String(), "&#34;", "&#34;")
}

func wellFormed(data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestImages compares two figures with golden PNGs, approximately (cmpimg's YIQ distance),
// at 72 dpi to keep the goldens small.
func TestImages(t *testing.T) {
	const dpi = 72
	figs := map[string]*Figure{}
	for _, f := range Figures(seedInput(t)) {
		figs[f.Name] = f
	}
	for _, name := range []string{"decode-total-toks", "status-map", "parity-decode-ttft"} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := figs[name].EncodeDPI(&buf, PNG, dpi); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "img", name+".png")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./plots -update to create it)", err)
			}
			// delta 0.05: anti-aliasing differences pass, a moved line or label does not.
			ok, err := cmpimg.EqualApprox("png", buf.Bytes(), want, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				got := filepath.Join(t.TempDir(), name+".png")
				os.WriteFile(got, buf.Bytes(), 0o644)
				t.Errorf("%s differs from %s (got written to %s)", name, path, got)
			}
		})
	}
}

func TestParseFormats(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  bool
	}{
		{"png", "png", false},
		{"png,svg", "png svg", false},
		{" SVG , png ,svg", "svg png", false},
		{"pdf", "", true},
		{"", "", true},
		{",", "", true},
	} {
		got, err := ParseFormats(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseFormats(%q): err %v, want error %v", tc.in, err, tc.err)
			continue
		}
		var s []string
		for _, f := range got {
			s = append(s, string(f))
		}
		if strings.Join(s, " ") != tc.want {
			t.Errorf("ParseFormats(%q) = %v, want %s", tc.in, s, tc.want)
		}
	}
}

func TestTicks(t *testing.T) {
	labels := func(min, max float64) string {
		var s []string
		for _, tk := range (logTicks{}).Ticks(min, max) {
			if tk.Label != "" {
				s = append(s, tk.Label)
			}
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		min, max float64
		want     string
	}{
		{100, 10000, "100 200 500 1,000 2,000 5,000 10,000"},
		{5000, 20000, "5,000 10,000 20,000"},
		{7500, 16000, "8,000 9,000 10,000 12,000 15,000"}, // narrow: a finer labelled sequence
		{0.1, 1e6, "0.1 1 10 100 1,000 10,000 100,000 1,000,000"},
		{0, 10, ""},
	} {
		if got := labels(tc.min, tc.max); got != tc.want {
			t.Errorf("log ticks %g..%g: got %q, want %q", tc.min, tc.max, got, tc.want)
		}
	}
	linear := func(min, max float64) string {
		var s []string
		for _, tk := range (linearTicks{}).Ticks(min, max) {
			if tk.Label != "" {
				s = append(s, tk.Label)
			}
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		min, max float64
		want     string
	}{
		{0, 1578.9, "0 200 400 600 800 1,000 1,200 1,400"},
		{0, 199, "0 25 50 75 100 125 150 175"},
		{0, 16332, "0 2,500 5,000 7,500 10,000 12,500 15,000"},
		{0, 72.7, "0 10 20 30 40 50 60 70"},
		{0, 0.9, "0 0.2 0.4 0.6 0.8"},
	} {
		if got := linear(tc.min, tc.max); got != tc.want {
			t.Errorf("linear ticks %g..%g: got %q, want %q", tc.min, tc.max, got, tc.want)
		}
	}
	for _, tc := range []struct{ lo, hi, wlo, whi float64 }{
		{148, 7100, 148, 7100},
		{148, 8000, 148, 10000},
		{4300, 17000, 4300, 20000},
		{1000, 2000, 1000, 2000},
		{33, 218, 33, 218},
		{110, 450, 100, 500},
	} {
		if lo, hi := logRange(tc.lo, tc.hi); math.Abs(lo-tc.wlo) > 1e-9 || math.Abs(hi-tc.whi) > 1e-9 {
			t.Errorf("logRange(%g, %g) = %g, %g; want %g, %g", tc.lo, tc.hi, lo, hi, tc.wlo, tc.whi)
		}
	}
	// A narrow CDF panel labels about 16 characters (the E2E panel's "2,000 5,000 10,000 20,000"
	// ran together): the powers of ten first, then the 5s, then the 2s.
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{10, 60, "10 20 50"},
		{2, 20, "2 5 10 20"},
		{1000, 20000, "1,000 10,000"},
		{90, 4000, "100 500 1,000"},
		{300, 700, ""}, // one tick: the automatic ones
	} {
		var s []string
		for _, tk := range sparseLogTicks(tc.lo, tc.hi) {
			if tk.Label != "" {
				s = append(s, tk.Label)
			}
		}
		if got := strings.Join(s, " "); got != tc.want {
			t.Errorf("sparse log ticks %g..%g: got %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
	for v, want := range map[float64]string{0: "0", 5: "5", 1500: "1,500", 1234567: "1,234,567", 0.25: "0.25", -2500: "-2,500"} {
		if got := tickText(v); got != want {
			t.Errorf("tickText(%g) = %q, want %q", v, got, want)
		}
	}
}

// BenchmarkPlotAll draws the whole seed figure set and encodes each figure as 300 dpi PNG and
// as SVG: what `servesim plot --format png,svg` does after the simulation.
func BenchmarkPlotAll(b *testing.B) {
	in, err := loadFixture()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range Figures(in) {
			for _, format := range []Format{PNG, SVG} {
				if err := f.Encode(io.Discard, format); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// TestRender writes every figure to $PLOTS_OUT for inspection (skipped when unset).
func TestRender(t *testing.T) {
	dir := os.Getenv("PLOTS_OUT")
	if dir == "" {
		t.Skip("set PLOTS_OUT=DIR to write the seed figures for inspection")
	}
	for _, f := range Figures(seedInput(t)) {
		for _, format := range []Format{PNG, SVG} {
			data, err := f.Bytes(format)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f.Name+"."+string(format)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestExplainCells(t *testing.T) {
	var got []string
	for _, k := range ExplainCells(seedInput(t).Predicted) {
		got = append(got, k.String())
	}
	want := "decode 8K x 1, decode 8K x 32, decode 128K x 16, decode 1019K x 1"
	if strings.Join(got, ", ") != want {
		t.Errorf("ExplainCells(seed) = %v, want %s", got, want)
	}
	if ExplainCells(&matrix.Matrix{}) != nil || ExplainCells(nil) != nil {
		t.Errorf("ExplainCells of an empty matrix: want nil")
	}
}

// FuzzParseFormats: a list either parses into known, distinct formats or fails; no panics.
func FuzzParseFormats(f *testing.F) {
	for _, s := range []string{"png", "png,svg", " SVG ,png", "", ",,", "pdf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseFormats(s)
		if err != nil {
			return
		}
		seen := map[Format]bool{}
		for _, f := range got {
			if (f != PNG && f != SVG) || seen[f] {
				t.Fatalf("ParseFormats(%q) = %v", s, got)
			}
			seen[f] = true
		}
		if len(got) == 0 {
			t.Fatalf("ParseFormats(%q): no formats and no error", s)
		}
	})
}
