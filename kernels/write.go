package kernels

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/servesim/servesim/model/param"
)

// WriteTables writes the report's tables for people.
func (r *Report) WriteTables(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	section := func(title string, ss []Summary) {
		fmt.Fprintf(tw, "\n%s\t\t\t\t\t\n", title)
		fmt.Fprintf(tw, "group\tn\tMdAPE\tMAPE\tmedian bias\t\n")
		for _, s := range ss {
			fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%.1f%%\t%+.1f%%\t\n", s.Key, s.N, 100*s.MdAPE, 100*s.MAPE, 100*s.Bias)
		}
	}
	section("GEMMs (attn_pre_proj, attn_post_proj, mlp_up_proj, mlp_down_proj) over tokens and TP", r.GEMM)
	section("GEMMs by model file", r.GEMMByModel)
	section("GEMMs by TP degree", r.GEMMByTP)
	section("GEMMs by tokens", r.GEMMByTokens)
	section("operators", r.ByOp)
	section("collectives, messages >= 1 MB", r.NetworkLarge)
	section("collectives by group size and message size", r.Network)
	return tw.Flush()
}

// WriteCSV writes every point.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"group", "model", "op", "tokens", "tp_or_ranks", "bytes", "measured_ms", "predicted_ms", "ape"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, p := range r.Points {
		_ = cw.Write([]string{p.Group, p.Model, p.Op, strconv.Itoa(p.Tokens), strconv.Itoa(p.TP), g(p.Bytes), g(p.Measured * 1e3), g(p.Predicted * 1e3), g(p.APE())})
	}
	cw.Flush()
	return cw.Error()
}

// WriteFitted writes fitted priors for people: per group the values and the fit's median error.
func WriteFitted(w io.Writer, fs []Fitted) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "profile\tGPU\tn\tMdAPE\tparameters\n")
	for _, f := range fs {
		s := ""
		for _, d := range param.Defs() {
			if v, ok := f.Values[d.ID]; ok {
				s += fmt.Sprintf("%s=%.4g ", d.Name, v)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%s\n", f.Group, f.GPU, f.N, 100*f.MdAPE, s)
	}
	return tw.Flush()
}

// Run is the kernels command on the profiles p: with fit, the priors the profiles determine
// (WriteFitted); else the check of every profiled kernel, as tables or, with csv, every point.
func Run(w io.Writer, p *Profiles, o Options, fit, csv bool) error {
	if fit {
		fc, err := FitCompute(p, o)
		if err != nil {
			return err
		}
		fn, err := FitNetwork(p, o)
		if err != nil {
			return err
		}
		return WriteFitted(w, append(fc, fn...))
	}
	pts, err := Check(p, o)
	if err != nil {
		return err
	}
	rep := NewReport(pts)
	if csv {
		return rep.WriteCSV(w)
	}
	fmt.Fprintf(w, "servesim kernels: %d files, %d points, at the GPU generations' priors\n", len(p.Files), len(pts))
	return rep.WriteTables(w)
}
