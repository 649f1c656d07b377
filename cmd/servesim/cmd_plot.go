package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/plots"
	"github.com/servesim/servesim/report"
)

func plotCmd() *command {
	return &command{
		Name:   "plot",
		NoArgs: true,
		Short:  "draw predicted vs measured figures (PNG at 300 dpi and SVG) into a directory",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var ff figureFlags
			ff.register(fs)
			out := fs.StringP("out", "o", "", "output `directory` (created if needed; required)")
			format := fs.String("format", "png,svg", "image `formats`: png, svg or png,svg")
			return func(args []string) error {
				if *out == "" {
					return usage.Errorf("--out DIR is required")
				}
				formats, err := plots.ParseFormats(*format)
				if err != nil {
					return usage.Errorf("--format: %v", err)
				}
				if err := ff.Check(); err != nil {
					return err
				}
				if err := fsutil.EnsureDir(*out); err != nil {
					return err
				}
				in, err := ff.simulate(e)
				if err != nil {
					return err
				}
				start := time.Now()
				figs := plots.Figures(in.Figures())
				for _, sec := range in.Sections {
					figs = append(figs, plots.Draw(sec.Charts)...)
				}
				files, err := writeFigures(*out, figs, formats)
				if err != nil {
					return err
				}
				width := 0
				for _, w := range files {
					width = max(width, len(w.Path))
				}
				for _, w := range files {
					if _, err := fmt.Fprintf(e.stdout, "%-*s %11s bytes\n", width, w.Path, groupThousands(w.Size)); err != nil {
						return err
					}
				}
				fmt.Fprintf(e.info(), "servesim: drew %d figures (%d files) in %.2f s\n", len(figs), len(figs)*len(formats), time.Since(start).Seconds())
				return nil
			}
		},
	}
}

// writeFigures writes the figures into dir (plots.WriteFiles, through the run's outputs: an
// interrupt removes the unfinished ones).
func writeFigures(dir string, figs []*plots.Figure, formats []plots.Format) ([]plots.File, error) {
	return plots.WriteFiles(outputs.NewBatch(), dir, figs, formats)
}

// drawFigures writes the figures as PNG and SVG into dir and lists them on info.
func drawFigures(e *env, dir string, figs []*plots.Figure) error {
	files, err := writeFigures(dir, figs, []plots.Format{plots.PNG, plots.SVG})
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(e.info(), "servesim: wrote %s (%s bytes)\n", f.Path, groupThousands(f.Size))
	}
	return nil
}

// figureFlags are the flags of the commands that draw a scenario's results (plot, report).
type figureFlags struct {
	sf scenarioFlags
	report.FigureArgs
}

func (f *figureFlags) register(fs *pflag.FlagSet) {
	f.sf.matrix = true
	f.sf.register(fs)
	fs.StringVar(&f.Measured, "measured", "", "measured matrix `file` to compare with (default: the embedded seed for the seed scenario; 'none' to skip), or a vllm bench serve --save-result JSON file")
	fs.StringSliceVar(&f.Explain, "explain", nil, "cells whose step time to split into terms, as `CTX:C,...` (e.g. 8K:1,8K:32,128K:16); default: a few across the matrix; 'none' to skip")
}

// simulate resolves the scenario and runs the figure pipeline (report.FigureArgs.Simulate).
func (f *figureFlags) simulate(e *env) (*report.Input, error) {
	r, err := f.sf.load(e.stderr, e.info())
	if err != nil {
		return nil, err
	}
	prog, finish := progressPrinter(e)
	return f.Simulate(r, f.sf.stepByStep, f.sf.isSeed(), e.info(), prog, finish)
}

// groupThousands writes n with comma separators.
func groupThousands(n int) string { return numfmt.Commas(strconv.Itoa(n)) }
