package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/fleet"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// fleetPlanJob is one search: the fewest replicas of one deployment option under one policy.
type fleetPlanJob struct {
	Index    int          `json:"index"`
	Option   string       `json:"option"`
	Policy   fleet.Policy `json:"policy"`
	Replicas int          `json:"replicas"` // the answer (0: none up to the search's limit)
	Limit    int          `json:"limit"`
	// At the answer and at one replica fewer (the boundary: it must miss).
	At     *fleetPlanPoint `json:"at,omitempty"`
	Fewer  *fleetPlanPoint `json:"fewer,omitempty"`
	Runs   int             `json:"runs"`
	Result *fleet.Result   `json:"result,omitempty"` // the answer's run
}

// fleetPlanPoint is one run's verdict.
type fleetPlanPoint struct {
	Replicas       int     `json:"replicas"`
	Met            bool    `json:"met"`
	Status         string  `json:"status"`
	TTFTms         float64 `json:"ttft_ms"` // at the objectives' quantile
	TPOTms         float64 `json:"tpot_ms"`
	Rejected       int64   `json:"router_rejected"`
	CostPerHour    float64 `json:"cost_per_hour"`
	CostPerMTokens float64 `json:"cost_per_million_output_tokens"`
}

// fleetPlanFile is what --shard writes and --merge reads.
type fleetPlanFile struct {
	Traffic  string         `json:"traffic"`
	Requests int            `json:"requests"`
	SpanS    float64        `json:"span_s"`
	SLO      workload.SLO   `json:"slo"`
	Jobs     []fleetPlanJob `json:"jobs"`
	Total    int            `json:"total_jobs"`
	Shard    string         `json:"shard,omitempty"`
	Options  []string       `json:"options"`
	Policies []fleet.Policy `json:"policies"`
}

func planPolicies(s string) ([]fleet.Policy, error) {
	if s == "all" {
		return fleet.Policies(), nil
	}
	var out []fleet.Policy
	for _, n := range strings.Split(s, ",") {
		p, err := fleet.ParsePolicy(strings.TrimSpace(n))
		if err != nil {
			return nil, usagef("--router: %v", err)
		}
		out = append(out, p)
	}
	return out, nil
}

type planOption struct {
	name string
	r    *scenario.Resolved
	srv  *sim.Server
}

func runFleetPlan(e *env, buf *bytes.Buffer, out *outFlag, ff *fleetFlags, fs *pflag.FlagSet, sf *scenarioFlags, r *scenario.Resolved, srv *sim.Server, t *fleetTraffic) error {
	if !t.spec.SLO.Any() {
		return usagef("--plan: give the objectives (--slo-ttft-ms, --slo-tpot-ms, ... and --slo-quantile)")
	}
	if ff.autoMax > 0 {
		return usagef("--plan searches fixed replica counts: it does not take --autoscale-max")
	}
	if ff.maxReplicas < 1 {
		return usagef("--max-replicas %d: want at least 1", ff.maxReplicas)
	}
	pols, err := planPolicies(ff.router)
	if err != nil {
		return err
	}
	opts := []planOption{{describeDeployment(r), r, srv}}
	for _, p := range ff.options {
		s, err := scenario.Load(p)
		if err != nil {
			return fmt.Errorf("--option: %w", err)
		}
		ro, err := s.Resolve(scenario.ResolveOptions{})
		if err != nil {
			return fmt.Errorf("--option %s: %w", p, err)
		}
		so, err := sim.NewServer(ro.Deployment, ro.Params)
		if err != nil {
			return fmt.Errorf("--option %s: %w", p, err)
		}
		opts = append(opts, planOption{describeDeployment(ro) + " (" + p + ")", ro, so})
	}
	shardI, shardN := 0, 1
	if ff.shard != "" {
		sh, err := parseShard(ff.shard)
		if err != nil {
			return err
		}
		shardI, shardN = sh.Index, sh.Count
	}
	file := fleetPlanFile{Traffic: t.spec.Name, Requests: t.requests, SpanS: t.last.Seconds(), SLO: t.spec.SLO, Total: len(opts) * len(pols), Shard: ff.shard, Policies: pols}
	for _, o := range opts {
		file.Options = append(file.Options, o.name)
	}
	idx := 0
	for _, o := range opts {
		for _, p := range pols {
			if idx%shardN == shardI {
				fmt.Fprintf(e.info(), "servesim: searching %s, router %s\n", o.name, p)
				job, err := searchReplicas(e, ff, o, p, t, idx)
				if err != nil {
					return err
				}
				file.Jobs = append(file.Jobs, *job)
			}
			idx++
		}
	}
	if ff.shard != "" {
		b, err := json.MarshalIndent(file, "", " ")
		if err != nil {
			return err
		}
		buf.Write(append(b, '\n'))
		return out.write(e.stdout, buf)
	}
	if err := renderFleetPlan(buf, &file, ff.format); err != nil {
		return err
	}
	return out.write(e.stdout, buf)
}

// searchReplicas finds the fewest replicas meeting the objectives: doubling from one, then
// bisecting; the answer n meets and n - 1 was run and misses.
func searchReplicas(e *env, ff *fleetFlags, o planOption, p fleet.Policy, t *fleetTraffic, idx int) (*fleetPlanJob, error) {
	job := &fleetPlanJob{Index: idx, Option: o.name, Policy: p, Limit: ff.maxReplicas}
	cache := map[int]*fleetPlanPoint{}
	results := map[int]*fleet.Result{}
	try := func(n int) (*fleetPlanPoint, error) {
		if pt, ok := cache[n]; ok {
			return pt, nil
		}
		cfg := ff.config(o.r, o.srv, n, p, t)
		res, err := runFleet(e, cfg, t)
		if err != nil {
			return nil, err
		}
		job.Runs++
		m := res.Fleet
		pt := &fleetPlanPoint{Replicas: n, Status: m.Status, Rejected: res.Rejected, CostPerHour: res.CostPerHour, CostPerMTokens: res.CostPerMTokens}
		q := t.spec.SLO.Q()
		pt.Met = m.Goodput != nil && m.Goodput.Met && res.Rejected == 0
		if m.Goodput != nil {
			for _, c := range m.Goodput.Checks {
				switch c.Name {
				case "ttft_ms":
					pt.TTFTms = c.Value
				case "tpot_ms":
					pt.TPOTms = c.Value
				}
			}
		}
		_ = q
		fmt.Fprintf(e.info(), "servesim:   %d replica(s): %s\n", n, map[bool]string{true: "meets", false: "misses"}[pt.Met])
		cache[n] = pt
		results[n] = res
		return pt, nil
	}
	lo, hi := 0, 0 // lo misses (0: nothing to run), hi meets
	for n := 1; n <= ff.maxReplicas; n *= 2 {
		pt, err := try(n)
		if err != nil {
			return nil, err
		}
		if pt.Met {
			hi = n
			break
		}
		lo = n
		if n*2 > ff.maxReplicas && n < ff.maxReplicas {
			n = ff.maxReplicas / 2 // the next doubling tries the limit itself
		}
	}
	if hi == 0 {
		return job, nil
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		pt, err := try(mid)
		if err != nil {
			return nil, err
		}
		if pt.Met {
			hi = mid
		} else {
			lo = mid
		}
	}
	job.Replicas = hi
	job.At = cache[hi]
	job.Result = results[hi]
	if hi > 1 {
		job.Fewer = cache[hi-1]
	}
	return job, nil
}

func mergeFleetPlan(buf *bytes.Buffer, ff *fleetFlags) error {
	var merged *fleetPlanFile
	seen := map[int]string{}
	for _, p := range ff.merge {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("--merge: %w", err)
		}
		var f fleetPlanFile
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return fmt.Errorf("--merge %s: not a fleet plan shard: %v", p, err)
		}
		if merged == nil {
			head := f
			head.Jobs, head.Shard = nil, ""
			merged = &head
		} else if f.Total != merged.Total || f.Traffic != merged.Traffic || f.Requests != merged.Requests || f.SLO != merged.SLO {
			return fmt.Errorf("--merge %s: a shard of another plan (traffic %s, %d searches; the first file's: %s, %d)", p, f.Traffic, f.Total, merged.Traffic, merged.Total)
		}
		for _, j := range f.Jobs {
			if prev, ok := seen[j.Index]; ok {
				return fmt.Errorf("--merge %s: search %d is also in %s", p, j.Index, prev)
			}
			seen[j.Index] = p
			merged.Jobs = append(merged.Jobs, j)
		}
	}
	if merged == nil {
		return usagef("--merge: no file")
	}
	if len(merged.Jobs) != merged.Total {
		return fmt.Errorf("--merge: %d of the plan's %d searches present: a shard is missing", len(merged.Jobs), merged.Total)
	}
	for i := range merged.Jobs {
		for j := i + 1; j < len(merged.Jobs); j++ {
			if merged.Jobs[j].Index < merged.Jobs[i].Index {
				merged.Jobs[i], merged.Jobs[j] = merged.Jobs[j], merged.Jobs[i]
			}
		}
	}
	return renderFleetPlan(buf, merged, ff.format)
}

// renderFleetPlan prints the plan: every search's answer, the best, and the best's run.
func renderFleetPlan(w *bytes.Buffer, f *fleetPlanFile, format string) error {
	if format == "json" {
		f.Shard = ""
		b, err := json.MarshalIndent(f, "", " ")
		if err != nil {
			return err
		}
		w.Write(append(b, '\n'))
		return nil
	}
	slo := f.SLO
	fmt.Fprintf(w, "fleet plan: %s (%s requests); objectives at p%g:", f.Traffic, groupThousands(f.Requests), 100*slo.Q())
	if slo.TTFTms > 0 {
		fmt.Fprintf(w, " TTFT <= %g ms", slo.TTFTms)
	}
	if slo.TPOTms > 0 {
		fmt.Fprintf(w, " TPOT <= %g ms", slo.TPOTms)
	}
	if slo.E2Ems > 0 {
		fmt.Fprintf(w, " E2E <= %g ms", slo.E2Ems)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "option\trouter\treplicas\tTTFT\tTPOT\tone fewer\tits TTFT\tits TPOT\t$/h\t$/M out tok\truns")
	var best *fleetPlanJob
	for i := range f.Jobs {
		j := &f.Jobs[i]
		if j.Replicas == 0 {
			fmt.Fprintf(tw, "%s\t%s\tmore than %d\t\t\t\t\t\t\t\t%d\n", j.Option, j.Policy, j.Limit, j.Runs)
			continue
		}
		fewer, ft, fp := "-", "", ""
		if j.Fewer != nil {
			fewer = fmt.Sprintf("%d misses", j.Fewer.Replicas)
			if j.Fewer.Status != "ok" {
				fewer += " (" + j.Fewer.Status + ")"
			}
			ft, fp = ms(j.Fewer.TTFTms), ms(j.Fewer.TPOTms)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.3f\t%d\n", j.Option, j.Policy, j.Replicas, ms(j.At.TTFTms), ms(j.At.TPOTms), fewer, ft, fp, j.At.CostPerHour, j.At.CostPerMTokens, j.Runs)
		if best == nil || j.At.CostPerHour < best.At.CostPerHour || (j.At.CostPerHour == best.At.CostPerHour && j.Replicas < best.Replicas) {
			best = j
		}
	}
	tw.Flush()
	if best == nil {
		fmt.Fprintln(w, "\nno option meets the objectives within the search's limit")
		return nil
	}
	// The fewest replicas by policy, for the best option.
	var byPolicy []string
	fewest := 0
	for _, j := range f.Jobs {
		if j.Option == best.Option && j.Replicas > 0 && (fewest == 0 || j.Replicas < fewest) {
			fewest = j.Replicas
		}
	}
	for _, j := range f.Jobs {
		if j.Option == best.Option && j.Replicas == fewest {
			byPolicy = append(byPolicy, string(j.Policy))
		}
	}
	fmt.Fprintf(w, "\nanswer: %d replicas of %s, router %s: $%.2f/h, $%.3f per million output tokens\n", best.Replicas, best.Option, best.Policy, best.At.CostPerHour, best.At.CostPerMTokens)
	fmt.Fprintf(w, "fewest replicas for that option: %d, with %s\n", fewest, strings.Join(byPolicy, ", "))
	if best.Fewer != nil {
		fmt.Fprintf(w, "boundary: %d replicas miss (TTFT %s, TPOT %s, status %s); %d meet (TTFT %s, TPOT %s)\n", best.Fewer.Replicas, ms(best.Fewer.TTFTms), ms(best.Fewer.TPOTms), best.Fewer.Status,
			best.Replicas, ms(best.At.TTFTms), ms(best.At.TPOTms))
	}
	if best.Result != nil {
		fmt.Fprintln(w)
		t := &fleetTraffic{spec: &workload.Spec{Name: f.Traffic}, requests: f.Requests, last: vtime.Time(vtime.FromSeconds(f.SpanS))}
		writeFleetText(w, best.Result, t, best.Option)
	}
	return nil
}
