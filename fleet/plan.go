package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// PlanJob is one search: the fewest replicas of one deployment option under one policy.
type PlanJob struct {
	Index    int    `json:"index"`
	Option   string `json:"option"`
	Policy   Policy `json:"policy"`
	Replicas int    `json:"replicas"` // the answer (0: none up to the search's limit)
	Limit    int    `json:"limit"`
	// At the answer and at one replica fewer (the boundary: it must miss).
	At     *PlanPoint `json:"at,omitempty"`
	Fewer  *PlanPoint `json:"fewer,omitempty"`
	Runs   int        `json:"runs"`
	Result *Result    `json:"result,omitempty"` // the answer's run
}

// PlanPoint is one run's verdict.
type PlanPoint struct {
	Replicas       int     `json:"replicas"`
	Met            bool    `json:"met"`
	Status         string  `json:"status"`
	TTFTms         float64 `json:"ttft_ms"` // at the objectives' quantile
	TPOTms         float64 `json:"tpot_ms"`
	Rejected       int64   `json:"router_rejected"`
	CostPerHour    float64 `json:"cost_per_hour"`
	CostPerMTokens float64 `json:"cost_per_million_output_tokens"`
}

// PlanFile is a fleet plan: its traffic and objectives, and every search's answer; a shard of
// one holds some of the searches (Shard: "i/n").
type PlanFile struct {
	Traffic  string       `json:"traffic"`
	Requests int          `json:"requests"`
	SpanS    float64      `json:"span_s"`
	SLO      workload.SLO `json:"slo"`
	Jobs     []PlanJob    `json:"jobs"`
	Total    int          `json:"total_jobs"`
	Shard    string       `json:"shard,omitempty"`
	Options  []string     `json:"options"`
	Policies []Policy     `json:"policies"`
	// RefreshS is the router's refresh interval (Config.RefreshS; 0: exact).
	RefreshS float64 `json:"router_refresh_s,omitempty"`
}

// ParsePolicies reads a comma-separated list of policies, or "all".
func ParsePolicies(s string) ([]Policy, error) {
	if s == "all" {
		return Policies(), nil
	}
	var out []Policy
	for _, n := range strings.Split(s, ",") {
		p, err := ParsePolicy(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// PlanOption is one deployment a plan considers: its name in the plan, the name of its
// replicas' group, and its server.
type PlanOption struct {
	Name, Group string
	Server      *sim.Server
}

// Planner answers "how many replicas?": for each option and policy, the fewest replicas whose
// run on Traffic meets its objectives without rejecting a request, up to MaxReplicas.
type Planner struct {
	Traffic     *Traffic
	Settings    Settings
	MaxReplicas int
	// Run runs one configuration (the caller's progress reporting around Run).
	Run func(Config) (*Result, error)
	// Log receives a line per search and per run.
	Log io.Writer
}

// Plan runs the searches of shard i of n (every search whose index mod n is i; shard names it,
// "" for the whole plan) over opts x pols, in that order.
func (pl *Planner) Plan(opts []PlanOption, pols []Policy, i, n int, shard string) (*PlanFile, error) {
	t := pl.Traffic
	file := PlanFile{Traffic: t.Spec.Name, Requests: t.Requests, SpanS: t.Last.Seconds(), SLO: t.Spec.SLO, Total: len(opts) * len(pols), Shard: shard, Policies: pols,
		RefreshS: pl.Settings.RefreshS}
	for _, o := range opts {
		file.Options = append(file.Options, o.Name)
	}
	idx := 0
	for _, o := range opts {
		for _, p := range pols {
			if idx%n == i {
				fmt.Fprintf(pl.Log, "servesim: searching %s, router %s\n", o.Name, p)
				job, err := pl.search(o, p, idx)
				if err != nil {
					return nil, err
				}
				file.Jobs = append(file.Jobs, *job)
			}
			idx++
		}
	}
	return &file, nil
}

// search finds the fewest replicas meeting the objectives: doubling from one, then
// bisecting; the answer n meets and n - 1 was run and misses.
func (pl *Planner) search(o PlanOption, p Policy, idx int) (*PlanJob, error) {
	t := pl.Traffic
	job := &PlanJob{Index: idx, Option: o.Name, Policy: p, Limit: pl.MaxReplicas}
	cache := map[int]*PlanPoint{}
	results := map[int]*Result{}
	try := func(n int) (*PlanPoint, error) {
		if pt, ok := cache[n]; ok {
			return pt, nil
		}
		res, err := pl.Run(pl.Settings.Config(o.Group, o.Server, n, p, t))
		if err != nil {
			return nil, err
		}
		job.Runs++
		m := res.Fleet
		pt := &PlanPoint{Replicas: n, Status: m.Status, Rejected: res.Rejected, CostPerHour: res.CostPerHour, CostPerMTokens: res.CostPerMTokens}
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
		fmt.Fprintf(pl.Log, "servesim:   %d replica(s): %s\n", n, map[bool]string{true: "meets", false: "misses"}[pt.Met])
		cache[n] = pt
		results[n] = res
		return pt, nil
	}
	lo, hi := 0, 0 // lo misses (0: nothing to run), hi meets
	for n := 1; n <= pl.MaxReplicas; n *= 2 {
		pt, err := try(n)
		if err != nil {
			return nil, err
		}
		if pt.Met {
			hi = n
			break
		}
		lo = n
		if n*2 > pl.MaxReplicas && n < pl.MaxReplicas {
			n = pl.MaxReplicas / 2 // the next doubling tries the limit itself
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

// MergePlans merges the shards in files into the whole plan, refusing shards of another plan,
// a search present twice and a missing one.
func MergePlans(files []string) (*PlanFile, error) {
	var merged *PlanFile
	seen := map[int]string{}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("--merge: %w", err)
		}
		var f PlanFile
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("--merge %s: not a fleet plan shard: %v", p, err)
		}
		if merged == nil {
			head := f
			head.Jobs, head.Shard = nil, ""
			merged = &head
		} else if f.Total != merged.Total || f.Traffic != merged.Traffic || f.Requests != merged.Requests || f.SLO != merged.SLO || f.RefreshS != merged.RefreshS {
			return nil, fmt.Errorf("--merge %s: a shard of another plan (traffic %s, %d searches; the first file's: %s, %d)", p, f.Traffic, f.Total, merged.Traffic, merged.Total)
		}
		for _, j := range f.Jobs {
			if prev, ok := seen[j.Index]; ok {
				return nil, fmt.Errorf("--merge %s: search %d is also in %s", p, j.Index, prev)
			}
			seen[j.Index] = p
			merged.Jobs = append(merged.Jobs, j)
		}
	}
	if merged == nil {
		return nil, fmt.Errorf("--merge: no file")
	}
	if len(merged.Jobs) != merged.Total {
		return nil, fmt.Errorf("--merge: %d of the plan's %d searches present: a shard is missing", len(merged.Jobs), merged.Total)
	}
	for i := range merged.Jobs {
		for j := i + 1; j < len(merged.Jobs); j++ {
			if merged.Jobs[j].Index < merged.Jobs[i].Index {
				merged.Jobs[i], merged.Jobs[j] = merged.Jobs[j], merged.Jobs[i]
			}
		}
	}
	return merged, nil
}

// WritePlan prints the plan (format text or json): every search's answer, the best, and the best's run.
func WritePlan(w io.Writer, f *PlanFile, format string) error {
	if format == "json" {
		f.Shard = ""
		b, err := json.MarshalIndent(f, "", " ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	slo := f.SLO
	fmt.Fprintf(w, "fleet plan: %s (%s requests)", f.Traffic, commas(f.Requests))
	if f.RefreshS > 0 {
		fmt.Fprintf(w, ", router views refreshed every %s", refreshMs(f.RefreshS))
	}
	fmt.Fprintf(w, "; objectives at p%g:", 100*slo.Q())
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
	var best *PlanJob
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
		t := &Traffic{Spec: &workload.Spec{Name: f.Traffic}, Requests: f.Requests, Last: vtime.Time(vtime.FromSeconds(f.SpanS))}
		WriteText(w, best.Result, t, best.Option)
	}
	return nil
}
