package describe

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/model/arch"
)

func billions(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.1f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}

func gb(b float64) string { return fmt.Sprintf("%.2f GB", b/1e9) }

// FFN is a one-line description of an MLP layer's shape.
func FFN(f *arch.FFN) string {
	switch f.Kind {
	case arch.FFNDense:
		return fmt.Sprintf("dense %d wide (%s)", f.Intermediate, f.DType)
	case arch.FFNMoE:
		s := fmt.Sprintf("MoE %d experts, top-%d, %d wide (%s)", f.Experts, f.TopK, f.ExpertIntermediate, f.ExpertDType)
		if f.SharedExperts > 0 {
			s += fmt.Sprintf(" + %d shared %d wide (%s)", f.SharedExperts, f.SharedIntermediate, f.DType)
		}
		return s
	}
	return string(f.Kind)
}

// Model writes the description of `servesim model show`: layers by kind, parameters (total and
// active per token), weight bytes by format, KV cache per token for bf16 and fp8 caches, and the
// recurrent state per request. ref says where the model came from.
func Model(w io.Writer, a *arch.Arch, ref string) error {
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
	byKind := map[arch.AttnKind]int{}
	var kinds []arch.AttnKind
	for _, g := range a.Layers {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t\n", g.Count, g.Attn.Mixer(), FFN(&g.FFN), g.Attn.DType)
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

	wb := a.WeightBytesByDType()
	var dts []arch.DType
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

	bf, f8 := a.KVBytesPerToken(1, arch.BF16), a.KVBytesPerToken(1, arch.FP8)
	state, stateLayers := a.StateBytesPerRequest(1)
	attn := a.NumLayers() - stateLayers
	fmt.Fprintf(w, "KV cache     per token of context, whole model on one GPU: bf16 %.0f bytes, fp8 %.0f bytes (%d layers keep a per-token cache)\n", bf, f8, attn)
	for _, g := range a.Layers {
		if g.Attn.Window > 0 {
			fmt.Fprintln(w, "             sliding-window layers hold only about window + max-num-batched-tokens tokens per request")
			break
		}
	}
	if stateLayers > 0 {
		fmt.Fprintf(w, "State        %.1f MiB per request in %d linear-attention layers (constant in context; vLLM holds 2 + k such pages per request with prefix caching)\n",
			state/(1<<20), stateLayers)
	}
	return nil
}
