package main

import (
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/describe"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/report"
	"github.com/servesim/servesim/validate"
)

// format is one way of writing a result of type T.
type format[T any] struct {
	name  string
	write func(w io.Writer, v T) error
}

// formatFlag is --format for the results of type T: the flag, its check and the writing. The
// formats of each result type are listed once, below; a new format is one more entry there, and
// every command writing that type accepts it, documents it in --help and checks it.
type formatFlag[T any] struct {
	value   string
	formats []format[T]
}

// register adds --format; the first format is the default.
func (f *formatFlag[T]) register(fs *pflag.FlagSet, formats []format[T]) {
	f.formats = formats
	fs.StringVar(&f.value, "format", formats[0].name, "output `format`: "+f.names())
}

// names lists the formats as "a, b or c".
func (f *formatFlag[T]) names() string {
	n := make([]string, len(f.formats))
	for i, x := range f.formats {
		n[i] = x.name
	}
	if len(n) == 1 {
		return n[0]
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// check is the usage error for a --format value that is not one of the formats.
func (f *formatFlag[T]) check() error {
	for _, x := range f.formats {
		if x.name == f.value {
			return nil
		}
	}
	return usage.Errorf("--format %q: want %s", f.value, f.names())
}

// write writes v in the chosen format.
func (f *formatFlag[T]) write(w io.Writer, v T) error {
	for _, x := range f.formats {
		if x.name == f.value {
			return x.write(w, v)
		}
	}
	return f.check()
}

// matrixResult is a simulated matrix, the measurements to compare it with (nil: none), its 80 %
// intervals, where its parameters come from, and whether the CSV carries the comparison
// (--compare).
type matrixResult struct {
	pred, meas *matrix.Matrix
	band       matrix.Band
	params     matrix.Parameters
	compare    bool
}

func matrixFormats() []format[matrixResult] {
	return []format[matrixResult]{
		{"table", func(w io.Writer, m matrixResult) error { return matrix.RenderBand(w, m.pred, m.meas, m.band, "table") }},
		{"markdown", func(w io.Writer, m matrixResult) error {
			return matrix.RenderBand(w, m.pred, m.meas, m.band, "markdown")
		}},
		// The predicted matrix in the documented columns, or with --compare the measured and
		// error columns too; then the intervals and the parameter source.
		{"csv", func(w io.Writer, m matrixResult) error {
			return matrix.WriteResultCSV(w, m.pred, m.meas, m.params, m.band, m.compare)
		}},
		// One schema with or without measurements.
		{"json", func(w io.Writer, m matrixResult) error { return matrix.WriteResultJSON(w, m.pred, m.meas, m.params) }},
	}
}

// planResult is a plan and how its table is cut.
type planResult struct {
	plan  *planner.Plan
	table planner.TableOptions
}

func planFormats() []format[planResult] {
	return []format[planResult]{
		{"table", func(w io.Writer, p planResult) error { return p.plan.WriteTable(w, p.table) }},
		{"csv", func(w io.Writer, p planResult) error { return p.plan.WriteCSV(w) }},
		{"json", func(w io.Writer, p planResult) error { return p.plan.WriteJSON(w) }},
	}
}

func workloadFormats() []format[report.WorkloadResult] {
	return []format[report.WorkloadResult]{
		{"table", func(w io.Writer, x report.WorkloadResult) error { return x.WriteText(w) }},
		{"csv", func(w io.Writer, x report.WorkloadResult) error { return x.WriteCSV(w) }},
		{"json", func(w io.Writer, x report.WorkloadResult) error { return x.WriteJSON(w) }},
	}
}

// gpuResult is GPUs from the catalog: a listing, or one GPU shown in full.
type gpuResult struct {
	gpus []hardware.GPU
	show bool
}

func gpuFormats() []format[gpuResult] {
	return []format[gpuResult]{
		{"table", func(w io.Writer, g gpuResult) error {
			if g.show {
				return describe.GPU(w, &g.gpus[0])
			}
			return describe.GPUTable(w, g.gpus)
		}},
		{"toml", func(w io.Writer, g gpuResult) error { return describe.CatalogTOML(w, g.gpus) }},
	}
}

func validateFormats() []format[*validate.Report] {
	return []format[*validate.Report]{
		{"table", func(w io.Writer, r *validate.Report) error { return r.WriteTable(w) }},
		{"csv", func(w io.Writer, r *validate.Report) error { return r.WriteCSV(w) }},
		{"json", func(w io.Writer, r *validate.Report) error { return r.WriteJSON(w) }},
	}
}
