package validate

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/workload"
)

func excerptCases(t *testing.T) map[string]*Case {
	t.Helper()
	rows, err := ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Case{}
	for _, c := range Map(rows, nil) {
		if !c.Expressed() {
			t.Errorf("%s: not expressed: %s", c.ID, c.Reason)
		}
		out[c.ID] = c
	}
	return out
}

func intp(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func resolved(t *testing.T, c *Case) deploy.EngineConfig {
	t.Helper()
	e, _, err := deploy.Resolve(c.Args, deploy.ModelGPU{Model: c.Model, GPU: &c.GPU})
	if err != nil {
		t.Fatalf("%s: %v", c.ID, err)
	}
	return e
}

// TestMapRows checks the mapping of real rows to deployments and workloads, value by value, against
// the rows as read by hand (testdata/corpus_excerpt.csv).
func TestMapRows(t *testing.T) {
	cs := excerptCases(t)

	// inference-sim: both stages of one experiment in one run; recorded limits; 592 input tokens
	// (591.63) of which the 100-token system prompt in 10 groups; 247 generated (nominal); the
	// client's 193.72 / 195.78 for throughput and the derived TPOT.
	s0, s1 := cs["isim-llama2-7b-tp1-codegen-stage0"], cs["isim-llama2-7b-tp1-codegen-stage1"]
	if s0.Group != s1.Group || s0.Group != "default_args/20260217-155451-llama-2-7b-tp1-codegen" || s0.Stage != 0 || s1.Stage != 1 {
		t.Errorf("stage group %q / %q, stages %d %d", s0.Group, s1.Group, s0.Stage, s1.Stage)
	}
	wantStages := []Stage{{5, 3000}, {10, 6000}}
	for _, c := range []*Case{s0, s1} {
		if len(c.Stages) != 2 || c.Stages[0] != wantStages[0] || c.Stages[1] != wantStages[1] {
			t.Errorf("%s: stages %+v, want %+v", c.ID, c.Stages, wantStages)
		}
		if c.stageLengths != [3]int{592, 247, 100} || c.stageGroups != 10 || c.stagePerGroup != 10 || !c.DerivedTPOT {
			t.Errorf("%s: lengths %v, groups %d x %d, derived TPOT %v; want [592 247 100], 10 x 10, true", c.ID, c.stageLengths, c.stageGroups, c.stagePerGroup, c.DerivedTPOT)
		}
		if c.Args.Version != "" || intp(c.Args.TensorParallel) != 1 || intp(c.Args.MaxNumSeqs) != 128 || intp(c.Args.MaxNumBatchedTokens) != 2048 ||
			intp(c.Args.MaxModelLen) != 4096 || c.Args.Usage != "" || c.Scoring != Absolute || c.Args.PipelineParallel != nil {
			t.Errorf("%s: args %+v scoring %s", c.ID, c.Args, c.Scoring)
		}
	}
	if s0.CountedOutput != 193.72 || s1.CountedOutput != 195.78 {
		t.Errorf("counted outputs %v %v", s0.CountedOutput, s1.CountedOutput)
	}
	if e := resolved(t, s0); !e.PrefixCaching || !e.ChunkedPrefill || !e.AsyncScheduling || e.Version != deploy.DefaultVersion {
		t.Errorf("isim engine (version not recorded: today's defaults): %+v", e)
	}

	// dstack 405B on 8 x H100, ShareGPT at 16 req/s: vLLM 0.6.3 V0 with the recorded server flags.
	sg := cs["dstack-l405b-h100x8-sharegpt-qps16"]
	if sg.Args.Version != "0.6.3.post2.dev308+gb489fc3c" || intp(sg.Args.TensorParallel) != 8 || intp(sg.Args.MaxNumSeqs) != 512 ||
		intp(sg.Args.MaxNumBatchedTokens) != 512 || intp(sg.Args.MaxModelLen) != 91680 || sg.Args.ChunkedPrefill == nil || !*sg.Args.ChunkedPrefill ||
		sg.Args.PrefixCaching == nil || *sg.Args.PrefixCaching {
		t.Errorf("sharegpt args %+v", sg.Args)
	}
	if e := resolved(t, sg); e.MaxCaptureSize != 256 || e.AsyncScheduling || e.GPUMemoryUtilization != 0.9 || e.KVCacheDType != "auto" {
		t.Errorf("sharegpt engine %+v", e)
	}
	if sp := sg.Spec; sp.Kind != workload.KindVLLMBench || sp.VLLM.RequestRate != 16 || sp.VLLM.N() != 1000 || sp.VLLM.MaxConcurrency != 0 {
		t.Errorf("sharegpt workload %+v", sp)
	} else {
		var in, out float64
		for _, p := range sp.VLLM.Prompts() {
			in += float64(p.Tokens)
			out += float64(p.OutputTokens)
			if float64(p.Tokens) < 0.5*215.196-1 || float64(p.Tokens) > 1.5*215.196+1 {
				t.Errorf("input %d outside ±50%% of 215.2", p.Tokens)
				break
			}
		}
		// 1000 uniform draws: the mean is within 3 standard errors (0.289 x 215 / sqrt(1000) = 2 tokens).
		if math.Abs(in/1000-215.196) > 6 || math.Abs(out/1000-120.689) > 4 {
			t.Errorf("mean lengths %.1f / %.1f, want about 215.2 / 120.7", in/1000, out/1000)
		}
	}

	// dstack 405B offline on 8 x MI300X: LLM class, enforce_eager; V0 turns chunked prefill on
	// for max_model_len 91680 > 32K with 0.6.x's 512 tokens.
	off := cs["dstack-l405b-mi300xx8-offline-in128-out2048-n4"]
	if off.Args.Usage != deploy.UsageLLMClass || off.Args.EnforceEager == nil || !*off.Args.EnforceEager || off.Spec.Kind != workload.KindOffline ||
		len(off.Spec.VLLM.Prompts()) != 4 || off.Spec.VLLM.Prompts()[0] != (workload.BenchPrompt{Tokens: 128, OutputTokens: 2048}) {
		t.Errorf("offline case args %+v spec %+v", off.Args, off.Spec)
	}
	if e := resolved(t, off); !e.ChunkedPrefill || e.MaxNumBatchedTokens != 512 || e.MaxNumSeqs != 256 || !e.EnforceEager {
		t.Errorf("offline engine %+v", e)
	}

	// DeepSeek-R1 on 8 x MI300X (0.7.3.dev138), closed loop at 128: max_model_len from the flags;
	// MLA forces whole-prompt prefill: budget 32768.
	cl := cs["dstack-dsr1-mi300xx8-vllm-in3200-out800-c128"]
	if intp(cl.Args.MaxModelLen) != 32768 || cl.Spec.Kind != workload.KindClosed || cl.Spec.Closed != (workload.Closed{Requests: 500, Concurrency: 128}) ||
		cl.Spec.Lengths != (workload.Lengths{InputTokens: 3200, OutputTokens: 800, PrefixGroups: 1}) {
		t.Errorf("closed case args %+v spec %+v", cl.Args, cl.Spec)
	}
	if e := resolved(t, cl); e.ChunkedPrefill || e.PrefixCaching || e.MaxNumBatchedTokens != 32768 || e.MaxNumSeqs != 256 {
		t.Errorf("closed engine %+v", e)
	}

	// The shared-prefix run on H200 (0.7.4.dev181): prefix caching and chunked prefill as launched.
	sp := cs["dstack-dsr1-h200x8-vllm-sharedprefix-c128"]
	if sp.Spec.Lengths != (workload.Lengths{InputTokens: 3272, OutputTokens: 800, PrefixTokens: 2000, PrefixGroups: 10}) || sp.Args.AttentionBackend != "FLASHMLA" {
		t.Errorf("shared-prefix spec %+v args %+v", sp.Spec.Lengths, sp.Args)
	}
	if e := resolved(t, sp); !e.ChunkedPrefill || !e.PrefixCaching || e.MaxNumBatchedTokens != 2048 || e.MaxModelLen != 163840 {
		t.Errorf("shared-prefix engine %+v", e)
	}

	// TensorRT-LLM: ratio scoring, LLM class, expert parallel, max_model_len = ISL + OSL; PP 4 as
	// four micro-batch engines.
	q := cs["trt-q3-30b-rtxpro6000sx2-tp2pp1-in128-out128"]
	if q.Scoring != Ratio || q.Args.Usage != deploy.UsageLLMClass || q.Args.ExpertParallel == nil || !*q.Args.ExpertParallel ||
		intp(q.Args.TensorParallel) != 2 || intp(q.Args.MaxModelLen) != 256 || q.Args.PipelineParallel != nil || len(q.Spec.VLLM.Prompts()) != 30000 {
		t.Errorf("trt qwen args %+v", q.Args)
	}
	l := cs["trt-l70b-rtxpro6000sx4-tp1pp4-in128-out128"]
	if intp(l.Args.PipelineParallel) != 4 || intp(l.Args.TensorParallel) != 1 || l.Model.NumLayers() != 80 {
		t.Errorf("trt llama args %+v: want the engine's pipeline parallel 4 on TP 1", l.Args)
	}
}

func TestMapRefusals(t *testing.T) {
	rows, err := ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit  func(r *Row)
		class string
	}{
		{func(r *Row) { r.GPU = "tpu-v5e" }, ReasonGPU},
		{func(r *Row) { r.Model = "acme/unknown-7b" }, ReasonModel},
		{func(r *Row) { r.Engine = "lmdeploy" }, ReasonEngine},
		{func(r *Row) { r.DP, r.GPUCount = 2, 2 }, ReasonParallel},
		{func(r *Row) { r.WorkloadKind = "burst" }, ReasonWorkload},
	} {
		r := rows[3] // the ShareGPT row
		c.edit(&r)
		got := Map([]Row{r}, nil)[0]
		if got.Expressed() || got.ReasonClass != c.class {
			t.Errorf("edited row: reason %q (%s), want class %q", got.Reason, got.ReasonClass, c.class)
		}
	}
	// A stage without its earlier stage cannot run back to back.
	got := Map([]Row{rows[1]}, nil)[0]
	if got.Expressed() || got.ReasonClass != ReasonInput {
		t.Errorf("stage 1 alone: %q", got.Reason)
	}
}

func TestSplitFlags(t *testing.T) {
	got := splitFlags("TP4 command not published (8-GPU command: enforce_eager;num_scheduler_steps=1);a=1 (x; y);b")
	want := []string{"TP4 command not published (8-GPU command: enforce_eager;num_scheduler_steps=1)", "a=1 (x; y)", "b"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("item %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// An SGLang sweep is expressed as vLLM's server and scored as ratios between its concurrencies:
// time per output token and output tok/s over the lowest concurrency's, never absolute values.
func TestSGLangSweepAsRatios(t *testing.T) {
	rows, err := ReadFile("corpus/inferencex-sglang-issues.csv")
	if err != nil {
		t.Fatal(err)
	}
	var outs []*Outcome
	for i, c := range Map(rows, nil) {
		if !c.Expressed() || c.Scoring != Ratio {
			t.Fatalf("%s: expressed %v, scoring %s (%s)", c.ID, c.Expressed(), c.Scoring, c.Reason)
		}
		if c.Spec == nil || c.Spec.Lengths.InputTokens != 922 || c.Spec.Lengths.RangeRatio < 0.11 || c.Spec.Lengths.RangeRatio > 0.112 {
			t.Fatalf("%s: lengths %+v, want a mean of 922 tokens within +-11.1 %%", c.ID, c.Spec.Lengths)
		}
		// Predictions that double TPOT and throughput with each row: ratios 2, 4, 8.
		p := &Prediction{OutputTokS: float64(int(1) << i), TPOTMeanMS: float64(int(1) << i), TPOTMedianMS: math.NaN()}
		outs = append(outs, &Outcome{Case: c, Pred: p})
	}
	kinds := map[string]int{}
	for _, r := range Ratios(outs) {
		kinds[r.Kind]++
		if r.Den != "inferencex-dsr1-fp8-h200x8-tp8-sglang-in1024-out1024-c8" {
			t.Errorf("%s: over %s, want the C = 8 row", r.Num, r.Den)
		}
	}
	if kinds[RatioConcurrency] != 3 || kinds[RatioConcurrencyOut] != 3 || len(kinds) != 2 {
		t.Errorf("ratio kinds %v, want 3 concurrency-tpot and 3 concurrency-tok/s", kinds)
	}
}
