package workload

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/servesim/servesim/matrix"
)

// PresetInfo names a built-in workload.
type PresetInfo struct {
	Name, Description string
}

func presets() map[string]Spec {
	return map[string]Spec{
		"chat": {Kind: KindOpen, Open: Open{Process: "poisson", RatePerS: 2, Requests: 600},
			Lengths: Lengths{InputTokens: 1024, OutputTokens: 256, RangeRatio: 0.5}},
		"chat-bursty": {Kind: KindOpen, Open: Open{Process: "gamma", CV: 3, RatePerS: 2, Requests: 600},
			Lengths: Lengths{InputTokens: 1024, OutputTokens: 256, RangeRatio: 0.5}},
		"chat-ramp": {Kind: KindOpen, Open: Open{Process: "poisson", Ramp: []RampPoint{{0, 0.5}, {300, 6}}},
			Lengths: Lengths{InputTokens: 1024, OutputTokens: 256, RangeRatio: 0.5}},
		"rag": {Kind: KindOpen, Open: Open{Process: "poisson", RatePerS: 0.5, Requests: 300},
			Lengths: Lengths{InputTokens: 8192, OutputTokens: 256, RangeRatio: 0.25, PrefixTokens: 6144, PrefixGroups: 4}},
		"1k1k": {Kind: KindClosed, Closed: Closed{Requests: 512, Concurrency: 64},
			Lengths: Lengths{InputTokens: 1024, OutputTokens: 1024}},
		"8k1k": {Kind: KindClosed, Closed: Closed{Requests: 256, Concurrency: 32},
			Lengths: Lengths{InputTokens: 8192, OutputTokens: 1024}},
		"1k8k": {Kind: KindClosed, Closed: Closed{Requests: 128, Concurrency: 32},
			Lengths: Lengths{InputTokens: 1024, OutputTokens: 8192}},
		"poisson-100k": {Kind: KindOpen, Open: Open{Process: "poisson", RatePerS: 8, Requests: 100_000},
			Lengths: Lengths{InputTokens: 512, OutputTokens: 64, RangeRatio: 0.5}},
	}
}

func presetDesc() map[string]string {
	return map[string]string{
		"chat":         "open loop, Poisson 2 req/s, 600 requests, input 1024 / output 256 tokens within ±50%",
		"chat-bursty":  "as chat, gamma arrivals with cv 3 (bursts)",
		"chat-ramp":    "as chat, Poisson rate ramping 0.5 -> 6 req/s over 300 s",
		"rag":          "open loop, Poisson 0.5 req/s, 300 requests, 8K prompts (±25%) sharing 6K-token prefixes in 4 groups, output 256",
		"1k1k":         "closed loop (InferenceX 1k/1k): 512 requests at concurrency 64, input 1024, output 1024",
		"8k1k":         "closed loop (InferenceX 8k/1k): 256 requests at concurrency 32, input 8192, output 1024",
		"1k8k":         "closed loop (InferenceX 1k/8k): 128 requests at concurrency 32, input 1024, output 8192",
		"poisson-100k": "open loop, Poisson 8 req/s, 100,000 requests, input 512 / output 64 within ±50% (the engine benchmark)",
		"bench-CTXxC":  "one llm-inference-bench decode cell, e.g. bench-128Kx16 (as 'servesim matrix' runs it)",
	}
}

// Presets lists the built-in workloads.
func Presets() []PresetInfo {
	names := make([]string, 0, len(presetDesc()))
	for n := range presetDesc() {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]PresetInfo, len(names))
	for i, n := range names {
		out[i] = PresetInfo{n, presetDesc()[n]}
	}
	return out
}

// Preset returns a built-in workload by name: one of Presets, or bench-<context>x<concurrency>.
func Preset(name string) (*Spec, error) {
	if s, ok := presets()[name]; ok {
		s.Name = name
		s.Open.Ramp = append([]RampPoint(nil), s.Open.Ramp...)
		if err := s.Validate(); err != nil {
			panic(fmt.Sprintf("preset %s: %v", name, err))
		}
		return &s, nil
	}
	if rest, ok := strings.CutPrefix(name, "bench-"); ok {
		i := strings.LastIndexAny(rest, "xX")
		if i > 0 {
			ctx, cs := rest[:i], rest[i+1:]
			c, err := strconv.Atoi(cs)
			if _, cerr := matrix.ParseContext(ctx); cerr == nil && err == nil && c > 0 {
				s := &Spec{Name: name, Kind: KindLLMBenchCell, Cell: LLMBenchCell{Context: ctx, Concurrency: c}}
				if err := s.Validate(); err != nil {
					return nil, fmt.Errorf("preset %s: %w", name, err)
				}
				return s, nil
			}
		}
		return nil, fmt.Errorf("preset %q: want bench-<context>x<concurrency>, such as bench-128Kx16", name)
	}
	var names []string
	for _, p := range Presets() {
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("unknown workload %q: not a file and not a preset (presets: %s)", name, strings.Join(names, ", "))
}
