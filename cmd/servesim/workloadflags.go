package main

import (
	"github.com/spf13/pflag"

	"github.com/servesim/servesim/workload"
)

// registerOverrides adds --rate and --requests, which change the workload of flag.
func registerOverrides(fs *pflag.FlagSet, o *workload.Overrides, flag string) {
	fs.Float64Var(&o.Rate, "rate", 0, "with "+flag+": an open loop's constant arrival rate instead of its own, `requests/s`")
	fs.IntVar(&o.Requests, "requests", 0, "with "+flag+": the number of requests of an open or closed loop instead of its own (`N`)")
}

// registerSLO adds the --slo-* objectives.
func registerSLO(fs *pflag.FlagSet, a *workload.SLOArgs) {
	fs.Float64Var(&a.TTFTms, "slo-ttft-ms", 0, "objective: time to first token at the quantile, at most `ms`")
	fs.Float64Var(&a.TPOTms, "slo-tpot-ms", 0, "objective: time per output token at the quantile, at most `ms`")
	fs.Float64Var(&a.E2Ems, "slo-e2e-ms", 0, "objective: end-to-end latency at the quantile, at most `ms`")
	fs.Float64Var(&a.UserTokS, "slo-user-tok-s", 0, "objective: per-user decode rate (1000 / TPOT at the quantile), at least `tok/s`")
	fs.Float64Var(&a.Quantile, "slo-quantile", 0, "`fraction` of requests that must meet each objective (default 0.9: p90)")
}
