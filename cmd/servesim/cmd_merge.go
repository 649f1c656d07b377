package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/planner"
)

func mergeCmd() *command {
	return &command{
		Name:  "merge",
		Args:  "SHARD.json...",
		Short: "combine the --shard outputs of 'servesim plan' into the plan of the whole sweep",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var format formatFlag[planResult]
			format.register(fs, planFormats())
			partial := fs.Bool("partial", false, "merge even when shards are missing (the plan says which)")
			top := fs.Int("top", 25, "hardware layouts shown in the table (`N`)")
			all := fs.Bool("all", false, "table: every configuration that loads, not the best per layout")
			var out outFlag
			out.register(fs, "the merged plan")
			return func(args []string) error {
				if len(args) == 0 {
					return usage.Errorf("give the shard files to merge (JSON from 'servesim plan --shard i/n --format json')")
				}
				if err := format.check(); err != nil {
					return err
				}
				if err := intRange("top", *top, 1, 1<<30, "a positive number of layouts"); err != nil {
					return err
				}
				if err := out.check(); err != nil {
					return err
				}
				var plans []*planner.Plan
				for _, name := range args {
					f, err := fsutil.Open(name, fsutil.MaxPlanBytes)
					if err != nil {
						return err
					}
					p, err := planner.ReadJSON(f, name)
					f.Close()
					if err != nil {
						return err
					}
					plans = append(plans, p)
				}
				p, err := planner.Merge(plans, args, *partial)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "servesim: merged %d plans: %d of %d rows\n", len(plans), len(p.Results), p.Rows)
				var buf bytes.Buffer
				if err := format.write(&buf, planResult{p, planner.TableOptions{Top: *top, All: *all}}); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
