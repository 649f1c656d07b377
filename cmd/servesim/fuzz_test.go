package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/planner"
	"github.com/servesim/servesim/report"
)

// FuzzPlanListFlags: plan's --max-num-batched-tokens (token counts) and --shard, and plot's
// --explain either parse or give a usage error naming the flag; what parses has no negative
// token count, a shard
// within 0 <= i < n <= planner.MaxShards, explain cells with positive concurrency and a --seed
// that is never negative.
func FuzzPlanListFlags(f *testing.F) {
	for _, s := range []string{"16,32,64", "4096,8K,16K", "0.9,0.92,0.95", "0/8", "7/8", "8K:1,128K:16", " 1 , ,2", "-1", "1e309", "NaN", "9223372036854775808", "0/0", "3/2", "1/65537"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<12 {
			return
		}
		usage := func(name string, err error) {
			if err != nil && !strings.Contains(err.Error(), "--"+name) {
				t.Fatalf("--%s %q: error does not name the flag: %v", name, s, err)
			}
		}
		if sp, err := (&planner.SpaceText{MaxNumBatchedTokens: strings.Split(s, ",")}).Space(); err == nil {
			for _, n := range sp.MaxNumBatchedTokens {
				if n < 0 {
					t.Fatalf("max-num-batched-tokens %q = %v", s, sp.MaxNumBatchedTokens)
				}
			}
		} else {
			usage("max-num-batched-tokens", err)
		}
		if sh, err := parseShard(s); err == nil {
			if sh.Index < 0 || sh.Index >= sh.Count || sh.Count > planner.MaxShards {
				t.Fatalf("parseShard(%q) = %+v", s, sh)
			}
		} else {
			usage("shard", err)
		}
		ff := report.FigureArgs{Explain: []string{s}}
		if err := ff.Check(); err == nil {
			for _, c := range ff.Cells() {
				if c.Concurrency <= 0 || c.Context == "" {
					t.Fatalf("--explain %q: cell %+v", s, c)
				}
			}
		} else {
			usage("explain", err)
		}
		// --seed through pflag, as the command line gives it (its values: scenario.FuzzSeedValue).
		var sf scenarioFlags
		fs := pflag.NewFlagSet("plan", pflag.ContinueOnError)
		fs.SetOutput(&strings.Builder{})
		sf.register(fs)
		_ = fs.Parse([]string{"--seed", s})
	})
}
