package vllmbench

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/servesim/servesim/workload"
)

// RecoverOptions say what a result file cannot.
type RecoverOptions struct {
	// Command, when given, is the vllm bench serve command the file came from: it gives the
	// dataset (random lengths and prefix, or the ShareGPT file), the seed, the warm-ups and the
	// --goodput limits. The file's traffic (num_prompts, request_rate, burstiness,
	// max_concurrency) and its recorded lengths win where they differ, with a note.
	Command *Command
	// SpecialTokens and CharsPerToken as in Options.
	SpecialTokens *int
	CharsPerToken float64
}

// Workload recovers the run a result file measured, as far as the file tells it:
//   - traffic: num_prompts, request_rate ("inf": all at t = 0), burstiness and max_concurrency;
//   - lengths: input_lens and output_lens (--save-detailed) request by request, in send order;
//     else the command's dataset; else every request gets the mean, total_input_tokens /
//     completed and total_output_tokens / completed;
//   - what the file does not record (the seed, the warm-ups, the random prefix, the dataset) from
//     the command, else vLLM's defaults (seed 0, a ready check, no warm-ups, no prefix; the random
//     dataset, so the engine's prompts are the recorded lengths plus the special tokens).
//
// The notes say which of these were assumed.
func (r *Result) Workload(o RecoverOptions) (*workload.Spec, []string, error) {
	if r.RampUp {
		return nil, nil, fmt.Errorf("%s: the run ramped its request rate (ramp_up_strategy): servesim does not import rate ramps", r.Name)
	}
	var notes []string
	name := r.Label
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(r.Name), filepath.Ext(r.Name))
	}
	var b workload.VLLMBench
	var slo workload.SLO
	cmd := o.Command
	if cmd != nil {
		if cmd.Mode != "serve" {
			return nil, nil, fmt.Errorf("%s is a vllm bench serve result; the command is vllm bench %s", r.Name, cmd.Mode)
		}
		s, cn, err := cmd.Spec(Options{SpecialTokens: o.SpecialTokens, CharsPerToken: o.CharsPerToken})
		if err != nil {
			return nil, nil, err
		}
		b = *s.VLLM
		slo = s.SLO
		notes = append(notes, cn...)
	} else {
		b = workload.VLLMBench{Dataset: "random"}
		if o.SpecialTokens != nil {
			n := *o.SpecialTokens
			b.SpecialTokens = &n
		}
		b.CharsPerToken = o.CharsPerToken
		notes = append(notes, "not recorded in the file, so vLLM's defaults are assumed: --seed 0 (send times), a ready check with request 0's prompt, no warm-ups, no random prefix; give the command with --vllm-bench to set them")
	}
	// Traffic.
	differs := func(what string, file, cmdv any) {
		if cmd != nil && fmt.Sprint(file) != fmt.Sprint(cmdv) {
			notes = append(notes, fmt.Sprintf("%s: the file says %v, the command %v: using the file's", what, file, cmdv))
		}
	}
	n := b.N()
	switch {
	case r.hasNumPrompts && r.NumPrompts > 0:
		n = r.NumPrompts
	case r.InputLens != nil:
		n = len(r.InputLens)
	case cmd == nil:
		n = r.Completed + max(r.Failed, 0)
	}
	differs("num_prompts", n, b.N())
	if r.hasRate {
		rate := 0.0
		if !math.IsInf(r.RequestRate, 1) {
			rate = r.RequestRate
		}
		differs("request_rate", rateString(rate), rateString(b.RequestRate))
		b.RequestRate = rate
	} else if cmd == nil {
		notes = append(notes, "request_rate not recorded: inf assumed (every request at t = 0)")
	}
	if r.hasBurstiness {
		bu := r.Burstiness
		old := b.Burstiness
		if old == 0 {
			old = 1
		}
		differs("burstiness", bu, old)
		b.Burstiness, b.ConstantGaps = bu, false
		if bu == 1 {
			b.Burstiness = 0
		}
	}
	if r.hasMaxConcurrency {
		differs("max_concurrency", r.MaxConcurrency, b.MaxConcurrency)
		b.MaxConcurrency = r.MaxConcurrency
	}
	// Lengths.
	switch {
	case r.InputLens != nil:
		if len(r.InputLens) == 0 {
			return nil, nil, fmt.Errorf("%s: input_lens is empty: no request to simulate", r.Name)
		}
		if r.hasNumPrompts && r.NumPrompts != len(r.InputLens) {
			notes = append(notes, fmt.Sprintf("num_prompts %d but %d recorded requests: simulating the %d", r.NumPrompts, len(r.InputLens), len(r.InputLens)))
		}
		n = len(r.InputLens)
		sp := b.Special()
		addSpecial := b.Dataset != "sharegpt"
		if addSpecial {
			if cmd == nil {
				notes = append(notes, fmt.Sprintf("lengths: the %d recorded input_lens and output_lens, request by request; the random dataset's convention assumed (the recorded prompt lengths leave out the %d special token(s) the server adds; for a sharegpt run give the command with --vllm-bench)", n, sp))
			} else {
				notes = append(notes, fmt.Sprintf("lengths: the %d recorded input_lens and output_lens, request by request (the command's draws are not needed)", n))
			}
		} else {
			notes = append(notes, fmt.Sprintf("lengths: the %d recorded input_lens and output_lens, request by request (ShareGPT counts include the special tokens); duplicates from the top-up are not recognised", n))
		}
		meanOut := 0
		if r.Completed > 0 {
			meanOut = int(math.Round(float64(r.TotalOutputTokens) / float64(r.Completed)))
		}
		ps := make([]workload.BenchPrompt, n)
		unknown := 0
		for i := range ps {
			p := &ps[i]
			p.Tokens = r.InputLens[i]
			if addSpecial {
				p.EngineTokens = p.Tokens + sp
			}
			p.OutputTokens = r.OutputLens[i]
			failed := i < len(r.Errors) && r.Errors[i] != ""
			if p.OutputTokens == 0 || failed {
				// A failed request's output is unknown (vLLM records 0).
				unknown++
				p.OutputTokens = meanOut
				if cmd != nil && b.Dataset == "random" {
					p.OutputTokens = b.OutputLen
				}
				if b.Dataset == "sharegpt" && b.OutputLen > 0 {
					p.OutputTokens = b.OutputLen
				}
				p.OutputTokens = max(p.OutputTokens, 1)
			}
		}
		if unknown > 0 {
			notes = append(notes, fmt.Sprintf("%d requests failed or produced nothing in the measurement; their output length is unknown, so they get %d tokens", unknown, ps[firstUnknown(r)].OutputTokens))
		}
		prefix := 0
		if b.Dataset == "random" {
			prefix = b.PrefixLen
		}
		b = workload.VLLMBench{RequestRate: b.RequestRate, Burstiness: b.Burstiness, ConstantGaps: b.ConstantGaps,
			MaxConcurrency: b.MaxConcurrency, NumWarmups: b.NumWarmups, NoReadyCheck: b.NoReadyCheck, Seed: b.Seed,
			SpecialTokens: b.SpecialTokens, PrefixLen: prefix}
		b.SetPrompts(ps)
	case cmd != nil:
		b.NumPrompts = n
		notes = append(notes, "lengths: drawn from the command's dataset (the file has no input_lens; vllm bench serve --save-detailed records them)")
	default:
		if r.Completed == 0 {
			return nil, nil, fmt.Errorf("%s: no completed request and no input_lens: the lengths cannot be recovered", r.Name)
		}
		in := int(math.Round(float64(r.TotalInputTokens) / float64(r.Completed)))
		out := int(math.Round(float64(r.TotalOutputTokens) / float64(r.Completed)))
		b.InputLen = in + b.Special()
		b.OutputLen = max(out, 1)
		b.NumPrompts = n
		notes = append(notes, fmt.Sprintf("lengths: not recorded (no --save-detailed): every request gets the means, %d input (+%d special) and %d output tokens; the spread of the real lengths is lost", in, b.Special(), b.OutputLen))
	}
	s := &workload.Spec{Name: name, Kind: workload.KindVLLMBench, VLLM: &b, SLO: slo}
	if err := s.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	if err := s.LoadDataset(); err != nil {
		return nil, nil, err
	}
	return s, notes, nil
}

func firstUnknown(r *Result) int {
	for i := range r.OutputLens {
		if r.OutputLens[i] == 0 || i < len(r.Errors) && r.Errors[i] != "" {
			return i
		}
	}
	return 0
}

func rateString(r float64) string {
	if r == 0 {
		return "inf"
	}
	return fmt.Sprint(r)
}
