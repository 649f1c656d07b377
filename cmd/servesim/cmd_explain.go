package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
)

func explainCmd() *command {
	return &command{
		Name:   "explain",
		NoArgs: true,
		Short:  "split a cell's decode step and prefill chunk into cost terms, and say which resource binds",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			ctx := fs.String("context", "8K", "context per request: `tokens` or KiB of tokens (8K, 1019K)")
			conc := fs.Int("concurrency", 1, "simultaneous requests (`C`)")
			var out outFlag
			out.register(fs, "the explanation")
			return func(args []string) error {
				if _, err := matrix.ParseContext(*ctx); err != nil {
					return usage.Errorf("--context: %v", err)
				}
				if *conc <= 0 {
					return usage.Errorf("--concurrency %d: must be a positive integer", *conc)
				}
				if err := out.check(); err != nil {
					return err
				}
				r, srv, err := sf.loadServer(e.stderr, e.info())
				if err != nil {
					return err
				}
				// The matrix's fitting and capacity rules: --context 1019K is the matrix's
				// 1019K row, and an Over capacity cell says so.
				x, err := llmbench.ExplainCell(srv, &r.Scenario.Protocol, *ctx, *conc)
				if err != nil {
					return fmt.Errorf("--context %s: %w", *ctx, err)
				}
				var buf bytes.Buffer
				if err := x.Write(&buf); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
