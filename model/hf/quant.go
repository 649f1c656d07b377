package hf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/servesim/servesim/model/arch"
)

// rawQuant is config.json's quantization_config, and the "quantization" object of a ModelOpt
// hf_quant_config.json.
type rawQuant struct {
	QuantMethod         string   `json:"quant_method"`
	QuantAlgo           *string  `json:"quant_algo"`
	Bits                *int     `json:"bits"`
	ModulesToNotConvert []string `json:"modules_to_not_convert"`
	IgnoredLayers       []string `json:"ignored_layers"`
	Ignore              []string `json:"ignore"`
	ExcludeModules      []string `json:"exclude_modules"`
}

type rawHFQuant struct {
	Quantization *rawQuant `json:"quantization"`
}

// quantPlan says which weights a quantization method stores in which format. An empty DType keeps
// the checkpoint's torch_dtype.
type quantPlan struct {
	attn, mlp, experts arch.DType // attention projections; dense MLP and shared experts; routed experts
	exclude            []string   // module-name patterns kept in torch_dtype
	ex                 excluder   // exclude, compiled for the model's layer count
	file, obj          string     // where the plan came from, for errors
}

// supportedQuant is for error messages.
const supportedQuant = `quant_method fp8, mxfp4, modelopt (quant_algo NVFP4 or FP8), gptq or awq (bits 4 or 8)`

// parseQuant reads the weight formats from config.json's quantization_config (raw) and from
// hf_quant_config.json (hfq, may be nil), which wins when both are given.
func parseQuant(raw json.RawMessage, hfq []byte, file, qfile string) (quantPlan, error) {
	if hfq != nil {
		var h rawHFQuant
		if err := decode(hfq, &h); err != nil {
			return quantPlan{}, fmt.Errorf("hf: %s: %w", qfile, err)
		}
		if h.Quantization == nil {
			return quantPlan{}, fmt.Errorf("hf: %s: missing required field %q", qfile, "quantization")
		}
		q := *h.Quantization
		q.QuantMethod = "modelopt"
		return q.plan(qfile, "quantization")
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return quantPlan{}, nil
	}
	var q rawQuant
	if err := decode(raw, &q); err != nil {
		return quantPlan{}, fmt.Errorf("hf: %s: quantization_config: %w", file, err)
	}
	return q.plan(file, "quantization_config")
}

func (q *rawQuant) plan(file, obj string) (quantPlan, error) {
	p := quantPlan{file: file, obj: obj}
	for _, l := range [][]string{q.ModulesToNotConvert, q.IgnoredLayers, q.Ignore, q.ExcludeModules} {
		for _, s := range l {
			if s = strings.TrimSpace(s); s != "" {
				p.exclude = append(p.exclude, s)
			}
		}
	}
	all := func(d arch.DType) quantPlan {
		p.attn, p.mlp, p.experts = d, d, d
		return p
	}
	switch strings.ToLower(q.QuantMethod) {
	case "fp8":
		return all(arch.FP8), nil
	case "mxfp4":
		// transformers' Mxfp4 quantizer converts the routed experts only.
		p.experts = arch.MXFP4
		return p, nil
	case "modelopt_fp4":
		return all(arch.NVFP4), nil
	case "modelopt":
		if q.QuantAlgo == nil {
			return p, nil // KV-cache-only quantization
		}
		switch strings.ToUpper(*q.QuantAlgo) {
		case "NVFP4":
			return all(arch.NVFP4), nil
		case "FP8":
			return all(arch.FP8), nil
		case "":
			return p, nil
		}
		return p, fmt.Errorf("hf: %s: %s.quant_algo = %q: supported: NVFP4, FP8", file, obj, *q.QuantAlgo)
	case "gptq", "awq":
		bits := 4
		if q.Bits != nil {
			bits = *q.Bits
		}
		switch bits {
		case 4:
			return all(arch.INT4), nil
		case 8:
			return all(arch.INT8), nil
		}
		return p, fmt.Errorf("hf: %s: %s.bits = %d: supported: 4, 8", file, obj, bits)
	}
	return p, fmt.Errorf("hf: %s: %s.quant_method = %q: supported: %s", file, obj, q.QuantMethod, supportedQuant)
}

// Representative module names of each part of a decoder layer, matched against exclusion lists.
// Only the large projections count: excluding a small one (in_proj_ba, a router) keeps nothing
// coarse in high precision.
func attnProjs() []string {
	return []string{"q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "in_proj_qkvz", "out_proj"}
}

func mlpProjs() []string { return []string{"gate_proj", "up_proj", "down_proj", "gate_up_proj"} }

func expertProjs() []string {
	return []string{"0.gate_proj", "0.up_proj", "0.down_proj", "0.w1", "0.w2", "0.w3", "gate_up_proj", "down_proj"}
}

// maxExcludeWork bounds layers x bytes of layer-independent exclusion patterns, so that a hostile
// list cannot make Parse slow. Real lists are a few layer-independent globs plus any number of
// per-layer names ("model.layers.12.self_attn"), which cost nothing here.
const maxExcludeWork = 1 << 19

// pattern is a compiled exclusion pattern: an fnmatch glob or a literal, wrapped in dots so that one
// match against "." + module + "." finds it at any depth on module-name boundaries.
type pattern struct {
	s    string
	glob bool
}

func (p pattern) match(dotted string) bool {
	if p.glob {
		return glob(p.s, dotted)
	}
	return strings.Contains(dotted, p.s)
}

// excluder is an exclusion list split into patterns that can only name one layer (they contain
// a literal "layers.N.") and the rest.
type excluder struct {
	general []pattern
	byLayer map[string][]pattern
}

func compileExcludes(pats []string, layers int, file, obj string) (excluder, error) {
	e := excluder{byLayer: map[string][]pattern{}}
	seen := map[string]bool{}
	work := 0
	for _, raw := range pats {
		if seen[raw] {
			continue
		}
		seen[raw] = true
		p := pattern{s: "." + raw + ".", glob: strings.ContainsAny(raw, "*?")}
		if p.glob {
			p.s = "*" + p.s + "*"
		}
		if n, ok := layerOf(raw); ok {
			e.byLayer[n] = append(e.byLayer[n], p)
			continue
		}
		e.general = append(e.general, p)
		work += layers * len(p.s)
		if work > maxExcludeWork {
			return e, fmt.Errorf("hf: %s: %s: exclusion list too long (%d patterns without a layer index for %d layers)", file, obj, len(e.general), layers)
		}
	}
	return e, nil
}

// layerOf returns N when pattern p contains the literal "layers.N.", so that it can only match
// modules of layer N (every module name has exactly one "layers.N." in it).
func layerOf(p string) (string, bool) {
	for rest := p; ; {
		i := strings.Index(rest, "layers.")
		if i < 0 {
			return "", false
		}
		rest = rest[i+len("layers."):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 0 && j < len(rest) && rest[j] == '.' {
			return rest[:j], true
		}
	}
}

// excluded reports whether any module prefix+name of layer is excluded.
func (e *excluder) excluded(layer string, prefix string, names []string) bool {
	for _, ps := range [][]pattern{e.byLayer[layer], e.general} {
		for _, p := range ps {
			for _, n := range names {
				if p.match("." + prefix + n + ".") {
					return true
				}
			}
		}
	}
	return false
}

// apply sets the weight formats of layer i.
func (p *quantPlan) apply(i int, l *layer, base arch.DType) {
	li := strconv.Itoa(i)
	pick := func(d arch.DType, prefix string, names []string) arch.DType {
		if d == "" || p.ex.excluded(li, prefix, names) {
			return base
		}
		return d
	}
	lp := "model.layers." + li + "."
	l.attn.DType = pick(p.attn, lp+l.attnPrefix+".", attnProjs())
	switch l.ffn.Kind {
	case arch.FFNDense:
		l.ffn.DType = pick(p.mlp, lp+"mlp.", mlpProjs())
		l.ffn.ExpertDType = l.ffn.DType
	case arch.FFNMoE:
		l.ffn.DType = base
		if l.ffn.SharedExperts > 0 {
			l.ffn.DType = pick(p.mlp, lp+l.moePrefix+"."+l.sharedName+".", mlpProjs())
		}
		l.ffn.ExpertDType = pick(p.experts, lp+l.moePrefix+".experts.", expertProjs())
	}
}

// moduleMatch reports whether an exclusion pattern names module m or one of its ancestors. Patterns
// are fnmatch-style globs ('*' any run of characters, dots included; '?' one character), and a
// pattern without a leading path matches at any depth: "lm_head", "self_attn",
// "model.layers.*.self_attn", "*.mlp.experts*" and "model.layers.3.mlp.down_proj" all work.
func moduleMatch(pat, m string) bool {
	e, _ := compileExcludes([]string{pat}, 1, "", "")
	for _, ps := range e.byLayer {
		e.general = append(e.general, ps...)
	}
	return e.excluded("", "", []string{m})
}

// glob matches s against a pattern of literal bytes, '*' and '?', in O(len(pat) x len(s)).
func glob(pat, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pat) && (pat[p] == '?' || pat[p] == s[i]):
			p++
			i++
		case p < len(pat) && pat[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pat) && pat[p] == '*' {
		p++
	}
	return p == len(pat)
}
