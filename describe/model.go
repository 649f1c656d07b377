package describe

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/model"
	"github.com/servesim/servesim/model/hf"
)

func billions(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.1f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}

func gb(b float64) string { return fmt.Sprintf("%.2f GB", b/1e9) }

// Attention is a one-line description of an attention layer's shape.
func Attention(a *model.Attention) string {
	switch a.Kind {
	case model.AttnGQA:
		s := fmt.Sprintf("GQA %d heads, %d KV heads x %d", a.Heads, a.KVHeads, a.HeadDim)
		if a.VHeadDim != a.HeadDim {
			s += fmt.Sprintf("/%d", a.VHeadDim)
		}
		if a.Window > 0 {
			s += fmt.Sprintf(", sliding window %d", a.Window)
		}
		return s
	case model.AttnMLA, model.AttnSparseMLA:
		s := fmt.Sprintf("MLA %d heads, kv_lora %d, rope %d, nope %d, v %d", a.Heads, a.KVLoraRank, a.QKRopeDim, a.QKNopeDim, a.VHeadDim)
		if a.QLoraRank > 0 {
			s += fmt.Sprintf(", q_lora %d", a.QLoraRank)
		}
		if a.Kind == model.AttnSparseMLA {
			s = "sparse " + s + fmt.Sprintf("; DSA indexer %d x %d, top-%d", a.IndexHeads, a.IndexHeadDim, a.IndexTopK)
			if a.IndexCompress > 1 {
				s += fmt.Sprintf(", keys %d:1", a.IndexCompress)
			}
		}
		return s
	case model.AttnLinear:
		s := fmt.Sprintf("linear attention %d heads, %dx%d %s state", a.StateHeads, a.StateKeyDim, a.StateValDim, a.StateDType)
		if a.ConvKernel > 0 {
			s += fmt.Sprintf(", conv %d", a.ConvKernel)
		}
		return s
	}
	return string(a.Kind)
}

// FFN is a one-line description of an MLP layer's shape.
func FFN(f *model.FFN) string {
	switch f.Kind {
	case model.FFNDense:
		return fmt.Sprintf("dense %d wide (%s)", f.Intermediate, f.DType)
	case model.FFNMoE:
		s := fmt.Sprintf("MoE %d experts, top-%d, %d wide (%s)", f.Experts, f.TopK, f.ExpertIntermediate, f.ExpertDType)
		if f.SharedExperts > 0 {
			s += fmt.Sprintf(" + %d shared %d wide (%s)", f.SharedExperts, f.SharedIntermediate, f.DType)
		}
		return s
	}
	return string(f.Kind)
}

// WeightBytesByDType sums a model's weight bytes by storage format (one copy, no parallelism).
//
// TODO(model split): this is model physics; it belongs in model beside archWeightsPerGPU (whose
// TP = 1 total it equals, see TestWeightBytesByDTypeMatchesMemory). Move it there and delete
// this copy.
func WeightBytesByDType(a *model.Arch) map[model.DType]float64 {
	m := map[model.DType]float64{}
	add := func(d model.DType, params int64) {
		if params > 0 {
			m[d] += float64(params) * d.BytesPerParam()
		}
	}
	h := a.Hidden
	for _, g := range a.Layers {
		n := int64(g.Count)
		add(g.Attn.DType, n*g.Attn.ProjParams)
		add(model.BF16, n*a.ExtraParamsPerLayer)
		switch g.FFN.Kind {
		case model.FFNDense:
			add(g.FFN.DType, n*g.FFN.DenseParams(h))
		case model.FFNMoE:
			add(g.FFN.DType, n*g.FFN.SharedParams(h))
			add(model.BF16, n*g.FFN.RouterParams(h))
			add(g.FFN.ExpertDType, n*int64(g.FFN.Experts)*g.FFN.ExpertParams(h))
		}
	}
	c := a.Params()
	add(a.EmbedDType, c.Embedding+c.LMHead)
	return m
}

// StatePerRequest is the recurrent state one request holds in a model's linear-attention layers
// (the whole model on one GPU, priors), and the number of such layers; 0, 0 for a model without
// them.
//
// TODO(model split): model physics, read off the deployment's KV specs; it belongs in model (an
// Arch method). Move it there and delete this copy.
func StatePerRequest(a *model.Arch) (bytes float64, layers int) {
	d := &model.Deployment{Model: a, Engine: model.Engine{TensorParallel: 1, KVCacheDType: "auto"}}
	p := model.Priors()
	for _, s := range d.KVSpecs(&p) {
		if s.Kind == model.SpecState {
			bytes += s.StateBytes * float64(s.Layers)
			layers += s.Layers
		}
	}
	return bytes, layers
}

// Model writes the description of `servesim model show`: layers by kind, parameters (total and
// active per token), weight bytes by format, KV cache per token for bf16 and fp8 caches, and the
// recurrent state per request. ref says where the model came from.
func Model(w io.Writer, a *model.Arch, ref string) error {
	c := a.Params()
	tied := "untied embeddings"
	if a.TiedEmbed {
		tied = "tied embeddings"
	}
	if a.SharesTargetEmbeddings {
		tied = "shares the target model's embeddings and lm_head"
	}
	fmt.Fprintf(w, "Model        %s (family %s), from %s\n", a.Name, a.Family, ref)
	fmt.Fprintf(w, "Shape        hidden %d, vocab %d (%s), %d decoder layers\n\n", a.Hidden, a.Vocab, tied, a.NumLayers())

	fmt.Fprintln(w, "Layers by kind")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  layers\tattention\tMLP\tattention weights\t")
	byKind := map[model.AttnKind]int{}
	var kinds []model.AttnKind
	for _, g := range a.Layers {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t\n", g.Count, Attention(&g.Attn), FFN(&g.FFN), g.Attn.DType)
		if byKind[g.Attn.Kind] == 0 {
			kinds = append(kinds, g.Attn.Kind)
		}
		byKind[g.Attn.Kind] += g.Count
	}
	tw.Flush()
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, byKind[k]))
	}
	fmt.Fprintf(w, "  by attention kind: %s\n\n", strings.Join(parts, ", "))

	fmt.Fprintf(w, "Parameters   total %s, active %s per token\n", billions(c.Total), billions(c.Active))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, x := range []struct {
		n string
		v int64
	}{{"embedding", c.Embedding}, {"lm_head", c.LMHead}, {"attention projections", c.Attention}, {"dense MLP", c.DenseMLP},
		{"shared experts", c.SharedExperts}, {"routed experts", c.RoutedExperts}, {"routers", c.Router}, {"norms and other", c.Extra}} {
		if x.v > 0 {
			fmt.Fprintf(tw, "  %s\t%s\t\n", x.n, billions(x.v))
		}
	}
	tw.Flush()

	wb := WeightBytesByDType(a)
	var dts []model.DType
	var total float64
	for d, b := range wb {
		dts = append(dts, d)
		total += b
	}
	sort.Slice(dts, func(i, j int) bool { return wb[dts[i]] > wb[dts[j]] })
	var ws []string
	for _, d := range dts {
		ws = append(ws, fmt.Sprintf("%s %s", d, gb(wb[d])))
	}
	fmt.Fprintf(w, "\nWeights      %s (one copy; by format: %s)\n", gb(total), strings.Join(ws, ", "))

	bf, f8 := hf.KVBytesPerToken(a, model.BF16), hf.KVBytesPerToken(a, model.FP8)
	attn := 0
	for _, g := range a.Layers {
		if g.Attn.Kind != model.AttnLinear {
			attn += g.Count
		}
	}
	fmt.Fprintf(w, "KV cache     per token of context, whole model on one GPU: bf16 %.0f bytes, fp8 %.0f bytes (%d layers keep a per-token cache)\n", bf, f8, attn)
	for _, g := range a.Layers {
		if g.Attn.Window > 0 {
			fmt.Fprintln(w, "             sliding-window layers hold only about window + max-num-batched-tokens tokens per request")
			break
		}
	}
	if state, layers := StatePerRequest(a); layers > 0 {
		fmt.Fprintf(w, "State        %.1f MiB per request in %d linear-attention layers (constant in context; vLLM holds 2 + k such pages per request with prefix caching)\n",
			state/(1<<20), layers)
	}
	return nil
}
