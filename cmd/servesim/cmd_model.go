package main

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/hf"
)

func init() {
	register(&command{
		Name:  "model",
		Args:  "show FILE|NAME",
		Short: "describe a model: layers by kind, parameters, active parameters, weight bytes and KV bytes per token",
		Long: `Reads a built-in model description (` + strings.Join(arch.BuiltinNames(), ", ") + `), a servesim model TOML
file, or a Hugging Face config.json (with hf_quant_config.json beside it, if any; a directory
holding config.json works too). Supported config.json families: ` + strings.Join(hf.Families(), ", ") + `.

Prints the decoder layers grouped by attention and MLP kind, the parameter count (total and active
per token), the weight bytes by storage format, the KV cache per token of context for bf16 and fp8
caches (the whole model on one GPU), and the recurrent state a request holds in linear-attention
layers.

Example:
  servesim model show glm-5.3-flash
  servesim model show ./Llama-3.1-70B/config.json`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var out outFlag
			out.register(fs, "the description")
			return func(args []string) error {
				if len(args) != 2 || args[0] != "show" {
					return usagef("want 'model show FILE|NAME'")
				}
				if err := out.check(); err != nil {
					return err
				}
				a, err := loadModel(args[1])
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				writeModel(&buf, a, args[1])
				return out.write(e.stdout, &buf)
			}
		},
	})
}

func billions(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.1f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}

func gb(b float64) string { return fmt.Sprintf("%.2f GB", b/1e9) }

func describeFFN(f *arch.FFN) string {
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

// weightBytesByDType sums a model's weight bytes by storage format (one copy, no parallelism).
func weightBytesByDType(a *arch.Arch) map[arch.DType]float64 {
	m := map[arch.DType]float64{}
	for _, w := range a.WeightSets() {
		if w.Total() > 0 {
			m[w.DType] += w.Bytes()
		}
	}
	return m
}

func writeModel(w io.Writer, a *arch.Arch, ref string) {
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
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t\n", g.Count, g.Attn.Mixer(), describeFFN(&g.FFN), g.Attn.DType)
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

	wb := weightBytesByDType(a)
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
}
