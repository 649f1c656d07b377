package sim

import (
	"fmt"

	"github.com/servesim/servesim/kvcache"
	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scheduler"
)

// Server is a deployment made ready to simulate: its memory budget, KV layout and cost model.
type Server struct {
	Deployment *deploy.Deployment
	Params     param.Values
	Memory     deploy.MemoryBudget
	Layout     *kvcache.Layout
	Cost       *cost.Model
	// StepByStep makes NewEngine's engines run step by step (Config.StepByStep), the reference
	// the fast mode is tested against.
	StepByStep bool
	// Replicas is the number of independent engines the server stands for: the data-parallel
	// size of a model without MoE layers (deploy.DPReplicas), whose engine cores run
	// independently behind the API server; Memory, Layout, Cost and NewEngine are one replica's.
	// 1 otherwise. Workload runs deal the requests over them (package workload).
	Replicas int
}

// NewServer sizes the KV cache and builds the cost model. It fails, with the numbers, when the
// deployment cannot start (weights do not fit, one max-length request does not fit).
func NewServer(d *deploy.Deployment, p param.Values) (*Server, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := &Server{Deployment: d, Params: p, Replicas: 1}
	if r, n := d.ReplicaDeployment(); n > 1 {
		s.Deployment, s.Replicas = r, n
		d = r
	}
	s.Memory = d.Memory(&p)
	if msg := s.Memory.FitError(); msg != "" {
		return nil, fmt.Errorf("%s on %d x %s: %s", d.Model.Name, d.Hardware.Count, d.Hardware.GPU.Name, msg)
	}
	e := &d.Engine
	sizedBy := ""
	if s.Memory.KVCacheBytesSet {
		sizedBy = "kv_cache_memory_bytes"
	}
	// Data-parallel ranks stepping together (a MoE model) are one engine here: their KV pools
	// add up (each rank's is this budget).
	l, err := kvcache.NewLayout(d.KVSpecs(&p), s.Memory.AvailableKV*float64(d.LockstepRanks()), kvcache.Options{
		BlockSize: e.BlockSize, SpecTokens: e.SpecTokens(), MaxModelLen: e.MaxModelLen,
		MaxNumBatchedTokens: e.MaxNumBatchedTokens, PrefixCaching: e.PrefixCaching, SizedBy: sizedBy, GroupsByTarget: e.KVGroupsByTarget})
	if err != nil {
		return nil, fmt.Errorf("%s on %d x %s: %w", d.Model.Name, d.Hardware.Count, d.Hardware.GPU.Name, err)
	}
	s.Layout = l
	if c := s.SchedulerConfig(); c.AlignBlock > 0 {
		// A hybrid model with prefix caching ("align" mode) cuts prompt chunks at its block, raised
		// to hold a state page: a step budget below one block could never schedule a prompt longer
		// than the budget (the run stopped with "does not fit in the KV cache even with the engine
		// idle", TestHybridBudgetBelowBlockRefused). vLLM's configuration requires block_size <=
		// max_num_batched_tokens in its Mamba "align" cache mode as well.
		entry := c.MaxNumBatchedTokens // one request's share of a step
		if c.MaxEntryTokens > 0 {
			entry = c.MaxEntryTokens
		}
		if entry < c.AlignBlock {
			slots := ""
			if entry != e.MaxNumBatchedTokens {
				slots = fmt.Sprintf(" (%d after the draft model's slots)", entry)
			}
			return nil, fmt.Errorf("%s on %d x %s: max_num_batched_tokens %d%s is below the KV-cache block of %d tokens at which a hybrid model with prefix caching cuts its prompt chunks, so no prompt longer than it could be scheduled: raise max_num_batched_tokens to at least %d or disable prefix caching",
				d.Model.Name, d.Hardware.Count, d.Hardware.GPU.Name, e.MaxNumBatchedTokens, slots, c.AlignBlock, c.AlignBlock+e.MaxNumBatchedTokens-entry)
		}
	}
	s.Cost = cost.New(d, p)
	return s, nil
}

// SchedulerConfig is the step policy's configuration for this server.
func (s *Server) SchedulerConfig() scheduler.Config {
	e := &s.Deployment.Engine
	acc := s.Deployment.Acceptance(&s.Params)
	cfg := scheduler.Config{
		MaxNumBatchedTokens: e.MaxNumBatchedTokens,
		MaxNumSeqs:          e.MaxNumSeqs,
		MaxModelLen:         e.MaxModelLen,
		ChunkedPrefill:      e.ChunkedPrefill,
		SpecTokens:          e.SpecTokens(),
		Accept:              acc,
	}
	if e.SpecTokens() > 0 && e.Speculative.Method == "draft_model" {
		// A draft model needs one more slot per request for its drafting (vLLM's
		// max_num_new_slots_for_drafting = 1): the step's budget is max_num_batched_tokens -
		// max_num_seqs (vllm/v1/core/sched/scheduler.py, max_num_scheduled_tokens).
		cfg.MaxNumBatchedTokens = max(e.MaxNumBatchedTokens-e.MaxNumSeqs, 1)
	}
	if n := s.Deployment.LockstepRanks() * max(e.PipelineParallel, 1); n > 1 {
		// Pipeline micro-batches in flight and lockstep data-parallel ranks each have their own
		// token budget (and each rank its own max_num_seqs); a request runs in one of them, so
		// its chunk stays within one budget (package cost prices the busiest part).
		cfg.MaxEntryTokens = cfg.MaxNumBatchedTokens
		cfg.MaxNumBatchedTokens *= n
		cfg.MaxNumSeqs *= s.Deployment.LockstepRanks()
	}
	if s.Layout.Hybrid && e.PrefixCaching {
		cfg.AlignBlock = s.Layout.BlockSize
	}
	return cfg
}

// NewEngine starts a fresh engine (empty cache) on this server.
func (s *Server) NewEngine(seed uint64) *Engine { return New(s.EngineConfig(seed)) }

// EngineConfig is the configuration NewEngine builds its engines with; a caller that needs other
// limits (a long-running server lifts MaxEvents and MaxSimTime) changes it and calls New.
func (s *Server) EngineConfig(seed uint64) Config {
	return Config{
		Scheduler:  s.SchedulerConfig(),
		Layout:     s.Layout,
		EagleDrop:  s.Deployment.Engine.Speculative.EagleFamily(),
		Cost:       s.Cost,
		Seed:       seed,
		StepByStep: s.StepByStep,

		AsyncScheduling: s.Deployment.Engine.AsyncScheduling,
	}
}
