package llmbench

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/sim"
)

func gib(b float64) float64 { return b / (1 << 30) }

// WriteCapacity prints the server's per-GPU memory breakdown, its KV-cache layout and reported
// capacity, and for each protocol context the largest concurrency the benchmark's rule admits.
func WriteCapacity(w io.Writer, srv *sim.Server, proto *protocol.Protocol) error {
	d := srv.Deployment
	m := &srv.Memory
	l := srv.Layout
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s on %d x %s (%.2f GiB each), TP %d, EP %v, kv_cache_dtype %s, gpu_memory_utilization %.2f\n\n",
		d.Model.Name, d.Hardware.Count, d.Hardware.GPU.Name, d.Hardware.GPU.MemoryGiB, d.Engine.TensorParallel, d.Engine.ExpertParallel, d.Engine.KVCacheDType, d.Engine.GPUMemoryUtilization)
	fmt.Fprintln(tw, "Per-GPU memory\tGiB\t")
	row := func(name string, b float64, note string) { fmt.Fprintf(tw, "  %s\t%8.2f\t%s\n", name, gib(b), note) }
	row("device memory", m.TotalBytes, "")
	row("requested (x utilization)", m.RequestedBytes, "")
	wb := m.Weights
	row("weights: routed experts", wb.RoutedExperts, expertNote(d))
	row("weights: attention / linear-attn projections", wb.Attention, "split by TP")
	row("weights: dense MLP", wb.DenseMLP, "split by TP")
	row("weights: shared experts", wb.SharedExperts, "split by TP")
	row("weights: router + norms + mixers", wb.Router+wb.Extra, "replicated")
	row("weights: embedding + lm_head", wb.Embedding+wb.LMHead, "vocab-parallel")
	if d.Engine.Speculative.Enabled() || wb.Drafter > 0 {
		row("weights: drafter", wb.Drafter, d.Engine.Speculative.Model)
	}
	if wb.Encoder > 0 {
		row("weights: vision encoder", wb.Encoder, "loaded, not run for text")
	}
	row("weights: total", wb.Total(), "")
	row("activation peak (profile run)", m.ActivationPeak, d.ActivationDetail(&srv.Params))
	row("non-torch (NCCL, workspaces)", m.NonTorch, "parameter non_torch_gib")
	row("CUDA graphs estimate", m.CUDAGraphs, fmt.Sprintf("parameter cudagraph_gib x %d of %d capture sizes", d.CaptureSizes(), deploy.DefaultCaptureSizes))
	if m.Workspace > 0 {
		row("sparse-MLA context workspace", m.Workspace, fmt.Sprintf("parameter sparse_workspace_entries x max_model_len %d bf16 MLA head entries / DCP %d", d.Engine.MaxModelLen, d.Engine.DCP()))
	}
	row("available for KV cache", m.AvailableKV, "")
	tw.Flush()

	fmt.Fprintf(w, "\nKV cache layout\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  spec\tkind\tlayers\tbytes/token/layer\tstate bytes/layer\twindow\t")
	for _, s := range l.Specs {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%.0f\t%.0f\t%d\t\n", s.Name, s.Kind, s.Layers, s.BytesPerToken, s.StateBytes, s.Window)
	}
	tw.Flush()
	hybrid := ""
	if l.Hybrid {
		hybrid = " (hybrid: attention block raised until a page holds a recurrent-state page)"
	}
	fmt.Fprintf(w, "  block size %d tokens%s\n", l.BlockSize, hybrid)
	fmt.Fprintf(w, "  page %.0f bytes per layer; %d groups of %d layer slots; a block spans %.2f MiB per GPU\n",
		l.PageBytes, len(l.Groups), l.GroupSize, l.PageBytes*float64(l.GroupSize)/(1<<20))
	fmt.Fprintf(w, "  KV bytes per token per GPU (with group padding): %.0f\n", l.BytesPerToken())
	if l.Hybrid {
		fmt.Fprintf(w, "  recurrent-state blocks per running request: %d (2 + k in align mode)\n", l.StateBlocks())
	}
	fmt.Fprintf(w, "  num_gpu_blocks %d; blocks per max_model_len request %d\n", l.NumBlocks, l.BlocksPerRequestMax)
	fmt.Fprintf(w, "  GPU KV cache size: %d tokens; maximum concurrency for %d tokens per request: %.2fx\n",
		l.KVCacheSizeTokens, d.Engine.MaxModelLen, l.MaxConcurrency)

	fmt.Fprintf(w, "\nBenchmark capacity (Over capacity when C x (context + %d) > %d)\n", proto.MaxOutput, l.KVCacheSizeTokens)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "context\ttokens\tmax C (rule)\tmax C run at once\t")
	for _, c := range proto.Contexts {
		n, _ := matrix.ParseContext(c)
		t, ok := proto.Fit(n, d.Engine.MaxModelLen, proto.MaxOutput)
		if !ok {
			fmt.Fprintf(tw, "%s\t-\tdoes not fit max_model_len\t\t\n", c)
			continue
		}
		maxC := proto.MaxConcurrencyFor(t, l.KVCacheSizeTokens)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", matrix.Label(t), t, maxC, min(maxC, d.Engine.MaxNumSeqs))
	}
	return tw.Flush()
}

func expertNote(d *deploy.Deployment) string {
	if d.Engine.ExpertParallel {
		return fmt.Sprintf("1/%d of the experts per GPU (EP)", d.Engine.EPSize())
	}
	return "each expert split by TP"
}
