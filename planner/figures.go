package planner

import (
	"fmt"

	"github.com/servesim/servesim/plots"
)

// Charts is the plan's figure set: its cost against SLO-feasible throughput, one point per
// hardware layout's best configuration, with the frontier (the cheapest price for at least each
// throughput). The subject under the title names the model and the workload.
func (p *Plan) Charts() []plots.Chart {
	color := map[string]int{}
	for i, g := range p.Question.GPUs {
		color[g.Name] = i
	}
	var pts []plots.CostPoint
	seen := map[string]bool{}
	slo := p.Question.Workload != nil && p.Question.Workload.SLO.Any()
	for i := range p.Results {
		r := &p.Results[i]
		if r.Perf == nil {
			continue
		}
		k := groupKey(&r.Config)
		if seen[k] {
			continue
		}
		seen[k] = true
		x := r.Perf.OutputTokS
		if slo {
			x *= r.Perf.Goodput
		}
		pts = append(pts, plots.CostPoint{Label: r.Config.Label(), GPU: r.Config.GPU, X: x, Y: r.PriceHour, Met: r.Status == StatusOK || r.Status == StatusMarginal, Color: color[r.Config.GPU]})
	}
	if len(pts) == 0 {
		return nil
	}
	caption := "Each point is the best configuration of a hardware layout (GPU kind, count, TP, DP, EP): its price against the output throughput of the requests that meet every objective. Filled points meet the objectives at their quantile, rings miss one or do not keep up with the arrivals. The dashed step line is the frontier: the cheapest price that serves at least that throughput."
	if !slo {
		caption = "Each point is the best configuration of a hardware layout: its price against its output throughput (no objectives were given). Filled points keep up with the arrivals, rings do not. The dashed step line is the frontier: the cheapest price that serves at least that throughput."
	}
	w := p.Question.WorkloadDesc
	if wl := p.Question.Workload; wl != nil && wl.Name != "" {
		w = wl.Name
	}
	h := plots.Header{Name: "plan-cost", Title: "Cost against SLO-feasible throughput", Caption: caption + " Workload: " + p.Question.WorkloadDesc + ".",
		Subject: fmt.Sprintf("%s, %s", p.Question.Model, w)}
	return []plots.Chart{plots.NewCostChart(h, pts)}
}
