package main

import (
	"bytes"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/llmbench"
)

func capacityCmd() *command {
	return &command{
		Name:   "capacity",
		NoArgs: true,
		Short:  "show the per-GPU memory budget, KV-cache layout, kv_cache_size_tokens and max concurrency per context",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			sf := scenarioFlags{matrix: true}
			sf.register(fs)
			var out outFlag
			out.register(fs, "the report")
			return func(args []string) error {
				if err := out.check(); err != nil {
					return err
				}
				r, srv, err := sf.loadServer(e.stderr, e.info())
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := llmbench.WriteCapacity(&buf, srv, &r.Scenario.Protocol); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
