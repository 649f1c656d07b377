package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/servesim/servesim/calibration"
	"github.com/servesim/servesim/internal/buildinfo"
	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// Input is everything the report shows. Resolved and Predicted are required.
type Input struct {
	// Resolved is the simulated scenario with its parameters.
	Resolved *scenario.Resolved
	// Predicted is the simulated matrix.
	Predicted *matrix.Matrix
	// Measured is the matrix to compare with (nil: predictions only); MeasuredName says where it
	// came from.
	Measured     *matrix.Matrix
	MeasuredName string
	// Capacity is the text of llmbench.WriteCapacity (empty: the section is left out); CapacityData
	// the same as data, for the capacity tables (nil: the text only).
	Capacity     string
	CapacityData *Capacity
	// Sections are further results with their figures (a workload run, a plan), after the
	// matrix.
	Sections []Section
	// Explain lists explained cells (the step-time figure and their term tables).
	Explain []*llmbench.Explanation
	// Fit is a calibration report (servesim fit --report); FitName says where it came from.
	Fit     *calibration.Report
	FitName string
	// Workload is a workload run on the scenario's server (report --workload) and Plan a plan
	// (report --plan): the page's opening answers them first, the benchmark's peak after.
	Workload *WorkloadRun
	Plan     *planner.Plan
}

// WorkloadRun is a workload and what it measured on the scenario's server; Measured is the vllm
// bench serve result file it reproduces (nil: none).
type WorkloadRun struct {
	Spec     *workload.Spec
	Metrics  *workload.Metrics
	Measured *vllmbench.Result
}

// Section is a further result in the report: a title, a note, preformatted text and figures.
type Section struct {
	ID, Title, Note string
	Text            string
	Charts          []plots.Chart
}

// Write renders the report as one HTML page.
func Write(w io.Writer, in *Input) error {
	data, err := Render(in)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

//go:embed page.html.tmpl style.css
var pageFiles embed.FS

// pageFile is an embedded file of the page.
func pageFile(name string) string {
	data, err := pageFiles.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("report: embedded %s: %v", name, err))
	}
	return string(data)
}

// pageTemplate is the page's template, parsed afresh for each page.
func pageTemplate() *template.Template {
	return template.Must(template.New("page").Parse(pageFile("page.html.tmpl")))
}

// Render builds the page in memory.
func Render(in *Input) ([]byte, error) {
	if in == nil || in.Resolved == nil || in.Resolved.Scenario == nil || in.Resolved.Deployment == nil {
		return nil, fmt.Errorf("report: no resolved scenario")
	}
	if in.Predicted == nil {
		return nil, fmt.Errorf("report: no predicted matrix")
	}
	p, err := buildPage(in)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return buf.Bytes(), nil
}

// page is the template's data.
type page struct {
	CSS      template.CSS
	Title    string
	Subtitle string
	Nav      []kv // anchor, text
	Scenario []kvSection
	Params   *table
	Measured []kv
	Launch   string // the measured run's launch command
	Capacity string
	Answer   []kv
	CapTable *table
	MemTable *table
	Sections []sectionView
	Version  string
	Summary  *table
	Statuses string
	Prefill  *table
	Grids    []gridSet
	Figures  []figureView
	Explain  []explainView
	Fit      *fitView
}

type kv struct{ K, V string }

type kvSection struct {
	Title string
	Rows  []kv
}

// table is an HTML table; each cell carries its text, a CSS class and a tooltip.
type table struct {
	ID      string
	Caption string
	Head    []string
	Rows    [][]cellView
}

type cellView struct {
	Text  string
	Class string
	Title string
}

type gridSet struct {
	ID, Title, Note string
	Tables          []*table
}

type figureView struct {
	ID, Title, Caption string
	SVG                template.HTML
}

type sectionView struct {
	ID, Title, Note, Text string
	Figures               []figureView
}

type explainView struct {
	Cell string
	Text string
}

func buildPage(in *Input) (*page, error) {
	r := in.Resolved
	p := &page{CSS: template.CSS(pageFile("style.css")), Title: "servesim report", Subtitle: Subject(r) + " · " + r.Scenario.Name, Version: buildinfo.Version()}
	p.Answer = answerRows(in)
	p.Nav = append(p.Nav, kv{"answer", "Answer"})
	if in.CapacityData != nil {
		p.CapTable = capacityTable(in.CapacityData)
		p.MemTable = memoryTable(in.CapacityData)
	}
	p.Nav = append(p.Nav, kv{"scenario", "Scenario"})
	p.Scenario = scenarioSections(r)
	prior, _ := priors.Of(r.Deployment)
	p.Params = paramsTable(r.Params, prior)
	if in.Measured != nil {
		p.Measured = measuredRows(in.Measured, in.MeasuredName)
		p.Launch = in.Measured.Info.LaunchCommand
	}
	if in.Capacity != "" || in.CapacityData != nil {
		p.Capacity = in.Capacity
		p.Nav = append(p.Nav, kv{"capacity", "Capacity"})
	}
	if in.Measured != nil {
		cmp := matrix.Compare(in.Predicted, in.Measured)
		p.Summary = summaryTable(cmp)
		p.Statuses = statusLine(cmp)
		p.Nav = append(p.Nav, kv{"accuracy", "Accuracy"})
	}
	p.Prefill = prefillTable(in.Predicted, in.Measured)
	p.Grids = decodeGrids(in.Predicted, in.Measured)
	p.Nav = append(p.Nav, kv{"matrix", "Matrix"})

	figs, err := figureViews(plots.Figures(in.Figures()))
	if err != nil {
		return nil, err
	}
	p.Figures = figs
	if len(p.Figures) > 0 {
		p.Nav = append(p.Nav, kv{"figures", "Figures"})
	}
	for _, sec := range in.Sections {
		fv, err := figureViews(plots.Draw(sec.Charts))
		if err != nil {
			return nil, err
		}
		p.Sections = append(p.Sections, sectionView{ID: sec.ID, Title: sec.Title, Note: sec.Note, Text: sec.Text, Figures: fv})
		p.Nav = append(p.Nav, kv{sec.ID, sec.Title})
	}
	for _, x := range in.Explain {
		var buf bytes.Buffer
		if err := x.Write(&buf); err != nil {
			return nil, err
		}
		p.Explain = append(p.Explain, explainView{Cell: matrix.Label(x.Context) + " × " + strconv.Itoa(x.Concurrency), Text: buf.String()})
	}
	if len(p.Explain) > 0 {
		p.Nav = append(p.Nav, kv{"explain", "Step time"})
	}
	if in.Fit != nil {
		p.Fit = buildFit(in.Fit, in.FitName)
		p.Nav = append(p.Nav, kv{"fit", "Fit"})
	}
	// The navigation follows the page: the scenario comes last.
	for i, n := range p.Nav {
		if n.K == "scenario" {
			p.Nav = append(append(p.Nav[:i:i], p.Nav[i+1:]...), n)
			break
		}
	}
	return p, nil
}

// figureViews inlines figures as SVG.
func figureViews(figs []*plots.Figure) ([]figureView, error) {
	var out []figureView
	for _, f := range figs {
		svg, err := f.Bytes(plots.SVG)
		if err != nil {
			return nil, fmt.Errorf("report: figure %s: %w", f.Name, err)
		}
		title := f.Title
		if f.Subject != "" {
			title += " — " + f.Subject
		}
		out = append(out, figureView{ID: "fig-" + f.Name, Title: f.Title, Caption: f.Caption, SVG: template.HTML(inlineSVG(svg, title))})
	}
	return out, nil
}

// fontFallback lists common fonts with the metrics of a Liberation family (Sans, Serif, Mono),
// then the generic family.
func fontFallback(family string) string {
	switch family {
	case "Sans":
		return "Arial,Helvetica,sans-serif"
	case "Serif":
		return "'Times New Roman',Times,serif"
	case "Mono":
		return "'Courier New',Courier,monospace"
	}
	return ""
}

// inlineSVG prepares a vgsvg document for inlining: no XML prolog, a size that follows the page
// (the viewBox keeps the aspect), fonts that fall back to the reader's sans-serif, and a title
// for screen readers.
func inlineSVG(svg []byte, title string) string {
	svgProlog := regexp.MustCompile(`(?s)^.*?(<svg\b)`)
	svgSize := regexp.MustCompile(`^<svg width="[^"]*" height="[^"]*"`)
	fontFamily := regexp.MustCompile(`font-family:(Liberation (Sans|Serif|Mono));`)
	s := svgProlog.ReplaceAllString(string(svg), "$1")
	s = svgSize.ReplaceAllString(s, `<svg role="img" width="100%" preserveAspectRatio="xMidYMid meet"`)
	s = fontFamily.ReplaceAllStringFunc(s, func(m string) string {
		fam := fontFamily.FindStringSubmatch(m)
		return "font-family:'" + fam[1] + "'," + fontFallback(fam[2]) + ";"
	})
	if i := strings.Index(s, ">"); i >= 0 {
		s = s[:i+1] + "\n<title>" + template.HTMLEscapeString(title) + "</title>" + s[i+1:]
	}
	return s
}

func scenarioSections(r *scenario.Resolved) []kvSection {
	d := r.Deployment
	g := d.Hardware.GPU
	hw := kvSection{Title: "Hardware", Rows: []kv{
		{"GPU", g.Name},
		{"count", strconv.Itoa(d.Hardware.Count)},
		{"memory per GPU", fmt.Sprintf("%s GiB (%s GB %s)", fnum(g.MemoryGiB, 2), fnum(g.MemoryGB, 0), g.MemoryKind)},
		{"memory bandwidth", fmt.Sprintf("%s GB/s", fnum(g.BandwidthGBps, 0))},
		{"dense tensor peak", fmt.Sprintf("BF16 %s, FP8 %s, FP4 %s TFLOPS", fnum(g.BF16TFLOPS, 0), fnum(g.FP8TFLOPS, 0), fnum(g.FP4TFLOPS, 0))},
		{"GPU link", fmt.Sprintf("%s, %s GB/s per direction, %s µs", g.Link, fnum(g.LinkGBps, 0), fnum(g.LinkLatencyUS, 1))},
	}}
	m := d.Model
	mod := kvSection{Title: "Model", Rows: []kv{
		{"name", m.Name},
		{"family", m.Family},
		{"layers", strconv.Itoa(m.NumLayers())},
		{"hidden size", strconv.Itoa(m.Hidden)},
		{"vocabulary", strconv.Itoa(m.Vocab)},
	}}
	if d.Drafter != nil {
		mod.Rows = append(mod.Rows, kv{"drafter", fmt.Sprintf("%s (%d layers)", d.Drafter.Name, d.Drafter.NumLayers())})
	}
	eng := kvSection{Title: "Engine flags", Rows: fieldRows(reflect.ValueOf(d.Engine), "")}
	proto := kvSection{Title: "Benchmark protocol", Rows: fieldRows(reflect.ValueOf(r.Scenario.Protocol), "")}
	src := kvSection{Title: "Run", Rows: []kv{
		{"scenario", r.Scenario.Name},
		{"random seed", strconv.FormatUint(r.Scenario.Seed, 10)},
		{"parameters", r.ParamsFrom},
		{"parameter source", string(r.Source)},
		howSure(r),
	}}
	return []kvSection{src, hw, mod, eng, proto}
}

// fieldRows lists a struct's fields by their TOML keys (nested structs as "outer.inner"),
// leaving out empty optional fields.
func fieldRows(v reflect.Value, prefix string) []kv {
	var out []kv
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("toml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fv := v.Field(i)
		if fv.Kind() == reflect.Struct {
			out = append(out, fieldRows(fv, prefix+name+".")...)
			continue
		}
		if strings.Contains(opts, "omitempty") && fv.IsZero() {
			continue
		}
		out = append(out, kv{prefix + name, valueText(fv)})
	}
	return out
}

func valueText(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = valueText(v.Index(i))
		}
		return strings.Join(parts, ", ")
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.String:
		if v.String() == "" {
			return "—"
		}
	}
	return fmt.Sprint(v.Interface())
}

// paramsTable lists the parameters used beside the deployment's priors (its GPU generation's,
// engine's and model's, not the generic ones): bold marks a value that differs from that prior.
func paramsTable(p, prior param.Values) *table {
	t := &table{ID: "table-params", Caption: "Step-time and memory parameters used for the predictions (bold: moved from the deployment's prior)",
		Head: []string{"parameter", "value", "unit", "prior", "bounds", "meaning"}}
	for i, d := range param.Defs() {
		class := ""
		if gnum(p[i]) != gnum(prior[i]) {
			class = "moved"
		}
		t.Rows = append(t.Rows, []cellView{
			{Text: d.Name, Class: "name"}, {Text: gnum(p[i]), Class: "num " + class}, {Text: d.Unit},
			{Text: gnum(prior[i]), Class: "num"}, {Text: "[" + gnum(d.Lo) + ", " + gnum(d.Hi) + "]", Class: "num"},
			{Text: d.Meaning, Class: "meaning"},
		})
	}
	return t
}

func measuredRows(m *matrix.Matrix, name string) []kv {
	in := m.Info
	rows := []kv{{"source", name}}
	add := func(k, v string) {
		if v != "" && v != "0" {
			rows = append(rows, kv{k, v})
		}
	}
	add("model", in.Model)
	if in.GPU != "" {
		add("GPUs", fmt.Sprintf("%d × %s", in.GPUCount, in.GPU))
	}
	add("engine", strings.TrimSpace(in.Engine+" "+in.EngineVersion))
	add("quantization", in.Quantization)
	add("benchmark", in.BenchTool)
	if in.DurationS > 0 {
		add("time per cell", fnum(in.DurationS, 0)+" s")
	}
	if in.MaxOutput > 0 {
		add("max output", fnum(float64(in.MaxOutput), 0)+" tokens")
	}
	if in.KVCacheSizeTokens > 0 {
		add("kv_cache_size_tokens", fnum(float64(in.KVCacheSizeTokens), 0))
	}
	if in.LaunchCommand != "" {
		rows = append(rows, kv{"launch command", "below the cards"})
	}
	return rows
}

// fnum formats v with thousands separators and the given decimals; "—" for NaN.
func fnum(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	if v < 0 && strings.Trim(s, "0.") != "" {
		return "-" + numfmt.Commas(s) // no "-0.0" for a value that rounds to zero
	}
	return numfmt.Commas(s)
}

// gnum formats a parameter value compactly (up to 4 significant digits).
func gnum(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
