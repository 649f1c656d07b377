package fleet

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/workload"
)

// GroupSpec is a --group value: Count replicas of the deployment of the scenario file File.
type GroupSpec struct {
	File  string
	Count int
}

// ParseGroupSpec reads a --group value, FILE:N: a scenario file and its replica count, a
// positive integer after the last colon.
func ParseGroupSpec(s string) (GroupSpec, error) {
	i := strings.LastIndexByte(s, ':')
	if i > 0 {
		if n, err := strconv.Atoi(s[i+1:]); err == nil && n > 0 {
			return GroupSpec{File: s[:i], Count: n}, nil
		}
	}
	return GroupSpec{}, usage.Errorf("--group %q: want FILE:N, a scenario file and N a positive integer (its replica count)", s)
}

// FleetGroups is the fleet the flags give: first --replicas replicas of main (the --config or
// --vllm-cmd deployment), then each --group's count of the deployment load resolves from its
// file, with the file as the group's Source. With --replicas 0 the groups alone form the fleet
// and the first of them takes main's place (the group the autoscaler scales and
// --price-per-hour prices). Every group must serve the first group's model: one router serves
// one model name. A group whose name is taken gets its index appended. Prices are set by
// Settings.FleetConfig.
func (o *Options) FleetGroups(main Group, load func(file string) (Group, error)) ([]Group, error) {
	var groups []Group
	taken := map[string]bool{}
	if o.Replicas > 0 || len(o.Groups) == 0 {
		main.Count = o.Replicas
		groups, taken[main.Name] = append(groups, main), true
	}
	for i, s := range o.Groups {
		spec, err := ParseGroupSpec(s)
		if err != nil {
			return nil, err
		}
		g, err := load(spec.File)
		if err != nil {
			return nil, fmt.Errorf("--group %q: %w", s, err)
		}
		if len(groups) > 0 {
			if got, want := g.Server.Deployment.Model.Name, groups[0].Server.Deployment.Model.Name; got != want {
				return nil, usage.Errorf("--group %q: its model %s is not the first group's, %s: one router serves one model", s, got, want)
			}
		}
		for taken[g.Name] {
			g.Name = fmt.Sprintf("%s (group %d)", g.Name, i+1)
		}
		taken[g.Name] = true
		g.Count, g.Source = spec.Count, spec.File
		groups = append(groups, g)
	}
	return groups, nil
}

// GroupResult is one group's share of a fleet of several groups.
type GroupResult struct {
	Name       string `json:"name"`
	Deployment string `json:"deployment"`
	Source     string `json:"source,omitempty"`
	// Count is the group's replicas at the start; Replicas those over the run (the
	// autoscaler's included).
	Count        int     `json:"count"`
	Replicas     int     `json:"replicas"`
	Routed       int64   `json:"routed"`
	ReplicaHours float64 `json:"replica_hours"`
	// PricePerHour is one replica's (0: unknown).
	PricePerHour float64           `json:"price_per_hour,omitempty"`
	Metrics      *workload.Metrics `json:"metrics"`
}

// groupResults is each group's share of res (whose Replicas are r.reps').
func (r *run) groupResults(res *Result) []GroupResult {
	out := make([]GroupResult, len(r.cfg.Groups))
	reps := make([][]*workload.Replica, len(out))
	for i, g := range r.cfg.Groups {
		out[i] = GroupResult{Name: groupName(g, i), Deployment: g.Deployment, Source: g.Source, Count: g.Count * max(g.Server.Replicas, 1), PricePerHour: g.PricePerHour}
		if out[i].Deployment == "" {
			out[i].Deployment = out[i].Name
		}
	}
	for i, x := range r.reps {
		gr := &out[x.group]
		gr.Replicas++
		gr.Routed += x.routed
		rr := &res.Replicas[i]
		gr.ReplicaHours += (rr.StopS - rr.StartS) / 3600
		reps[x.group] = append(reps[x.group], x.rep)
	}
	for i := range out {
		out[i].Metrics = workload.Summarise(r.spec, r.cfg.Seed, reps[i], len(reps[i]))
	}
	return out
}

// groupName is group i's name in reports: its Name, else "g<i>".
func groupName(g Group, i int) string {
	if g.Name != "" {
		return g.Name
	}
	return fmt.Sprintf("g%d", i)
}
