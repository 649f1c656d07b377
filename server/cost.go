package server

import (
	"math"

	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scheduler"
	"github.com/servesim/servesim/sim"
)

// samePromptLevels quantises the share of a batch's requests that repeat a prompt.
const samePromptLevels = 16

// batchCost prices each step with the workload-level parameter same_prompt (param.SamePrompt:
// the share of a batch's requests that carry one and the same prompt, which concentrates MoE
// routing) measured on the running batch instead of fixed for a workload: the share of the
// running requests whose prompt the server has seen before (repeatedTag in their spec's Tag),
// rounded to 1/16. A benchmark cell's streams (one prompt) then cost what they cost in `servesim
// matrix` (same_prompt 1), distinct prompts what they cost in vllm bench workloads (0). The cost
// models of the levels are built as they are first needed.
type batchCost struct {
	srv    *sim.Server
	models [samePromptLevels + 1]*cost.Model
	sched  *scheduler.Scheduler
}

// repeatedTag marks, in sim.RequestSpec.Tag, a request whose prompt was seen before.
const repeatedTag = 1

func (b *batchCost) model(level int) *cost.Model {
	if b.models[level] == nil {
		p := b.srv.Params
		p[param.SamePrompt] = float64(level) / samePromptLevels
		if p == b.srv.Params {
			b.models[level] = b.srv.Cost
		} else {
			b.models[level] = cost.New(b.srv.Deployment, p)
		}
	}
	return b.models[level]
}

func (b *batchCost) Step(s *cost.StepShape) cost.StepCost {
	level := 0
	if b.sched != nil {
		run := b.sched.Running()
		rep := 0
		for _, r := range run {
			if rec, _ := r.Owner.(*sim.Record); rec != nil && rec.Spec.Tag == repeatedTag {
				rep++
			}
		}
		if len(run) > 0 {
			level = int(math.Round(float64(rep) / float64(len(run)) * samePromptLevels))
		}
	}
	return b.model(level).Step(s)
}

func (b *batchCost) FrontendSeconds(promptTokens int) float64 {
	return b.srv.Cost.FrontendSeconds(promptTokens)
}
