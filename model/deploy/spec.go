package deploy

import (
	"fmt"
	"math"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/param"
)

// Speculative decoding as vLLM runs each method (vllm/v1/spec_decode/; the proposers in
// eagle.py, draft_model.py, ngram_proposer.py), and the acceptance the simulation draws from.
//
//	mtp          the target checkpoint's multi-token-prediction layer(s) (num_nextn_predict_layers
//	             = n_predict; vllm/config/speculative.py maps deepseek_v3, glm_moe_dsa, Glm4Moe,
//	             qwen3_next to their MTP modules), run k times per step through vLLM's EAGLE-style
//	             proposer: the first pass over every scheduled token, then one token per request;
//	             k > n_predict reuses the layers (k must then be a multiple of n_predict)
//	eagle        an EAGLE-1 head (a draft config.json): fc over [embedding; target hidden], its
//	             layer(s), the target's lm_head; same passes as mtp
//	eagle3       an EAGLE-3 head: fc over three target hidden states, its layer(s), its own lm_head
//	             over draft_vocab_size tokens
//	draft_model  a separate small model of the same vocabulary, run k times autoregressively (the
//	             first pass over the new tokens, then one per request), with its own KV cache
//	ngram        prompt lookup on the CPU: no drafter weights, a scan of each request's tokens per
//	             step (ngram_ns_per_token), with asynchronous scheduling off (vLLM's rule)
//	dflash       the parallel drafter of the seed (one pass over 1 + k positions; package cost)

// DrafterArch is the model whose weights, cache and passes draft the tokens: the separate drafter
// (Deployment.Drafter) for dflash, eagle, eagle3 and draft_model, the checkpoint's MTP module for
// mtp (arch.Arch.MTPArch), nil for ngram or with speculation off.
func (d *Deployment) DrafterArch() *arch.Arch {
	s := &d.Engine.Speculative
	if !s.Enabled() {
		return nil
	}
	if s.Method == "mtp" {
		return d.Model.MTPArch()
	}
	return d.Drafter
}

// DraftHead returns the drafter a method runs from a draft model's description: an EAGLE head
// for eagle and eagle3 (hf.EagleHead's shape when the config named its class, else the plain
// llama-like model read as the head vLLM builds from it), the model itself otherwise. It checks
// what vLLM requires: an EAGLE head of the target's hidden width, a draft model of the target's
// vocabulary.
func DraftHead(method string, drafter, target *arch.Arch) (*arch.Arch, error) {
	if drafter == nil {
		return nil, nil
	}
	switch method {
	case "eagle", "eagle3":
		if drafter.Hidden != target.Hidden {
			return nil, fmt.Errorf("engine.speculative: %s head %q has hidden size %d, target %q %d: an EAGLE head reads the target's hidden states and must match them",
				method, drafter.Name, drafter.Hidden, target.Name, target.Hidden)
		}
		if drafter.Family != method && drafter.Family != "eagle" && drafter.Family != "eagle3" {
			return nil, fmt.Errorf("engine.speculative: draft model %q (family %s) is not an EAGLE head: give the head's config.json (architectures LlamaForCausalLMEagle3 for eagle3, EagleLlamaForCausalLM for eagle)",
				drafter.Name, drafter.Family)
		}
	case "draft_model":
		if drafter.Vocab != target.Vocab {
			return nil, fmt.Errorf("engine.speculative: draft model %q has a vocabulary of %d tokens, target %q %d: vLLM needs the same tokenizer",
				drafter.Name, drafter.Vocab, target.Name, target.Vocab)
		}
	}
	return drafter, nil
}

// Acceptance is the speculative acceptance the deployment runs with: the override of the
// scenario ([engine.speculative] acceptance or mean_acceptance_length), else for dflash the
// parameters accept_tau and accept_decay (with the late change accept_late_ratio from
// accept_switch_tokens), else the method's prior (param.SpecPriors; a draft model's by its size
// relative to the target's active weights). With speculation off it is empty.
func (d *Deployment) Acceptance(p *param.Values) param.SpecAcceptance {
	s := &d.Engine.Speculative
	k := d.Engine.SpecTokens()
	if k == 0 {
		return param.SpecAcceptance{Source: "speculative decoding off"}
	}
	if len(s.Acceptance) == k {
		return param.SpecAcceptance{Rates: append([]float64(nil), s.Acceptance...), Source: "engine.speculative.acceptance"}
	}
	// A code-writing prompt drafts better: the level (accept_tau, mtp_accept_tau or the
	// method's prior) is scaled by accept_code_ratio for the share code_prompt of the requests.
	code := 1 + p[param.CodePrompt]*(p[param.AcceptCodeRatio]-1)
	codeSrc := ""
	if code != 1 {
		codeSrc = fmt.Sprintf(", x %.4g for a code prompt (accept_code_ratio %.4g, code_prompt %.4g)", code, p[param.AcceptCodeRatio], p[param.CodePrompt])
		q := *p
		q[param.AcceptTau] = min(q[param.AcceptTau]*code, param.MaxMeanLength(q[param.AcceptDecay], param.ReferenceDrafts))
		q[param.MTPAcceptTau] = q[param.MTPAcceptTau] * code
		p = &q
	}
	if s.Method == "mtp" && s.MeanAcceptanceLength == 0 {
		// The checkpoint's MTP layer: its level at 3 drafts, the mtp prior's shape.
		pr, _ := param.SpecPriorFor("mtp")
		first := param.FirstAcceptanceAt(p[param.MTPAcceptTau], pr.Decay, param.MTPReferenceDrafts)
		return param.SpecAcceptance{Rates: param.ConditionalCDF(first, pr.Decay, k),
			Source: fmt.Sprintf("parameter mtp_accept_tau %.4g (at %d drafts), the mtp prior's decay %g%s", p[param.MTPAcceptTau], param.MTPReferenceDrafts, pr.Decay, codeSrc)}
	}
	if s.Method == "dflash" {
		if v := s.MeanAcceptanceLength; v > 0 {
			first := param.FirstAcceptanceAt(v, p[param.AcceptDecay], k)
			return param.SpecAcceptance{Rates: param.ConditionalCDF(first, p[param.AcceptDecay], k),
				Source: fmt.Sprintf("engine.speculative.mean_acceptance_length %g, shape accept_decay %g", v, p[param.AcceptDecay])}
		}
		a := param.SpecAcceptance{Rates: p.AcceptanceCDF(k), Source: fmt.Sprintf("parameters accept_tau %.4g (at %d drafts), accept_decay %.4g%s", p[param.AcceptTau], param.ReferenceDrafts, p[param.AcceptDecay], codeSrc)}
		if p[param.AcceptLateRatio] != 1 {
			a.Late = p.LateAcceptanceCDF(k)
			a.Switch = int(math.Round(p[param.AcceptSwitchTokens]))
			a.Source += fmt.Sprintf(", x %.4g from output token %d", p[param.AcceptLateRatio], a.Switch)
		}
		if p[param.AcceptOpenRatio] != 1 {
			a.Opening = p.OpeningAcceptanceCDF(k)
			a.OpenEnd = int(math.Round(p[param.AcceptOpenTokens]))
			a.Source += fmt.Sprintf(", x %.4g before output token %d", p[param.AcceptOpenRatio], a.OpenEnd)
		}
		return a
	}
	pr, ok := param.SpecPriorFor(s.Method)
	if !ok {
		pr = param.SpecPrior{Method: s.Method, First: 0.5, Decay: 0.8, Source: "no prior for this method"}
	}
	src := "prior: " + pr.Source
	if s.Method == "draft_model" && d.Drafter != nil {
		ratio := float64(d.Drafter.Params().Active) / float64(d.Model.Params().Active)
		pr.First = param.DraftModelAcceptance(ratio)
		src = fmt.Sprintf("prior: per-token acceptance %.3f for a drafter of %.3g x the target's active weights (Leviathan et al., ICML 2023, table 3)", pr.First, ratio)
	}
	if v := s.MeanAcceptanceLength; v > 0 {
		pr.First = param.FirstAcceptanceAt(v, pr.Decay, k)
		src = fmt.Sprintf("engine.speculative.mean_acceptance_length %g, shape of the %s prior (decay %g)", v, s.Method, pr.Decay)
	}
	if code != 1 {
		pr.First = param.FirstAcceptanceAt(min(param.MeanLengthAt(pr.First, pr.Decay, k)*code, param.MaxMeanLength(pr.Decay, k)), pr.Decay, k)
		src += codeSrc
	}
	return param.SpecAcceptance{Rates: param.ConditionalCDF(pr.First, pr.Decay, k), Source: src}
}

// validateSpec checks the speculative configuration against the model and the drafter, as vLLM
// does when it builds the SpeculativeConfig.
func (d *Deployment) validateSpec() error {
	s := &d.Engine.Speculative
	if !s.Enabled() {
		return nil
	}
	k := s.NumTokens
	switch {
	case s.Method == "mtp":
		n := d.Model.MTPLayers
		if n == 0 {
			return fmt.Errorf("engine.speculative.method = \"mtp\": model %q has no multi-token-prediction layers (num_nextn_predict_layers is 0 or absent); vLLM refuses it", d.Model.Name)
		}
		if k > n && k%n != 0 {
			return fmt.Errorf("engine.speculative.num_speculative_tokens = %d: with %d MTP layers, k above n_predict must be a multiple of it (vLLM reuses the layers k / n_predict times)", k, n)
		}
	case NeedsDrafter(s.Method) && d.Drafter == nil:
		how := "give the draft model's config.json: --speculative-config '{\"method\": \"" + s.Method + "\", \"model\": \"PATH\", ...}' with PATH a directory holding config.json (or the file), model.drafter = \"PATH\" in a scenario, or a Hugging Face id whose config is in the local cache (huggingface-cli download ORG/NAME config.json)"
		if s.Method == "eagle" || s.Method == "eagle3" {
			how = "an EAGLE head is described by its own config.json (a small llama-like model, architectures LlamaForCausalLMEagle3 for EAGLE-3): " + how
		}
		what := fmt.Sprintf("speculative.model = %q is not known", s.Model)
		if s.Model == "" {
			what = "no draft model is given"
		}
		return &NotSimulatedError{fmt.Sprintf("engine.speculative.method = %q", s.Method),
			fmt.Sprintf("the simulation needs the draft model's description (%s): %s", what, how)}
	}
	if len(s.Acceptance) > 0 && len(s.Acceptance) != k {
		return fmt.Errorf("engine.speculative.acceptance has %d rates for num_speculative_tokens = %d", len(s.Acceptance), k)
	}
	return nil
}
