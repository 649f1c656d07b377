package describe

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/internal/numfmt"
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

// formatNote says how a quantized weight format computes, for people: "fp8 GEMMs", "weight-only,
// bf16 GEMMs".
func formatNote(d arch.DType) string {
	if !d.IsQuantized() {
		return ""
	}
	switch c := d.ComputeClass(); c {
	case arch.BF16:
		return "weight-only, dequantized to bf16 GEMMs"
	case arch.NVFP4:
		return "fp4 GEMMs where the GPU has them"
	default:
		return string(c) + " GEMMs"
	}
}

// Model writes the description of `servesim model show`: where it comes from, layers by kind,
// parameters (total and active per token), weight bytes by format, the quantization method and
// max_model_len vLLM resolves from the checkpoint, KV cache per token for bf16 and fp8 caches, the
// recurrent state per request, MTP layers and the description's notes. ref says where the model
// came from.
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
	fmt.Fprintf(w, "  by attention kind: %s\n", strings.Join(parts, ", "))
	if a.MTPLayers > 0 {
		fmt.Fprintf(w, "  plus %d multi-token-prediction layer(s) in the checkpoint, not counted below: vLLM loads them only as the drafter of --speculative-config '{\"method\": \"mtp\"}'\n", a.MTPLayers)
	}
	fmt.Fprintln(w)

	active := fmt.Sprintf("active %s per token", billions(c.Active))
	if with := c.ActiveWithEmbedding(a); with != c.Active {
		active += fmt.Sprintf(" (lm_head included, embedding table not; %s with it, %s in the decoder layers alone)", billions(with), billions(c.ActiveNonEmbedding(a)))
	}
	fmt.Fprintf(w, "Parameters   total %s, %s\n", billions(c.Total), active)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, x := range []struct {
		n string
		v int64
	}{{"embedding", c.Embedding}, {"lm_head", c.LMHead}, {"attention projections", c.Attention}, {"dense MLP", c.DenseMLP},
		{"shared experts", c.SharedExperts}, {"routed experts", c.RoutedExperts}, {"routers", c.Router}, {"norms and other", c.Extra},
		{"vision encoder (loaded, not run for text)", c.Encoder}} {
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
	sort.Slice(dts, func(i, j int) bool {
		if wb[dts[i]] != wb[dts[j]] {
			return wb[dts[i]] > wb[dts[j]]
		}
		return dts[i] < dts[j]
	})
	var ws []string
	for _, d := range dts {
		s := fmt.Sprintf("%s %s", d, gb(wb[d]))
		if n := formatNote(d); n != "" {
			s += " (" + n + ")"
		}
		ws = append(ws, s)
	}
	fmt.Fprintf(w, "\nWeights      %s (one copy, scales included; by format: %s)\n", gb(total), strings.Join(ws, ", "))
	quantized := false
	for _, d := range dts {
		quantized = quantized || d.IsQuantized()
	}
	switch {
	case a.Quantization != "":
		fmt.Fprintf(w, "Quantization %s (the method vLLM resolves from the checkpoint and --quantization)\n", a.Quantization)
	case quantized:
		fmt.Fprintln(w, "Quantization method not recorded in this description (its weights are quantized, see above)")
	default:
		fmt.Fprintln(w, "Quantization none: an unquantized checkpoint")
	}
	if a.MaxModelLen > 0 {
		fmt.Fprintf(w, "Context      max_model_len %s (what vLLM derives from the config when --max-model-len is not given)\n", numfmt.Commas(fmt.Sprint(a.MaxModelLen)))
	} else {
		fmt.Fprintln(w, "Context      max_model_len not known (no config.json; give --max-model-len)")
	}

	bf, f8 := a.KVBytesPerToken(1, arch.BF16), a.KVBytesPerToken(1, arch.FP8)
	state, stateLayers := a.StateBytesPerRequest(1)
	attn := a.NumLayers() - stateLayers
	fmt.Fprintf(w, "KV cache     per token of context, whole model on one GPU: bf16 %.0f bytes, fp8 %.0f bytes (%d layers keep a per-token cache)\n", bf, f8, attn)
	if a.KVCacheDType != "" {
		fmt.Fprintf(w, "             the checkpoint prescribes a %s KV cache: vLLM's kv_cache_dtype auto takes it\n", a.KVCacheDType)
	}
	for _, g := range a.Layers {
		if g.Attn.Window > 0 || g.Attn.Chunk > 0 {
			fmt.Fprintln(w, "             sliding-window and chunked layers hold only about a window (chunk) + max-num-batched-tokens tokens per request")
			break
		}
	}
	if stateLayers > 0 {
		fmt.Fprintf(w, "State        %.1f MiB per request in %d linear-attention layers (constant in context; vLLM holds 2 + k such pages per request with prefix caching)\n",
			state/(1<<20), stateLayers)
	}
	for i, n := range a.Notes {
		label := "Notes       "
		if i > 0 {
			label = "            "
		}
		fmt.Fprintf(w, "%s - %s\n", label, n)
	}
	return nil
}

// ModelSummary is one row of `servesim model list`.
type ModelSummary struct {
	ID     string
	Arch   *arch.Arch
	Source string
}

// ModelList writes `servesim model list`: one row per model with its family, layers, parameters,
// weights, quantization method and max_model_len, then where each description comes from.
func ModelList(w io.Writer, ms []ModelSummary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tfamily\tlayers\ttotal\tactive\tweights\tquantization\tmax_model_len\tMTP\t")
	for _, m := range ms {
		a := m.Arch
		c := a.Params()
		var bytes float64
		for _, b := range a.WeightBytesByDType() {
			bytes += b
		}
		q := a.Quantization
		if q == "" {
			q = "-"
		}
		ml := "-"
		if a.MaxModelLen > 0 {
			ml = numfmt.Commas(fmt.Sprint(a.MaxModelLen))
		}
		mtp := "-"
		if a.MTPLayers > 0 {
			mtp = fmt.Sprint(a.MTPLayers)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", m.ID, a.Family, a.NumLayers(), billions(c.Total), billions(c.Active), gb(bytes), q, ml, mtp)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nSources")
	for _, m := range ms {
		fmt.Fprintf(w, "  %s: %s\n", m.ID, m.Source)
	}
	return nil
}
