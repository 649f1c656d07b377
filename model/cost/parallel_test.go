package cost

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/deploy/deploytest"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

// onGPUs is a built-in model on n GPUs of a kind, with tp x pp x dp ranks.
func onGPUs(t *testing.T, id, gpu string, tp, pp, dp int, ep bool) *deploy.Deployment {
	t.Helper()
	a := deploytest.BuiltinHF(t, id)
	g, err := hardware.BuiltinCatalog().Find(gpu)
	if err != nil {
		t.Fatal(err)
	}
	e := deploy.DefaultEngineConfig()
	e.TensorParallel, e.PipelineParallel, e.DataParallel, e.ExpertParallel = tp, pp, dp, ep
	e.MaxModelLen, e.MaxNumSeqs, e.MaxNumBatchedTokens = 8192, 256, 8192
	d := &deploy.Deployment{Model: a, Hardware: hardware.Machine{GPU: g, Count: tp * pp * dp}, Engine: e}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	return d
}

// prefills is n prompt chunks of tokens tokens from the start.
func prefills(n, tokens int) *StepShape {
	var s StepShape
	for i := 0; i < n; i++ {
		s.Add(SeqWork{Tokens: tokens, Emits: true})
	}
	return &s
}

// TestPipelineParallel: Llama-3.1-8B (32 layers) on 2 x H100 in two stages against one H100.
// One request's token crosses both stages one after the other: the whole model's step plus one
// hand-off (hidden states and residual, 2 x 4,096 bf16, an NCCL send/recv over NVLink). At high load two micro-batches are in flight, each through 16 layers per stage, so the
// period that gives every request a token is the whole model on half the batch: about twice one
// GPU's throughput when compute-bound (prefill), between 1x and 2x when weight-bound (decode).
func TestPipelineParallel(t *testing.T) {
	p := param.Priors()
	one := New(onGPUs(t, "meta-llama/Llama-3.1-8B-Instruct", "H100", 1, 1, 1, false), p)
	pp2d := onGPUs(t, "meta-llama/Llama-3.1-8B-Instruct", "H100", 1, 2, 1, false)
	pp2 := New(pp2d, p)

	// Latency: one decode.
	s := decodes(1, 1000, 1)
	a, b := one.Step(s), pp2.Step(s)
	g := &pp2d.Hardware.GPU
	// An NCCL send/recv over NVLink (the two GPUs are in one NVLink domain): a copy kernel's
	// fixed time and the bytes at nccl_bw_eff of the link.
	hop := p[param.KernelFixedUS]*1e-6 + 2*4096*2/(g.LinkBytesPerS()*p[param.NCCLBWEff])
	if math.Abs(b.GPUSeconds-(a.GPUSeconds+hop)) > 1e-12 {
		t.Errorf("PP2 one decode: %.3f us GPU, want TP1's %.3f us + hand-off %.3f us", b.GPUSeconds*1e6, a.GPUSeconds*1e6, hop*1e6)
	}
	if r := b.TotalSeconds / a.TotalSeconds; r < 1 || r > 1.01 {
		t.Errorf("PP2 per-token latency %.3f ms vs TP1 %.3f ms: want TP1's plus a small hand-off", b.TotalSeconds*1e3, a.TotalSeconds*1e3)
	}
	// Fewer requests than stages (the bubble): the period stays one micro-batch's full latency.
	// Throughput, prefill: 16 chunks of 512 tokens.
	s = prefills(16, 512)
	a, b = one.Step(s), pp2.Step(s)
	if r := a.TotalSeconds / b.TotalSeconds; r < 1.8 || r > 2.05 {
		t.Errorf("PP2 prefill of 16 x 512 tokens: %.2f ms per period vs TP1 %.2f ms: throughput ratio %.2f, want about 2", b.TotalSeconds*1e3, a.TotalSeconds*1e3, r)
	}
	// Decode at 256 requests: more than 1x, at most 2x.
	s = decodes(256, 2000, 1)
	a, b = one.Step(s), pp2.Step(s)
	if r := a.TotalSeconds / b.TotalSeconds; r < 1.2 || r > 2.05 {
		t.Errorf("PP2 decode of 256: ratio %.2f, want between 1.2 and 2", r)
	}
	// The fast mode's pricing is the same.
	n := s.Counts()
	var per SeqSeconds
	for _, w := range s.Seqs {
		per = per.Add(pp2.Seq(w))
	}
	if f := pp2.StepSum(&n, per); math.Abs(f.TotalSeconds-b.TotalSeconds) > 1e-12*b.TotalSeconds {
		t.Errorf("StepSum %v != Step %v", f.TotalSeconds, b.TotalSeconds)
	}

	// Memory: each GPU holds 16 of the 32 layers, the embedding on the first stage, the output
	// head on the last; and caches its 16 layers only.
	w1, w2 := one.d.WeightsPerGPU(), pp2d.WeightsPerGPU()
	if math.Abs(w2.Attention-w1.Attention/2) > 1 || w2.LMHead != 0 || w2.Embedding != w1.Embedding {
		t.Errorf("PP2 weights per GPU %+v, want half the layers of %+v, the embedding, no head", w2, w1)
	}
	specs := pp2d.KVSpecs(&p)
	if len(specs) != 1 || specs[0].Layers != 16 {
		t.Errorf("PP2 KV specs %+v: want 16 layers per stage", specs)
	}
}

// TestLockstepDataParallel: DeepSeek-R1 with attention data parallel over 8 H200s and expert
// parallel over all of them (`--data-parallel-size 8 --enable-expert-parallel`): each GPU holds
// the whole attention and dense layers and 32 of the 256 routed experts per layer; a step is set
// by the busiest rank, its own requests' attention and dense layers, and the experts of all
// ranks' tokens.
func TestLockstepDataParallel(t *testing.T) {
	p := param.Priors()
	tp8d := onGPUs(t, "deepseek-ai/DeepSeek-R1", "H200", 8, 1, 1, true)
	dp8d := onGPUs(t, "deepseek-ai/DeepSeek-R1", "H200", 1, 1, 8, true)
	w8, wd := tp8d.WeightsPerGPU(), dp8d.WeightsPerGPU()
	if math.Abs(wd.Attention-8*w8.Attention) > 1e-6*wd.Attention || wd.RoutedExperts != w8.RoutedExperts {
		t.Errorf("DP8 EP weights per GPU: attention %.2f GB (TP8 %.2f), experts %.2f GB (TP8 %.2f): want attention whole, experts as with EP 8",
			wd.Attention/1e9, w8.Attention/1e9, wd.RoutedExperts/1e9, w8.RoutedExperts/1e9)
	}
	dp8 := New(dp8d, p)
	// 8 decodes, one per rank, cost what one decode costs: with one request the 7 idle ranks run
	// dummy batches padded to the busiest rank's token count, so the experts see 8 tokens either
	// way.
	one, eight := dp8.Step(decodes(1, 2000, 1)), dp8.Step(decodes(8, 2000, 1))
	if math.Abs(eight.TotalSeconds-one.TotalSeconds) > 1e-12*one.TotalSeconds {
		t.Errorf("8 decodes over 8 ranks %.4f ms, one decode %.4f ms: want equal (one per rank; dummy batches)", eight.TotalSeconds*1e3, one.TotalSeconds*1e3)
	}
	if sixteen := dp8.Step(decodes(16, 2000, 1)); sixteen.TotalSeconds <= eight.TotalSeconds || sixteen.TotalSeconds > 1.5*eight.TotalSeconds {
		t.Errorf("16 decodes %.3f ms vs 8 %.3f ms: want a little more (two per rank, more experts touched), not 2x", sixteen.TotalSeconds*1e3, eight.TotalSeconds*1e3)
	}
	if one.Seconds[TermAllReduce] <= 0 {
		t.Errorf("DP8 exchange: %v, want the allgather/reduce-scatter of every MoE layer", one.Seconds[TermAllReduce])
	}
	// The busiest rank: 9 decodes put two on one rank.
	nine := dp8.Step(decodes(9, 2000, 1))
	if math.Abs(nine.Seconds[TermAttention]-2*one.Seconds[TermAttention]) > 1e-12*one.Seconds[TermAttention] {
		t.Errorf("9 decodes: attention %v, want the busiest rank's 2 requests %v", nine.Seconds[TermAttention], 2*one.Seconds[TermAttention])
	}
	// An all-to-all backend sends each token to its 8 experts' ranks instead of gathering all.
	ll := *dp8d
	ll.Engine.All2AllBackend = "deepep_low_latency"
	a2a := New(&ll, p).Step(decodes(64, 2000, 1))
	ag := dp8.Step(decodes(64, 2000, 1))
	if a2a.Seconds[TermAllReduce] == ag.Seconds[TermAllReduce] || a2a.Seconds[TermAllReduce] <= 0 {
		t.Errorf("exchange: all-to-all %v, allgather %v: want both, different", a2a.Seconds[TermAllReduce], ag.Seconds[TermAllReduce])
	}
	// Without expert parallel the experts are TP-sharded over all 8 ranks.
	noEP := onGPUs(t, "deepseek-ai/DeepSeek-R1", "H200", 1, 1, 8, false)
	if w := noEP.WeightsPerGPU(); math.Abs(w.RoutedExperts-w8.RoutedExperts) > 1e-3*w8.RoutedExperts {
		t.Errorf("DP8 without EP: experts %.2f GB per GPU, want 1/8 of them like TP8's %.2f GB", w.RoutedExperts/1e9, w8.RoutedExperts/1e9)
	}
}
