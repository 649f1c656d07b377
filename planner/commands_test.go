package planner

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/vllmcmd"
	"github.com/servesim/servesim/workload"
)

// TestLaunchCommandsRoundTrip: every row's `vllm serve` command, imported back (servesim import
// vllm --gpu ROW'S GPU --vllm-version ROW'S VERSION), gives the engine the planner simulates for
// the row, the same model (weights variant included) and the same drafter. Two questions: the
// seed's (the scenario's model, its flags as given: every one) and Llama-3.1-8B's (another model:
// vLLM's defaults per GPU, and the fp8 variant of its bf16 checkpoint, --quantization fp8).
func TestLaunchCommandsRoundTrip(t *testing.T) {
	r := seedResolved(t)
	seedQ := ScenarioQuestion(r, &Models{Model: r.Deployment.Model, Drafter: r.Deployment.Drafter, ModelRef: "glm-5.3-flash",
		DrafterRef: r.Deployment.Engine.Speculative.Model, Scenario: true},
		BenchWorkload(&r.Scenario.Protocol, "128K", 16), gpus(t, "RTX-PRO-6000-Server", "H100", "B200"),
		Space{Counts: []int{4, 8}, MaxNumSeqs: []int{16, 64}, MaxNumBatchedTokens: []int{8192}, KVCacheDTypes: []string{"auto", "fp8"},
			SpecTokens: []int{0, 7}, GPUMemoryUtilization: []float64{0.92}})
	ms, err := ModelsFor(r.Deployment, "../model/hf/testdata/llama-3.1-8b", "")
	if err != nil {
		t.Fatal(err)
	}
	w := &workload.Spec{Name: "fixed", Kind: workload.KindClosed, Closed: workload.Closed{Requests: 64, Concurrency: 8},
		Lengths: workload.Lengths{InputTokens: 2000, OutputTokens: 500}}
	llamaQ := ScenarioQuestion(r, ms, w, gpus(t, "L40S", "H100", "B200"),
		Space{Counts: []int{1, 2}, MaxNumSeqs: []int{8, 256}, MaxNumBatchedTokens: []int{2048, 16384}, KVCacheDTypes: []string{"auto", "fp8"},
			SpecTokens: []int{0}, GPUMemoryUtilization: []float64{0.9, 0.95}, Weights: []string{"native", "fp8"}})
	llamaQ.Engine.Version = "" // the seed's version is not the question's
	for _, q := range []*Question{seedQ, llamaQ} {
		if err := q.validate(); err != nil {
			t.Fatal(err)
		}
		cands, _ := q.enumerate()
		p := &Plan{Question: q.info()}
		checked, skipped := 0, 0
		for _, c := range cands {
			if c.key == "" {
				continue
			}
			row := &Result{Index: c.index, Config: c.config}
			l, err := p.Launch(row)
			if err != nil {
				t.Fatalf("row %d: %v", c.index, err)
			}
			want, _, _, err := p.RowEngine(row)
			if err != nil {
				t.Fatal(err)
			}
			sim, err := q.engineFor(c.lay, &c.config)
			if err != nil {
				t.Fatal(err)
			}
			sim.Quantization = want.Quantization // a label the planner prints as the variant's format
			if !sim.Equal(&want) {
				t.Fatalf("row %d: the planner simulates\n%+v\nbut its command gives\n%+v", c.index, sim, want)
			}
			if c.config.Weights != "native" && !strings.Contains(l.Serve, "--quantization fp8") {
				// The fp8 variant of an NVFP4 checkpoint is another checkpoint: said, not a flag.
				if len(l.Notes) == 0 || !strings.Contains(strings.Join(l.Notes, " "), "a checkpoint of the model in") {
					t.Errorf("row %d (%s weights): no note that another checkpoint is needed", c.index, c.config.Weights)
				}
				skipped++
				continue
			}
			words, err := vllmcmd.Split(l.Serve)
			if err != nil {
				t.Fatal(err)
			}
			s := scenario.New()
			if _, err := s.ApplyVLLM(words); err != nil {
				t.Fatalf("row %d: %s: %v", c.index, l.Serve, err)
			}
			s.Hardware.GPU, s.Engine.Version = c.config.GPU, want.Version
			b, err := s.Build()
			if err != nil {
				t.Fatalf("row %d: %s: %v", c.index, l.Serve, err)
			}
			if !b.Deployment.Engine.Equal(&want) {
				t.Errorf("row %d: %s\nimports as %+v\nwant      %+v", c.index, l.Serve, b.Deployment.Engine, want)
			}
			if !reflect.DeepEqual(b.Deployment.Model, variant(q.Model, c.config.Weights)) {
				t.Errorf("row %d: %s: the imported model differs from the row's (%s weights)", c.index, l.Serve, c.config.Weights)
			}
			if m := c.config.SpecMethod; m != "" && b.Deployment.Engine.Speculative.Method != m {
				t.Errorf("row %d: %s: speculative method %q, want the row's %q", c.index, l.Serve, b.Deployment.Engine.Speculative.Method, m)
			}
			drafter := c.config.SpecTokens > 0 && deploy.NeedsDrafter(c.config.SpecMethod)
			if drafter != (b.Deployment.Drafter != nil) || drafter && !reflect.DeepEqual(b.Deployment.Drafter, q.Drafter) {
				t.Errorf("row %d: %s: drafter %v, want %v", c.index, l.Serve, b.Deployment.Drafter, q.Drafter)
			}
			if want := c.config.Count / c.config.Replicas(); b.Deployment.Hardware.Count != want {
				t.Errorf("row %d: %d GPUs per server, want %d", c.index, b.Deployment.Hardware.Count, want)
			}
			checked++
		}
		if q == llamaQ && skipped > 0 {
			t.Errorf("%s: %d fp8 rows without --quantization fp8", q.ModelRef, skipped)
		}
		if checked < 50 {
			t.Errorf("%s: only %d rows checked (%d skipped)", q.ModelRef, checked, skipped)
		}
		t.Logf("%s: %d launch commands import back to their rows (%d variants of an NVFP4 checkpoint need another checkpoint)", q.ModelRef, checked, skipped)
	}
}

// TestCommandsSeedCurrent: the seed's own row prints the seed's launch flags.
func TestCommandsSeedCurrent(t *testing.T) {
	r := seedResolved(t)
	p := &Plan{Question: (&Question{Model: r.Deployment.Model, Drafter: r.Deployment.Drafter, ModelRef: "glm-5.3-flash",
		DrafterRef: r.Deployment.Engine.Speculative.Model, Base: r.Deployment.Engine, ServeModel: "nvidia/GLM-5.3-Flash-NVFP4",
		GPUs: gpus(t, "RTX-PRO-6000-Server"), Workload: BenchWorkload(&r.Scenario.Protocol, "128K", 16), Current: CurrentConfig(r.Deployment)}).info()}
	row := &Result{Config: *CurrentConfig(r.Deployment)}
	row.Config.WeightFormat = "nvfp4"
	l, err := p.Launch(row)
	if err != nil {
		t.Fatal(err)
	}
	want := `vllm serve nvidia/GLM-5.3-Flash-NVFP4 --served-model-name nvidia/GLM-5.3-Flash-NVFP4 --tensor-parallel-size 4 --enable-expert-parallel --max-model-len 1048576 --gpu-memory-utilization 0.92 --kv-cache-dtype fp8 --max-num-batched-tokens 8192 --max-num-seqs 32 --attention-backend FLASHINFER_MLA_SPARSE_SM120 --moe-backend flashinfer_cutlass --speculative-config '{"method":"dflash","model":"incoai/GLM-5.3-Flash-DFlash2","num_speculative_tokens":7,"kv_cache_dtype":"auto"}'`
	if l.Serve != want {
		t.Errorf("seed row:\n got %s\nwant %s", l.Serve, want)
	}
	if !strings.HasPrefix(l.VLLMBenchServe, "vllm bench serve --backend vllm --model nvidia/GLM-5.3-Flash-NVFP4 --dataset-name random --random-input-len 131072 --random-output-len 4096 --num-prompts 16 --max-concurrency 16") {
		t.Errorf("bench: %s", l.VLLMBenchServe)
	}
}

// TestSpecMethodsSwept: plan sweeps the speculative methods a model supports. DeepSeek-R1's
// checkpoint has one MTP layer (num_nextn_predict_layers 1), so mtp is swept at every k (k above
// n_predict 1 is a multiple of it); ngram needs nothing but the target; with no drafter described
// the question's DFlash/EAGLE is not. Each row's launch command carries its --speculative-config
// and imports back to the row's engine, without a drafter model for mtp and ngram.
func TestSpecMethodsSwept(t *testing.T) {
	r := seedResolved(t)
	ms, err := ModelsFor(r.Deployment, "deepseek-ai/DeepSeek-R1", "")
	if err != nil {
		t.Fatal(err)
	}
	w := &workload.Spec{Name: "fixed", Kind: workload.KindClosed, Closed: workload.Closed{Requests: 64, Concurrency: 8},
		Lengths: workload.Lengths{InputTokens: 2000, OutputTokens: 500}}
	q := ScenarioQuestion(r, ms, w, gpus(t, "H200"),
		Space{Counts: []int{8}, TP: []int{8}, EP: []bool{true}, MaxNumSeqs: []int{64}, MaxNumBatchedTokens: []int{8192}, KVCacheDTypes: []string{"auto"},
			SpecTokens: []int{0, 1, 3}, GPUMemoryUtilization: []float64{0.9}, SpecMethods: []string{"auto", "ngram"}})
	q.Engine.Version = ""
	if err := q.validate(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range q.specOptions() {
		got = append(got, fmt.Sprintf("%s/%d", o.method, o.k))
	}
	if want := "/0 mtp/1 ngram/1 mtp/3 ngram/3"; strings.Join(got, " ") != want {
		t.Errorf("speculative options %q, want %q", strings.Join(got, " "), want)
	}
	cands, _ := q.enumerate()
	p := &Plan{Question: q.info()}
	seen := map[string]bool{}
	for _, c := range cands {
		if c.key == "" {
			continue
		}
		row := &Result{Index: c.index, Config: c.config}
		l, err := p.Launch(row)
		if err != nil {
			t.Fatal(err)
		}
		want, _, _, err := p.RowEngine(row)
		if err != nil {
			t.Fatal(err)
		}
		words, err := vllmcmd.Split(l.Serve)
		if err != nil {
			t.Fatal(err)
		}
		s := scenario.New()
		if _, err := s.ApplyVLLM(words); err != nil {
			t.Fatal(err)
		}
		s.Hardware.GPU, s.Engine.Version = c.config.GPU, want.Version
		b, err := s.Build()
		if err != nil {
			t.Fatalf("row %d: %s: %v", c.index, l.Serve, err)
		}
		if !b.Deployment.Engine.Equal(&want) || b.Deployment.Drafter != nil {
			t.Errorf("row %d: %s\nimports as %+v (drafter %v)\nwant      %+v", c.index, l.Serve, b.Deployment.Engine, b.Deployment.Drafter, want)
		}
		m := c.config.SpecMethod
		for _, n := range l.Notes {
			if (m == "mtp" || m == "ngram") && strings.Contains(n, "--drafter") {
				t.Errorf("row %d (%s): note %q: mtp and ngram need no drafter", c.index, m, n)
			}
		}
		if m != "" && !strings.Contains(l.Serve, `"method":"`+m+`"`) {
			t.Errorf("row %d: %s: no --speculative-config with method %s", c.index, l.Serve, m)
		}
		seen[m] = true
	}
	if !seen["mtp"] || !seen["ngram"] || !seen[""] {
		t.Errorf("methods in rows: %v, want off, mtp and ngram", seen)
	}
}

// TestNgramOnlyWhenAsked: by default the sweep holds the automatic methods (DeepSeek-R1: mtp) and
// says why ngram is not swept; listing ngram adds it; "mtp" alone drops nothing the model lacks;
// an unknown method is refused naming the flag.
func TestNgramOnlyWhenAsked(t *testing.T) {
	r := seedResolved(t)
	ms, err := ModelsFor(r.Deployment, "deepseek-ai/DeepSeek-R1", "")
	if err != nil {
		t.Fatal(err)
	}
	w := &workload.Spec{Name: "fixed", Kind: workload.KindClosed, Closed: workload.Closed{Requests: 64, Concurrency: 8},
		Lengths: workload.Lengths{InputTokens: 2000, OutputTokens: 500}}
	for _, c := range []struct {
		methods []string
		want    string
		note    bool
	}{
		{nil, "/0 mtp/1 mtp/3", true},
		{[]string{"auto"}, "/0 mtp/1 mtp/3", true},
		{[]string{"ngram"}, "/0 ngram/1 ngram/3", false},
		{[]string{"auto", "ngram"}, "/0 mtp/1 ngram/1 mtp/3 ngram/3", false},
	} {
		q := ScenarioQuestion(r, ms, w, gpus(t, "H200"),
			Space{Counts: []int{8}, TP: []int{8}, EP: []bool{true}, MaxNumSeqs: []int{64}, MaxNumBatchedTokens: []int{8192}, KVCacheDTypes: []string{"auto"},
				SpecTokens: []int{0, 1, 3}, GPUMemoryUtilization: []float64{0.9}, SpecMethods: c.methods})
		if err := q.validate(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range q.specOptions() {
			got = append(got, fmt.Sprintf("%s/%d", o.method, o.k))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%v: options %q, want %q", c.methods, strings.Join(got, " "), c.want)
		}
		_, notes := q.enumerate()
		has := strings.Contains(strings.Join(notes, "\n"), "ngram (prompt lookup) not swept")
		if has != c.note {
			t.Errorf("%v: ngram note %v, want %v (notes %q)", c.methods, has, c.note, notes)
		}
	}
	sp := Space{SpecMethods: []string{"medusa"}}
	if err := sp.normalize(); err == nil || !strings.Contains(err.Error(), `spec-methods "medusa"`) {
		t.Errorf("unknown method: %v", err)
	}
}

// TestMeasuredAcceptanceRows: a measured acceptance of the question's server (here a mean
// acceptance length) goes with its method and number of drafts: the dflash k = 7 rows run at it,
// the k = 3 rows at the calibrated acceptance, and a note says so.
func TestMeasuredAcceptanceRows(t *testing.T) {
	r := seedResolved(t)
	base := r.Deployment.Engine
	base.Speculative = base.Speculative.Clone()
	base.Speculative.MeanAcceptanceLength = 2.3
	q := &Question{Model: r.Deployment.Model, Drafter: r.Deployment.Drafter, ModelRef: "glm-5.3-flash",
		DrafterRef: base.Speculative.Model, Base: base, ServeModel: "nvidia/GLM-5.3-Flash-NVFP4",
		GPUs: gpus(t, "RTX-PRO-6000-Server"), Workload: BenchWorkload(&r.Scenario.Protocol, "8K", 8),
		Space: Space{Counts: []int{4}, TP: []int{4}, EP: []bool{true}, MaxNumSeqs: []int{32}, MaxNumBatchedTokens: []int{8192},
			KVCacheDTypes: []string{"fp8"}, SpecTokens: []int{3, 7}, GPUMemoryUtilization: []float64{0.9}}}
	if err := q.validate(); err != nil {
		t.Fatal(err)
	}
	cands, notes := q.enumerate()
	if !strings.Contains(strings.Join(notes, "\n"), "measured mean acceptance length 2.3: applied to the rows with dflash and 7 drafts") {
		t.Errorf("notes %q: want the measured acceptance's", notes)
	}
	p := &Plan{Question: q.info()}
	// GLM-5.3-Flash's own MTP layer is swept too (its rows at k = 3 and 7): the measured DFlash
	// figure is not theirs.
	seen := map[string]float64{}
	for _, c := range cands {
		if c.key == "" {
			continue
		}
		e, _, _, err := p.RowEngine(&Result{Index: c.index, Config: c.config})
		if err != nil {
			t.Fatal(err)
		}
		seen[fmt.Sprintf("%s k=%d", e.Speculative.Method, e.Speculative.NumTokens)] = e.Speculative.MeanAcceptanceLength
	}
	if len(seen) != 4 || seen["dflash k=7"] != 2.3 || seen["dflash k=3"] != 0 || seen["mtp k=7"] != 0 || seen["mtp k=3"] != 0 {
		t.Errorf("mean acceptance length by method and k %v, want 2.3 for dflash at k = 7 only", seen)
	}
}
