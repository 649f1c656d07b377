package hf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/servesim/servesim/model/arch"
)

// rawQuant is config.json's quantization_config (or compression_config), and the "quantization"
// object of a ModelOpt hf_quant_config.json: the union of the fields the supported methods use.
type rawQuant struct {
	QuantMethod      string  `json:"quant_method"`
	QuantAlgo        *string `json:"quant_algo"`
	KVCacheQuantAlgo *string `json:"kv_cache_quant_algo"`

	// fp8 (vLLM Fp8Config).
	WeightBlockSize []int `json:"weight_block_size"`

	// gptq, awq.
	Bits       *int  `json:"bits"`
	WBit       *int  `json:"w_bit"`
	GroupSize  *int  `json:"group_size"`
	QGroupSize *int  `json:"q_group_size"`
	Sym        *bool `json:"sym"`
	ZeroPoint  *bool `json:"zero_point"`
	LMHead     *bool `json:"lm_head"`

	// bitsandbytes.
	LoadIn4Bit         *bool    `json:"load_in_4bit"`
	LoadIn8Bit         *bool    `json:"load_in_8bit"`
	BnB4BitQuantType   string   `json:"bnb_4bit_quant_type"`
	BnB4BitDoubleQuant *bool    `json:"bnb_4bit_use_double_quant"`
	LLMInt8SkipModules []string `json:"llm_int8_skip_modules"`

	// compressed-tensors.
	ConfigGroups  map[string]rawCTGroup `json:"config_groups"`
	KVCacheScheme *rawCTArgs            `json:"kv_cache_scheme"`

	// Exclusion lists, under the names the methods use.
	ModulesToNotConvert []string `json:"modules_to_not_convert"`
	IgnoredLayers       []string `json:"ignored_layers"`
	Ignore              []string `json:"ignore"`
	ExcludeModules      []string `json:"exclude_modules"`
}

// rawCTGroup is one scheme of a compressed-tensors config: the modules it targets and how their
// weights and input activations are quantized.
type rawCTGroup struct {
	Targets          []string   `json:"targets"`
	Weights          *rawCTArgs `json:"weights"`
	InputActivations *rawCTArgs `json:"input_activations"`
}

// rawCTArgs is compressed-tensors' QuantizationArgs.
type rawCTArgs struct {
	NumBits        *int            `json:"num_bits"`
	Type           string          `json:"type"`
	Strategy       string          `json:"strategy"`
	GroupSize      *int            `json:"group_size"`
	BlockStructure json.RawMessage `json:"block_structure"`
	Symmetric      *bool           `json:"symmetric"`
}

type rawHFQuant struct {
	Quantization *rawQuant `json:"quantization"`
}

// partKind is a part of a decoder layer that quantization may cover.
type partKind int

const (
	partAttn partKind = iota
	partDense
	partShared
	partExperts
	numParts
)

// partMask is a set of partKinds.
type partMask uint8

func (m partMask) has(p partKind) bool { return m&(1<<p) != 0 }

const allParts partMask = 1<<numParts - 1

// ctGroup is one compressed-tensors scheme, compiled.
type ctGroup struct {
	name    string
	dtype   arch.DType
	targets []string // module names and regexes
	classes partMask // parts targeted by class name ("Linear": all)
	ex      excluder
}

// quantPlan says which weights a quantization method stores in which format. An empty DType keeps
// the checkpoint's torch_dtype.
type quantPlan struct {
	method  string               // the quantization method vLLM resolves ("" for none)
	kvCache arch.DType           // KV-cache format the checkpoint prescribes ("" for none)
	parts   [numParts]arch.DType // per part, for methods with one format per part
	groups  []ctGroup            // compressed-tensors schemes, matched per module
	fused   bool                 // fused expert tensors (not nn.Linear) stay 16-bit: bitsandbytes
	exclude []string             // module-name patterns kept in torch_dtype
	ex      excluder             // exclude, compiled for the model's layer count
	notes   []string             // what the plan approximates, for people
	file    string               // where the plan came from, for errors
	obj     string               // the JSON object it came from
}

// supportedQuant is for error messages.
const supportedQuant = `quant_method fp8, fbgemm_fp8, mxfp4, modelopt (quant_algo NVFP4 or FP8), compressed-tensors, gptq, awq or bitsandbytes`

// parseQuant reads the weight formats from config.json's quantization_config (or
// compression_config) and from hf_quant_config.json (hfq, may be nil), which wins when both are
// given (vLLM reads a ModelOpt checkpoint's hf_quant_config.json).
func parseQuant(c *rawConfig, hfq []byte, file, qfile, family string) (quantPlan, error) {
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
		return q.plan(qfile, "quantization", family)
	}
	raw, obj := bytes.TrimSpace(c.QuantizationConfig), "quantization_config"
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw, obj = bytes.TrimSpace(c.CompressionConfig), "compression_config"
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return quantPlan{}, nil
	}
	var q rawQuant
	if err := decode(raw, &q); err != nil {
		return quantPlan{}, fmt.Errorf("hf: %s: %s: %w", file, obj, err)
	}
	return q.plan(file, obj, family)
}

// fusedExpertFamilies store routed experts as 3-D parameters rather than one nn.Linear per expert
// (transformers' GptOssExperts, Llama4TextExperts), which bitsandbytes leaves unquantized.
func fusedExperts(family string) bool {
	return family == "gpt_oss" || family == "llama4" || family == "llama4_text"
}

func (q *rawQuant) plan(file, obj, family string) (quantPlan, error) {
	p := quantPlan{file: file, obj: obj}
	for _, l := range [][]string{q.ModulesToNotConvert, q.IgnoredLayers, q.Ignore, q.ExcludeModules, q.LLMInt8SkipModules} {
		for _, s := range l {
			if s = strings.TrimSpace(s); s != "" {
				p.exclude = append(p.exclude, s)
			}
		}
	}
	all := func(d arch.DType) {
		for i := range p.parts {
			p.parts[i] = d
		}
	}
	fail := func(field string, v any, want string) (quantPlan, error) {
		return p, fmt.Errorf("hf: %s: %s.%s = %v: %s", file, obj, field, v, want)
	}
	method := strings.ToLower(strings.TrimSpace(q.QuantMethod))
	switch method {
	case "":
		return p, fmt.Errorf("hf: %s: %s: missing required field %q (supported: %s)", file, obj, "quant_method", supportedQuant)
	case "fp8":
		// vLLM Fp8Config: serialized fp8 with one scale per tensor, or per weight_block_size block.
		p.method = "fp8"
		switch bs := q.WeightBlockSize; {
		case len(bs) == 0:
			all(arch.FP8Tensor)
		case len(bs) == 2 && bs[0] == 128 && bs[1] == 128:
			all(arch.FP8)
		case len(bs) == 2 && bs[0] > 0 && bs[1] > 0 && bs[0] <= 4096 && bs[1] <= 4096:
			all(arch.DType(fmt.Sprintf("fp8-b%dx%d", bs[0], bs[1])))
		default:
			return fail("weight_block_size", bs, "want [rows, columns]")
		}
		return p, nil
	case "fbgemm_fp8":
		// FBGEMM fp8 (Llama 3.1 405B FP8): fp8 weights with one fp32 scale per output row, dynamic
		// per-token activation scales.
		p.method = "fbgemm_fp8"
		all(arch.FP8Channel)
		return p, nil
	case "mxfp4":
		// transformers' Mxfp4 quantizer converts the routed experts only.
		p.method = "mxfp4"
		p.parts[partExperts] = arch.MXFP4
		return p, nil
	case "modelopt_fp4":
		p.method = "modelopt_fp4"
		all(arch.NVFP4)
		p.kvCache = modeloptKV(q.KVCacheQuantAlgo, &p)
		return p, nil
	case "modelopt":
		p.method = "modelopt"
		p.kvCache = modeloptKV(q.KVCacheQuantAlgo, &p)
		if q.QuantAlgo == nil {
			return p, nil // KV-cache-only quantization
		}
		switch strings.ToUpper(*q.QuantAlgo) {
		case "NVFP4":
			p.method = "modelopt_fp4"
			all(arch.NVFP4)
		case "FP8":
			// ModelOpt FP8: one fp32 scale per weight tensor, static per-tensor input scales.
			all(arch.FP8Tensor)
		case "":
		default:
			return p, fmt.Errorf("hf: %s: %s.quant_algo = %q: supported: NVFP4, FP8", file, obj, *q.QuantAlgo)
		}
		return p, nil
	case "gptq":
		bits := intOr(q.Bits, 4)
		group := intOr(q.GroupSize, 128)
		if bits != 4 && bits != 8 {
			return fail("bits", bits, "supported: 4, 8")
		}
		d, err := groupFormat("uint"+strconv.Itoa(bits), group)
		if err != nil {
			return fail("group_size", group, err.Error())
		}
		// GPTQ stores qweight, qzeros (even when symmetric), fp16 scales per group and g_idx.
		all(d)
		p.method = "gptq"
		if (group == -1 || group == 32 || group == 64 || group == 128) && (q.Sym == nil || *q.Sym) {
			p.method = "gptq_marlin"
			p.notes = append(p.notes, "vLLM resolves gptq to gptq_marlin on GPUs of compute capability 8.0 or newer")
		}
		if q.LMHead != nil && *q.LMHead {
			p.notes = append(p.notes, "the checkpoint quantizes lm_head too; it is counted 16-bit here")
		}
		return p, nil
	case "awq":
		bits := intOr(q.Bits, intOr(q.WBit, 4))
		group := intOr(q.GroupSize, intOr(q.QGroupSize, 128))
		if bits != 4 {
			return fail("bits", bits, "supported: 4")
		}
		elem := "uint4"
		if q.ZeroPoint != nil && !*q.ZeroPoint {
			elem = "int4"
		}
		d, err := groupFormat(elem, group)
		if err != nil {
			return fail("group_size", group, err.Error())
		}
		all(d)
		p.method = "awq"
		if group == -1 || group == 32 || group == 64 || group == 128 {
			p.method = "awq_marlin"
			p.notes = append(p.notes, "vLLM resolves awq to awq_marlin on GPUs of compute capability 8.0 or newer")
		}
		return p, nil
	case "bitsandbytes":
		p.method = "bitsandbytes"
		p.fused = fusedExperts(family)
		switch {
		case q.LoadIn8Bit != nil && *q.LoadIn8Bit:
			all("bnb-int8")
		case q.LoadIn4Bit != nil && *q.LoadIn4Bit:
			t := strings.ToLower(q.BnB4BitQuantType)
			if t == "" {
				t = "fp4" // transformers' BitsAndBytesConfig default
			}
			if t != "nf4" && t != "fp4" {
				return fail("bnb_4bit_quant_type", strconv.Quote(q.BnB4BitQuantType), "want nf4 or fp4")
			}
			d := "bnb-" + t
			if q.BnB4BitDoubleQuant != nil && *q.BnB4BitDoubleQuant {
				d += "-dq"
			}
			all(arch.DType(d))
		default:
			return p, fmt.Errorf("hf: %s: %s: bitsandbytes needs load_in_4bit or load_in_8bit true", file, obj)
		}
		p.notes = append(p.notes, "bitsandbytes: weight bytes as stored; the GEMMs dequantize to bf16 and run at the bf16 rate")
		if p.fused {
			p.notes = append(p.notes, "bitsandbytes quantizes nn.Linear modules only: this family's fused expert tensors stay 16-bit")
		}
		return p, nil
	case "compressed-tensors", "compressed_tensors":
		p.method = "compressed-tensors"
		return p.compressedTensors(q)
	}
	return p, fmt.Errorf("hf: %s: %s.quant_method = %q: supported: %s", file, obj, q.QuantMethod, supportedQuant)
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// groupFormat is elem with one scale per group of group inputs, or per row for group -1.
func groupFormat(elem string, group int) (arch.DType, error) {
	var d arch.DType
	switch {
	case group == -1:
		d = arch.DType(elem + "-channel")
	case group > 0 && group <= 1<<20:
		d = arch.DType(elem + "-g" + strconv.Itoa(group))
	default:
		return "", fmt.Errorf("want -1 (per channel) or a positive group size")
	}
	return d, d.Valid()
}

// modeloptKV is the KV-cache format of a ModelOpt kv_cache_quant_algo.
func modeloptKV(algo *string, p *quantPlan) arch.DType {
	if algo == nil {
		return ""
	}
	switch strings.ToUpper(*algo) {
	case "FP8":
		return arch.FP8
	case "":
		return ""
	}
	p.notes = append(p.notes, fmt.Sprintf("kv_cache_quant_algo %q is not modelled; the KV cache is taken as kv_cache_dtype says", *algo))
	return ""
}

// compressedTensors reads config_groups (in key order) and kv_cache_scheme.
func (p *quantPlan) compressedTensors(q *rawQuant) (quantPlan, error) {
	if len(q.ConfigGroups) == 0 {
		return *p, fmt.Errorf("hf: %s: %s: compressed-tensors without config_groups", p.file, p.obj)
	}
	names := make([]string, 0, len(q.ConfigGroups))
	for n := range q.ConfigGroups {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g := q.ConfigGroups[n]
		where := fmt.Sprintf("%s.config_groups.%s", p.obj, n)
		if g.Weights == nil {
			// Activation-only schemes leave the weights as they are.
			continue
		}
		d, err := ctFormat(g.Weights, g.InputActivations)
		if err != nil {
			return *p, fmt.Errorf("hf: %s: %s.weights: %w", p.file, where, err)
		}
		cg := ctGroup{name: n, dtype: d}
		for _, t := range g.Targets {
			t = strings.TrimSpace(t)
			if m, ok := classParts(t); ok {
				cg.classes |= m
			} else if t != "" {
				cg.targets = append(cg.targets, t)
			}
		}
		if len(g.Targets) == 0 {
			return *p, fmt.Errorf("hf: %s: %s: missing required field %q", p.file, where, "targets")
		}
		p.groups = append(p.groups, cg)
	}
	if k := q.KVCacheScheme; k != nil && k.NumBits != nil {
		if *k.NumBits == 8 && strings.EqualFold(k.Type, "float") {
			p.kvCache = arch.FP8
		} else {
			p.notes = append(p.notes, fmt.Sprintf("kv_cache_scheme %d-bit %s is not modelled", *k.NumBits, k.Type))
		}
	}
	return *p, nil
}

// ctFormat turns a compressed-tensors weight scheme (and whether activations are quantized) into a
// weight format.
func ctFormat(w, in *rawCTArgs) (arch.DType, error) {
	if w.NumBits == nil {
		return "", fmt.Errorf("missing required field %q", "num_bits")
	}
	bits, typ := *w.NumBits, strings.ToLower(w.Type)
	if typ == "" {
		typ = "int"
	}
	strategy := strings.ToLower(w.Strategy)
	weightOnly := in == nil || in.NumBits == nil
	sym := w.Symmetric == nil || *w.Symmetric
	group := func() (int, error) {
		if w.GroupSize == nil || *w.GroupSize <= 0 {
			return 0, fmt.Errorf("strategy %q needs group_size > 0", strategy)
		}
		return *w.GroupSize, nil
	}
	layout := func() (string, error) {
		switch strategy {
		case "tensor":
			return "tensor", nil
		case "channel":
			return "channel", nil
		case "group", "tensor_group":
			g, err := group()
			return "g" + strconv.Itoa(g), err
		case "block":
			m, n, err := blockStructure(w.BlockStructure)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("b%dx%d", m, n), nil
		}
		return "", fmt.Errorf("strategy = %q: want tensor, channel, group, tensor_group or block", w.Strategy)
	}
	var d string
	switch {
	case typ == "float" && bits == 8:
		l, err := layout()
		if err != nil {
			return "", err
		}
		d = "fp8-" + l
		if l == "b128x128" {
			d = string(arch.FP8)
			if weightOnly {
				d = "fp8-b128x128"
			}
		}
	case typ == "int" && (bits == 8 || bits == 4):
		l, err := layout()
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(l, "b") {
			return "", fmt.Errorf("block strategy with %d-bit integers is not supported", bits)
		}
		elem := "int" + strconv.Itoa(bits)
		if !sym {
			elem = "u" + elem
		}
		d = elem + "-" + l
		if bits == 4 {
			weightOnly = false // 4-bit integers always run weight-only (W4A16); no suffix needed
		}
	case typ == "float" && bits == 4:
		g, err := group()
		if err != nil {
			return "", err
		}
		switch g {
		case 16:
			d = string(arch.NVFP4)
		case 32:
			d = string(arch.MXFP4)
		default:
			return "", fmt.Errorf("4-bit float with group_size %d: want 16 (NVFP4) or 32 (MXFP4)", g)
		}
	default:
		return "", fmt.Errorf("%d-bit %s weights are not supported (want 8-bit float or int, 4-bit int or float)", bits, typ)
	}
	if weightOnly {
		d += "-a16"
	}
	dt := arch.DType(d)
	return dt, dt.Valid()
}

// blockStructure reads block_structure as [rows, columns] or "RxC".
func blockStructure(raw json.RawMessage) (int, int, error) {
	raw = bytes.TrimSpace(raw)
	var l []int
	if json.Unmarshal(raw, &l) == nil && len(l) == 2 {
		if l[0] > 0 && l[1] > 0 && l[0] <= 4096 && l[1] <= 4096 {
			return l[0], l[1], nil
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		a, b, ok := strings.Cut(s, "x")
		m, e1 := strconv.Atoi(a)
		n, e2 := strconv.Atoi(b)
		if ok && e1 == nil && e2 == nil && m > 0 && n > 0 && m <= 4096 && n <= 4096 {
			return m, n, nil
		}
	}
	return 0, 0, fmt.Errorf("block_structure = %s: want [rows, columns] up to 4096", string(raw))
}

// classParts maps a module class name of a compressed-tensors target or ignore list to the parts
// it covers: "Linear" every part, names ending in Attention the attention, MLP classes the dense
// MLP and shared experts, MoE and expert classes the experts. ok is false for anything that is not
// a class name (module names, globs, regexes).
func classParts(s string) (partMask, bool) {
	if s == "" || strings.ContainsAny(s, ".*?:") || s[0] < 'A' || s[0] > 'Z' {
		return 0, false
	}
	switch {
	case s == "Linear":
		return allParts, true
	case strings.Contains(s, "Attention"):
		return 1 << partAttn, true
	case strings.Contains(s, "Moe") || strings.Contains(s, "MoE") || strings.Contains(s, "Expert"):
		return 1<<partExperts | 1<<partShared, true
	case strings.Contains(s, "MLP"):
		return 1<<partDense | 1<<partShared, true
	}
	return 0, true // a class we do not place (a vision module, a norm): it covers none of our parts
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
// match against "." + module + "." finds it at any depth on module-name boundaries; or a
// compressed-tensors regex ("re:" prefix), matched with Python's re.match semantics (anchored at
// the start of the module name).
type pattern struct {
	s    string
	glob bool
	re   *regexp.Regexp
}

func (p pattern) match(dotted string) bool {
	if p.re != nil {
		return p.re.MatchString(strings.TrimSuffix(strings.TrimPrefix(dotted, "."), "."))
	}
	if p.glob {
		return glob(p.s, dotted)
	}
	return strings.Contains(dotted, p.s)
}

// excluder is an exclusion (or target) list split into patterns that can only name one layer (they
// contain a literal "layers.N."), the rest, and class names.
type excluder struct {
	general []pattern
	byLayer map[string][]pattern
	classes partMask
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
		if m, ok := classParts(raw); ok {
			e.classes |= m
			continue
		}
		var p pattern
		if expr, ok := strings.CutPrefix(raw, "re:"); ok {
			if len(expr) > 1024 {
				return e, fmt.Errorf("hf: %s: %s: regex %q longer than 1,024 bytes", file, obj, raw)
			}
			re, err := regexp.Compile(`^(?:` + expr + `)`)
			if err != nil {
				return e, fmt.Errorf("hf: %s: %s: regex %q: %v (Go's RE2 syntax: no lookaround or backreferences)", file, obj, raw, err)
			}
			p = pattern{s: raw, re: re}
		} else {
			p = pattern{s: "." + raw + ".", glob: strings.ContainsAny(raw, "*?")}
			if p.glob {
				p.s = "*" + p.s + "*"
			}
			if n, ok := layerOf(raw); ok {
				e.byLayer[n] = append(e.byLayer[n], p)
				continue
			}
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

// format returns the format of one part of layer li: torch_dtype if the part is excluded (by
// name, pattern or class) or not targeted, else the method's format.
func (p *quantPlan) format(li string, pk partKind, prefix string, names []string, base arch.DType) arch.DType {
	if p.ex.classes.has(pk) || p.ex.excluded(li, prefix, names) {
		return base
	}
	if len(p.groups) > 0 {
		// compressed-tensors: a target naming the module (or a regex matching it) wins over a
		// class target.
		for i := range p.groups {
			if p.groups[i].ex.excluded(li, prefix, names) {
				return p.groups[i].dtype
			}
		}
		for i := range p.groups {
			if p.groups[i].classes.has(pk) {
				return p.groups[i].dtype
			}
		}
		return base
	}
	if p.parts[pk] == "" {
		return base
	}
	return p.parts[pk]
}

// apply sets the weight formats of layer i.
func (p *quantPlan) apply(i int, l *layer, base arch.DType) {
	li := strconv.Itoa(i)
	lp := l.path + li + "."
	l.attn.DType = p.format(li, partAttn, lp+l.attnPrefix+".", attnProjs(), base)
	switch l.ffn.Kind {
	case arch.FFNDense:
		l.ffn.DType = p.format(li, partDense, lp+l.densePrefix+".", mlpProjs(), base)
		l.ffn.ExpertDType = l.ffn.DType
	case arch.FFNMoE:
		l.ffn.DType = base
		if l.ffn.SharedExperts > 0 {
			l.ffn.DType = p.format(li, partShared, lp+l.moePrefix+"."+l.sharedName+".", mlpProjs(), base)
		}
		l.ffn.ExpertDType = base
		if !(p.fused && l.fusedExperts) {
			l.ffn.ExpertDType = p.format(li, partExperts, lp+l.moePrefix+".experts.", expertProjs(), base)
		}
	}
}

// moduleMatch reports whether an exclusion pattern names module m or one of its ancestors. Patterns
// are fnmatch-style globs ('*' any run of characters, dots included; '?' one character), and a
// pattern without a leading path matches at any depth: "lm_head", "self_attn",
// "model.layers.*.self_attn", "*.mlp.experts*" and "model.layers.3.mlp.down_proj" all work; "re:"
// patterns are regexes anchored at the start of the name.
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
