package report

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

// The seed scenario is simulated once per test binary (a fraction of a second).
var (
	seedOnce  sync.Once
	seedIn    *Input
	seedInErr error
)

func seedInput(t testing.TB) *Input {
	t.Helper()
	seedOnce.Do(func() { seedIn, seedInErr = simulateSeed() })
	if seedInErr != nil {
		t.Fatal(seedInErr)
	}
	in := *seedIn
	return &in
}

func simulateSeed() (*Input, error) {
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{})
	if err != nil {
		return nil, err
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		return nil, err
	}
	res, err := llmbench.RunMatrix(srv, &r.Scenario.Protocol, llmbench.Options{Seed: r.Scenario.Seed})
	if err != nil {
		return nil, err
	}
	meas, err := matrix.LoadBytes(scenario.SeedMeasured(), "embedded seed")
	if err != nil {
		return nil, err
	}
	var capacity bytes.Buffer
	if err := llmbench.WriteCapacity(&capacity, srv, &r.Scenario.Protocol); err != nil {
		return nil, err
	}
	in := &Input{Resolved: r, Predicted: res.Matrix, Measured: meas, MeasuredName: "embedded seed", Capacity: capacity.String()}
	for _, k := range plots.ExplainCells(res.Matrix) {
		c, _ := res.Matrix.Find(k)
		x, err := llmbench.Explain(srv, c.ContextTokens, k.Concurrency)
		if err != nil {
			return nil, err
		}
		in.Explain = append(in.Explain, x)
	}
	fit, err := LoadFit("testdata/fit_report.json")
	if err != nil {
		return nil, err
	}
	in.Fit, in.FitName = fit, "testdata/fit_report.json"
	return in, nil
}

// doc is a parsed page with its elements indexed by id.
type doc struct {
	root *html.Node
	byID map[string]*html.Node
}

func parse(t *testing.T, page []byte) *doc {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("the report does not parse as HTML: %v", err)
	}
	d := &doc{root: root, byID: map[string]*html.Node{}}
	walk(root, func(n *html.Node) {
		if id := attr(n, "id"); id != "" {
			if _, dup := d.byID[id]; dup {
				t.Errorf("duplicate id %q", id)
			}
			d.byID[id] = n
		}
	})
	return d
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	if n.Type != html.ElementNode {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// find returns the first descendant element of n named tag.
func find(n *html.Node, tag string) *html.Node {
	var out *html.Node
	walk(n, func(c *html.Node) {
		if out == nil && c.Type == html.ElementNode && c.Data == tag && c != n {
			out = c
		}
	})
	return out
}

func count(n *html.Node, tag string) int {
	k := 0
	walk(n, func(c *html.Node) {
		if c.Type == html.ElementNode && c.Data == tag {
			k++
		}
	})
	return k
}

func TestReportContents(t *testing.T) {
	in := seedInput(t)
	page, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	d := parse(t, page)

	// Every figure is an inline SVG inside its <figure>.
	charts := plots.Charts(plots.Input{Predicted: in.Predicted, Measured: in.Measured, Explain: in.Explain})
	if len(charts) != 13 {
		t.Errorf("charts: got %d, want 13", len(charts))
	}
	for _, c := range charts {
		fig, ok := d.byID["fig-"+c.Meta().Name]
		if !ok {
			t.Errorf("figure %s missing", c.Meta().Name)
			continue
		}
		svg := find(fig, "svg")
		if svg == nil || attr(svg, "viewBox") == "" {
			t.Errorf("figure %s: no inline <svg> with a viewBox", c.Meta().Name)
			continue
		}
		if count(svg, "text") < 5 || count(svg, "path") < 5 {
			t.Errorf("figure %s: svg has %d texts and %d paths; want a drawn plot", c.Meta().Name, count(svg, "text"), count(svg, "path"))
		}
		if find(fig, "figcaption") == nil {
			t.Errorf("figure %s: no caption", c.Meta().Name)
		}
	}
	if got := count(d.root, "svg"); got != len(charts) {
		t.Errorf("inline svgs: got %d, want %d", got, len(charts))
	}

	// Every table.
	tables := []string{"table-params", "table-summary", "table-prefill", "table-fit-params", "table-fit-errors", "table-fit-cv", "table-fit-worst"}
	for _, g := range []string{"decode-total-toks", "decode-per-request-toks", "decode-ttft", "decode-tbt"} {
		for _, side := range []string{"predicted", "measured", "error"} {
			tables = append(tables, "table-"+g+"-"+side)
		}
	}
	for _, id := range tables {
		n, ok := d.byID[id]
		if !ok || n.Data != "table" {
			t.Errorf("table %s missing", id)
			continue
		}
		if count(n, "tr") < 2 {
			t.Errorf("table %s: no rows", id)
		}
	}
	// The decode grids have a row per context plus the header.
	if got := count(d.byID["table-decode-total-toks-error"], "tr"); got != 1+len(in.Measured.DecodeContexts()) {
		t.Errorf("error grid rows: got %d, want %d", got, 1+len(in.Measured.DecodeContexts()))
	}
	for _, id := range []string{"scenario", "capacity", "accuracy", "matrix", "figures", "explain", "fit"} {
		if _, ok := d.byID[id]; !ok {
			t.Errorf("section %s missing", id)
		}
	}

	// Self-contained: no script, no external resource, inline CSS.
	walk(d.root, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "script", "link", "img", "iframe", "object":
			t.Errorf("<%s> in a self-contained report", n.Data)
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "src", "href", "xlink:href":
				if !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s %s=%q>: the report must not reference other files", n.Data, a.Key, a.Val)
				}
			}
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s %s>: no JavaScript", n.Data, a.Key)
			}
		}
	})
	if count(d.root, "style") != 1 {
		t.Errorf("want one inline <style>")
	}
	for _, s := range []string{in.Resolved.Deployment.Hardware.GPU.Name, "max_num_seqs", "kv_cache_size_tokens", "gemm_eff", "at a bound"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("the report lacks %q", s)
		}
	}
}

func TestReportDeterministic(t *testing.T) {
	in := seedInput(t)
	a, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Render(in)
	if !bytes.Equal(a, b) {
		t.Error("two renders of the same input differ")
	}
}

func TestReportPredictedOnly(t *testing.T) {
	in := seedInput(t)
	in.Measured, in.Fit, in.Explain, in.Capacity = nil, nil, nil, ""
	page, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	d := parse(t, page)
	for _, id := range []string{"accuracy", "capacity", "fit", "explain", "table-summary", "table-decode-total-toks-error",
		"table-decode-total-toks-measured", "fig-parity-decode-total-toks", "fig-step-terms"} {
		if _, ok := d.byID[id]; ok {
			t.Errorf("%s present without its input", id)
		}
	}
	for _, id := range []string{"table-decode-total-toks-predicted", "table-prefill", "fig-decode-total-toks", "fig-status-map"} {
		if _, ok := d.byID[id]; !ok {
			t.Errorf("%s missing", id)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	in := seedInput(t)
	for name, bad := range map[string]*Input{
		"nil":          nil,
		"no scenario":  {Predicted: in.Predicted},
		"no predicted": {Resolved: in.Resolved},
	} {
		if _, err := Render(bad); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

func TestReadFit(t *testing.T) {
	for _, tc := range []struct{ name, in, err string }{
		{"empty object", `{}`, `no "parameters"`},
		{"syntax", `{"parameters": `, "not a fit report"},
		{"toml", "[params]\nx = 1\n", "JSON syntax error"},
		{"wrong type", `{"parameters": []}`, "not a fit report"},
	} {
		_, err := ReadFit(strings.NewReader(tc.in), "f.json")
		if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "f.json: ") {
			t.Errorf("%s: got %v, want an error naming f.json containing %q", tc.name, err, tc.err)
		}
	}
	rep, err := LoadFit("testdata/fit_report.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Parameters) != 4 || len(rep.CV) != 2 || rep.Test == nil {
		t.Errorf("fit fixture: %d parameters, %d splits, test %v", len(rep.Parameters), len(rep.CV), rep.Test)
	}
	// Fitted first, each in parameter-table order.
	if got := strings.Join(paramOrder(rep.Parameters), " "); got != "non_torch_gib mem_bw_eff gemm_eff cudagraph_gib" {
		t.Errorf("parameter order: %s", got)
	}
	// -1 (no cells of the metric in the set) shows as absent, not as an error of -1 %.
	fv := buildFit(rep, "fit.json")
	last := fv.CV.Rows[len(fv.CV.Rows)-1]
	if got := last[6].Text; got != "—" {
		t.Errorf("CV test prefill MAPE of -1: shown as %q, want —", got)
	}
	if _, err := LoadFit("testdata/missing.json"); err == nil {
		t.Error("missing file: want an error")
	}
}

func TestInlineSVG(t *testing.T) {
	svg := `<?xml version="1.0"?>
<!-- Generated by SVGo and Plotinum VG -->
<svg width="576pt" height="324pt" viewBox="0 0 576 324"
	xmlns="http://www.w3.org/2000/svg">
<text style="font-family:Liberation Sans;font-size:9px">1 &lt; 2</text>
</svg>
`
	got := inlineSVG([]byte(svg), "A & B")
	for _, want := range []string{`<svg role="img" width="100%"`, `viewBox="0 0 576 324"`, "<title>A &amp; B</title>",
		`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`} {
		if !strings.Contains(got, want) {
			t.Errorf("inline svg lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "<?xml") || strings.Contains(got, "576pt") {
		t.Errorf("inline svg keeps the prolog or the fixed size:\n%s", got)
	}
}

func TestNumbers(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		d    int
		want string
	}{{1234567.891, 0, "1,234,568"}, {1234.5, 1, "1,234.5"}, {-0.04, 1, "0.0"}, {-1500, 0, "-1,500"}, {12, 2, "12.00"}} {
		if got := fnum(tc.v, tc.d); got != tc.want {
			t.Errorf("fnum(%g, %d) = %q, want %q", tc.v, tc.d, got, tc.want)
		}
	}
	for ape, want := range map[float64]string{5: "err-good", 10: "err-fair", 24.9: "err-fair", 25: "err-poor"} {
		if got := errClass(ape); got != want {
			t.Errorf("errClass(%g) = %q, want %q", ape, got, want)
		}
	}
}

// Example-style smoke test of Write for the package documentation.
func TestWrite(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, seedInput(t)); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("<!DOCTYPE html>")) || !bytes.HasSuffix(buf.Bytes(), []byte("</html>\n")) {
		t.Errorf("the page does not start with <!DOCTYPE html> and end with </html>")
	}
	if dir := os.Getenv("REPORT_OUT"); dir != "" {
		os.WriteFile(dir+"/report.html", buf.Bytes(), 0o644)
	}
}
