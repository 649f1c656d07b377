package param

import (
	"fmt"
	"strings"
)

// Class is how a group of parameters relates to measurements, the unit the prediction intervals
// are given for (Widths).
type Class string

const (
	// ClassCalibrated: fitted on this GPU (gpu level), this engine version (engine level) or this
	// model (model level), or a value the user gave (a measured acceptance, say).
	ClassCalibrated Class = "calibrated"
	// ClassTransferred: fitted on a relative: another GPU of the same generation, or a parameter
	// file whose key matches at the parameter's level only by generation.
	ClassTransferred Class = "transferred"
	// ClassPrior: a prior only (the GPU generation's, the generic engine or model prior), or a
	// file fitted on something else.
	ClassPrior Class = "prior"
)

// rank orders classes from best informed (0) to least.
func (c Class) rank() int {
	switch c {
	case ClassCalibrated:
		return 0
	case ClassTransferred:
		return 1
	}
	return 2
}

// Group is a set of parameters that a prediction depends on together: their provenance is
// summarised per group.
type Group string

// The parameter groups, in report order.
const (
	GroupCompute      Group = "gpu compute"      // GEMM, attention-prefill, kernel fixed time, dequant, indexer, linear attention
	GroupMemory       Group = "gpu memory"       // streaming bandwidth, decode attention, elementwise kernels
	GroupInterconnect Group = "interconnect"     // NCCL and vLLM's custom all-reduce
	GroupOverhead     Group = "engine overhead"  // step and CPU overheads, API server
	GroupReserves     Group = "memory reserves"  // activation, non-torch, CUDA-graph reserves, state page (the KV capacity)
	GroupModel        Group = "model work"       // expert routing, elementwise passes the architecture does not count
	GroupAcceptance   Group = "spec. acceptance" // speculative decoding acceptance
	groupNone         Group = ""                 // workload-level: set by what runs
)

// Groups lists the groups in report order.
func Groups() []Group {
	return []Group{GroupCompute, GroupMemory, GroupInterconnect, GroupOverhead, GroupReserves, GroupModel, GroupAcceptance}
}

// GroupOf is the group a parameter belongs to (workload-level parameters: none, ok false). A
// parameter this switch does not name falls in its level's default group (gpu: compute, engine:
// overhead, model: model work), so that a new parameter is never left out.
func GroupOf(id ID) (Group, bool) {
	switch id {
	case GEMMEffBF16, GEMMEffFP8, GEMMEffFP4, GEMMHalfM, KernelFixedUS, ElementwiseFixedRatio, DequantEff, AttnPrefillEff, IndexerEff, LinearAttnEff, SparseDecodeEff:
		return GroupCompute, true
	case MemBWEff, GEMMBWEffFP8, AttnDecodeEff, ElementwiseEff:
		return GroupMemory, true
	case NCCLLatencyUS, NCCLBWEff, NCCLSmallLatencyUS, CustomARLatencyUS, CustomARBWEff:
		return GroupInterconnect, true
	case ActivationBuffers, NonTorchGiB, CUDAGraphGiB, StatePageScale, SparseWorkspaceEntries:
		return GroupReserves, true
	case AcceptTau, AcceptDecay, AcceptLateRatio, AcceptSwitchTokens, AcceptOpenRatio, AcceptOpenTokens:
		return GroupAcceptance, true
	case ActPasses, RoutingAlpha, RoutingAlphaSame:
		return GroupModel, true
	}
	switch id.Def().Level {
	case LevelGPU:
		return GroupCompute, true
	case LevelEngine:
		return GroupOverhead, true
	case LevelModel:
		return GroupModel, true
	}
	return groupNone, false
}

// Uses says which groups and parameters a deployment's predictions depend on at all:
// collectives only with more than one rank, acceptance only with speculative decoding, routing
// only for MoE models.
type Uses struct {
	Collectives, Speculative, MoE bool
	// Ngram: speculative method ngram, whose CPU drafter ngram_ns_per_token prices.
	Ngram bool
}

func (u Uses) uses(g Group) bool {
	switch g {
	case GroupInterconnect:
		return u.Collectives
	case GroupAcceptance:
		return u.Speculative
	}
	return true
}

func (u Uses) usesParam(id ID) bool {
	switch id {
	case RoutingAlpha, RoutingAlphaSame:
		return u.MoE
	case NgramNsPerToken:
		return u.Ngram
	}
	return true
}

// ClassOf is the class of one resolved value: calibrated and transferred as chosen; a file's
// value by how the file's key matches at the parameter's level (Origin.Match); a value set by
// the scenario is taken as measured (calibrated); priors prior. Workload-level values have no
// class (ok false).
func (o Origin) ClassOf() (Class, bool) {
	switch o.Kind {
	case OriginCalibrated, OriginSet:
		return ClassCalibrated, true
	case OriginTransferred:
		return ClassTransferred, true
	case OriginFile:
		switch o.Match {
		case OriginCalibrated:
			return ClassCalibrated, true
		case OriginTransferred:
			return ClassTransferred, true
		}
		return ClassPrior, true
	case OriginWorkload:
		return "", false
	}
	return ClassPrior, true
}

// GroupProvenance is one group's provenance: its class (the best informed of its parameters:
// a fit moves the parameters the measurements identify and leaves the rest at their priors), how
// many of its parameters are in each class, and the best informed one's origin.
type GroupProvenance struct {
	Group       Group  `json:"group"`
	Class       Class  `json:"class"`
	Calibrated  int    `json:"calibrated"`
	Transferred int    `json:"transferred"`
	Prior       int    `json:"prior"`
	Detail      string `json:"detail"`
}

// Summary is a prediction's provenance by parameter group: only the groups the deployment uses.
type Summary struct {
	// Class sums the groups up: calibrated when every group is, prior when every group is a
	// prior, transferred otherwise (some groups from measurements, of this deployment or a
	// relative).
	Class  Class             `json:"class"`
	Groups []GroupProvenance `json:"groups"`
	// GPUData names the measured data the GPU's generation priors rest on ("" when none: the
	// priors are another generation's values with wider intervals); set by the caller
	// (model/deploy, which knows the catalog).
	GPUData string `json:"gpu_data,omitempty"`
	// Unsupported is set when every GPU-level group is a prior and no measured data supports
	// the GPU's generation (GPUData empty): the prediction rests on priors for a GPU family
	// nothing measured; Why says so in words.
	Unsupported bool   `json:"unsupported_gpu_family,omitempty"`
	Why         string `json:"why,omitempty"`
	// ApproxEngine says, when set, that servesim approximates the deployment's engine rather than
	// expresses it (vLLM V0): its intervals widen by that engine's widths (ClassApproxEngine).
	// Set by the caller (model/priors).
	ApproxEngine string `json:"approximate_engine,omitempty"`
	// Unseen lists what the deployment runs that no measured run on its GPU generation covers: a
	// model family, an attention kind or a weight format ("attention sparse_mla on Hopper"). Its
	// intervals widen by the unseen widths (ClassUnseen). Set by the caller (model/priors).
	Unseen []string `json:"unseen,omitempty"`
}

// Summarize is the provenance summary of resolved parameters, the one computation every output
// uses (see Summary). Callers with a deployment use model/priors.Summarize, which fills
// Uses and the GPU generation's measured data.
func Summarize(prov *Provenance, u Uses) Summary {
	type acc struct {
		n    [3]int
		best Origin
		rank int
	}
	by := map[Group]*acc{}
	for _, d := range Defs() {
		g, ok := GroupOf(d.ID)
		if !ok || !u.uses(g) || !u.usesParam(d.ID) {
			continue
		}
		c, ok := prov[d.ID].ClassOf()
		if !ok {
			continue
		}
		a := by[g]
		if a == nil {
			a = &acc{rank: 3}
			by[g] = a
		}
		a.n[c.rank()]++
		if c.rank() < a.rank {
			a.rank, a.best = c.rank(), prov[d.ID]
		}
	}
	var s Summary
	all := [3]bool{}
	for _, g := range Groups() {
		a := by[g]
		if a == nil {
			continue
		}
		cls := []Class{ClassCalibrated, ClassTransferred, ClassPrior}[a.rank]
		all[a.rank] = true
		s.Groups = append(s.Groups, GroupProvenance{Group: g, Class: cls, Calibrated: a.n[0], Transferred: a.n[1], Prior: a.n[2], Detail: a.best.Detail})
	}
	switch {
	case all[0] && !all[1] && !all[2]:
		s.Class = ClassCalibrated
	case !all[0] && !all[1]:
		s.Class = ClassPrior
	default:
		s.Class = ClassTransferred
	}
	return s
}

// Group returns the summary's entry for g (ok false when the deployment does not use it).
func (s *Summary) Group(g Group) (GroupProvenance, bool) {
	for _, x := range s.Groups {
		if x.Group == g {
			return x, true
		}
	}
	return GroupProvenance{}, false
}

// GPUPriorsOnly reports whether every GPU-level group (compute, memory, interconnect) is a
// prior.
func (s *Summary) GPUPriorsOnly() bool {
	for _, x := range s.Groups {
		if (x.Group == GroupCompute || x.Group == GroupMemory || x.Group == GroupInterconnect) && x.Class != ClassPrior {
			return false
		}
	}
	return true
}

// Line is the summary in one line for people: "calibrated: gpu compute, gpu memory, ...;
// transferred: ...; prior: ..." with the unsupported-family warning first.
func (s *Summary) Line() string {
	var parts []string
	for _, c := range []Class{ClassCalibrated, ClassTransferred, ClassPrior} {
		var gs []string
		for _, x := range s.Groups {
			if x.Class == c {
				gs = append(gs, string(x.Group))
			}
		}
		if len(gs) > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s", c, strings.Join(gs, ", ")))
		}
	}
	line := strings.Join(parts, "; ")
	if s.ApproxEngine != "" {
		line += "; engine approximated: " + s.ApproxEngine
	}
	if len(s.Unseen) > 0 {
		line += "; no measured support (intervals widened): " + strings.Join(s.Unseen, ", ")
	}
	if s.Unsupported {
		line = "PRIORS ONLY, " + s.Why + "; " + line
	}
	return line
}

// Marker is a short tag for tables: "cal", "xfer", "prior", and "prior!" when the GPU family has
// no measured data.
func (s *Summary) Marker() string {
	switch {
	case s.Unsupported:
		return "prior!"
	case s.Class == ClassCalibrated:
		return "cal"
	case s.Class == ClassTransferred:
		return "xfer"
	}
	return "prior"
}
