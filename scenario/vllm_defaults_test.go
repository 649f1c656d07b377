package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hf"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmcmd"
)

// hfCache builds a Hugging Face hub cache in a temporary directory from testdata/hf/ORG--NAME
// (published config.json files, see testdata/hf/README.md) and points HF_HUB_CACHE at it. Each
// repository has the snapshot refs/main names and, newer on disk, a broken snapshot that the lookup
// must not read.
func hfCache(t *testing.T) string {
	t.Helper()
	cache := t.TempDir()
	ents, err := os.ReadDir(filepath.Join("testdata", "hf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		repo := filepath.Join(cache, "models--"+e.Name())
		good := filepath.Join(repo, "snapshots", "0123456789abcdef0123456789abcdef01234567")
		bad := filepath.Join(repo, "snapshots", "fedcba9876543210")
		for _, d := range []string{good, bad, filepath.Join(repo, "refs")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		files, _ := os.ReadDir(filepath.Join("testdata", "hf", e.Name()))
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join("testdata", "hf", e.Name(), f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(good, f.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(bad, "config.json"), []byte("{broken"), 0o644); err != nil {
			t.Fatal(err)
		}
		future := time.Now().Add(time.Hour)
		os.Chtimes(filepath.Join(bad, "config.json"), future, future)
		if err := os.WriteFile(filepath.Join(repo, "refs", "main"), []byte("0123456789abcdef0123456789abcdef01234567"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HF_HUB_CACHE", cache)
	return cache
}

// v28 is what vLLM 0.28.0 runs for `vllm serve` of a dense bf16 model on one GPU of at least
// 70 GiB (not an A100) when no flag is given (reference: vLLM's defaults by version and GPU):
// utilization 0.92, 8,192 batched tokens and 1,024 sequences (API server, >= 70 GiB tier), chunked
// prefill and prefix caching on, asynchronous scheduling on, CUDA graphs up to
// min(1024 x 2, 512, 8192) = 512. Each case below spells out what differs.
func v28(edit func(e *deploy.EngineConfig)) deploy.EngineConfig {
	e := deploy.EngineConfig{Name: "vllm", Version: "0.28.0", TensorParallel: 1, DataParallel: 1, PipelineParallel: 1,
		GPUMemoryUtilization: 0.92, KVCacheDType: "auto", MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024,
		ChunkedPrefill: true, PrefixCaching: true, AsyncScheduling: true, MaxCaptureSize: 512}
	edit(&e)
	return e
}

// TestVLLMServeLines: real `vllm serve` lines of published models, imported with a GPU (and a
// version where it matters). Every setting the line does not give must equal vLLM's default for
// that version, GPU and model, written out here by hand from the rules (not computed by the code
// under test); the model is read from the Hugging Face cache; what vLLM runs but servesim does not
// simulate yet (a drafter without a description) is recorded
// faithfully and refused with the reason; an unknown model is an error saying how to give its
// config.
func TestVLLMServeLines(t *testing.T) {
	hfCache(t)
	_, llama4Err := hf.Parse(mustRead(t, "testdata/hf/meta-llama--Llama-4-Scout-17B-16E-Instruct/config.json"), "")
	for _, c := range []struct {
		name, gpu, version, cmd string
		want                    deploy.EngineConfig
		count                   int
		notSim, err             string // substrings of a NotSimulatedError / another error
		ignored                 []string
		check                   func(t *testing.T, b *Built)
	}{
		{name: "Llama-2-7b on L40S (the < 70 GiB tier, fp16 checkpoint)", gpu: "L40S",
			cmd: "vllm serve meta-llama/Llama-2-7b-hf --dtype float16 --port 8000",
			// max_position_embeddings 4096; 2,048 tokens and 256 sequences below 70 GiB.
			want: v28(func(e *deploy.EngineConfig) { e.MaxModelLen, e.MaxNumBatchedTokens, e.MaxNumSeqs = 4096, 2048, 256 })},
		{name: "Llama-2-70b TP4 on H100", gpu: "H100",
			cmd: "python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-2-70b-hf --tensor-parallel-size 4 --max-num-seqs 64",
			// capture sizes up to min(64 x 2, 512, 8192) = 128.
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.MaxModelLen, e.MaxNumSeqs, e.MaxCaptureSize = 4, 4096, 64, 128
			}),
			count: 4},
		{name: "CodeLlama-34B TP2 fp8 KV on L40S", gpu: "L40S",
			cmd: "vllm serve codellama/CodeLlama-34b-Instruct-hf -tp 2 --kv-cache-dtype fp8 --gpu-memory-utilization 0.95",
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.MaxModelLen, e.KVCacheDType, e.GPUMemoryUtilization, e.MaxNumBatchedTokens, e.MaxNumSeqs = 2, 16384, "fp8", 0.95, 2048, 256
			}),
			count: 2},
		{name: "Mixtral-8x7B TP2 EP on H100", gpu: "H100",
			cmd:   "vllm serve mistralai/Mixtral-8x7B-v0.1 --tensor-parallel-size 2 --enable-expert-parallel",
			want:  v28(func(e *deploy.EngineConfig) { e.TensorParallel, e.ExpertParallel, e.MaxModelLen = 2, true, 32768 }),
			count: 2},
		{name: "Mixtral-8x22B TP4 online fp8, throughput mode, on H200", gpu: "H200",
			cmd: "vllm serve mistralai/Mixtral-8x22B-v0.1 -tp 4 --quantization fp8 --performance-mode throughput",
			// 140 GiB: the >= 70 GiB tier, doubled by --performance-mode throughput.
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.MaxModelLen, e.MaxNumBatchedTokens, e.MaxNumSeqs, e.Quantization = 4, 65536, 16384, 2048, "fp8"
			}),
			count: 4,
			check: func(t *testing.T, b *Built) {
				for _, g := range b.Deployment.Model.Layers {
					if g.Attn.DType != arch.FP8Tensor || g.FFN.ExpertDType != arch.FP8Tensor {
						t.Errorf("--quantization fp8: weights %s/%s, want the projections and experts in fp8 (one scale per tensor)", g.Attn.DType, g.FFN.ExpertDType)
					}
				}
			}},
		{name: "Llama-3.1-8B with EAGLE-3 (no drafter description)", gpu: "H100",
			cmd: `vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'`,
			// async stays on with eagle3; capture min(1024 x 4 x 2, 512, 8192) = 512.
			want: v28(func(e *deploy.EngineConfig) {
				e.MaxModelLen = 131072
				e.Speculative = deploy.Speculative{Method: "eagle3", Model: "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", NumTokens: 3}
			}),
			notSim: `engine.speculative.model = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B": not simulated yet: the drafter's description is needed`},
		{name: "Llama-3.1-70B TP4 with n-gram drafting", gpu: "H100",
			cmd: `vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --max-model-len 32768 --speculative-config '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'`,
			// asynchronous scheduling is off with (CPU) ngram.
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.MaxModelLen, e.AsyncScheduling = 4, 32768, false
				e.Speculative = deploy.Speculative{Method: "ngram", NumTokens: 4}
			}),
			count: 4},
		{name: "Llama-3.1-8B DP2", gpu: "H100",
			cmd:   "vllm serve meta-llama/Llama-3.1-8B-Instruct --data-parallel-size 2",
			want:  v28(func(e *deploy.EngineConfig) { e.DataParallel, e.MaxModelLen = 2, 131072 }),
			count: 2,
			check: func(t *testing.T, b *Built) {
				// A dense model's DP ranks are independent engines: simulated as 2 replicas.
				if r, n := b.Deployment.ReplicaDeployment(); n != 2 || r.Hardware.Count != 1 {
					t.Errorf("DP2 dense: %d replicas on %d GPU(s), want 2 of 1", n, r.Hardware.Count)
				}
			}},
		{name: "Llama-3.1-8B on vLLM 0.11 (late-2025 defaults)", gpu: "H100", version: "0.11.0",
			cmd: "vllm serve meta-llama/Llama-3.1-8B-Instruct",
			want: v28(func(e *deploy.EngineConfig) {
				e.Version, e.MaxModelLen, e.GPUMemoryUtilization, e.AsyncScheduling = "0.11.0", 131072, 0.9, false
			})},
		{name: "Qwen3-30B-A3B TP2 EP on RTX PRO 6000, a flag with no effect", gpu: "RTX-PRO-6000-Server",
			cmd:     "vllm serve Qwen/Qwen3-30B-A3B --enable-expert-parallel -tp 2 --enable-reasoning --reasoning-parser deepseek_r1",
			want:    v28(func(e *deploy.EngineConfig) { e.TensorParallel, e.ExpertParallel, e.MaxModelLen = 2, true, 40960 }),
			count:   2,
			ignored: []string{"--enable-reasoning"}},
		{name: "Qwen3-30B-A3B beyond its 40,960 tokens", gpu: "H100",
			cmd: "vllm serve Qwen/Qwen3-30B-A3B --max-model-len 131072",
			err: "engine.max_model_len = 131072 is greater than the 40960 model \"Qwen/Qwen3-30B-A3B\" allows (max_position_embeddings 40960): vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"},
		{name: "Qwen3-30B-A3B with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", gpu: "H100",
			cmd: "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve Qwen/Qwen3-30B-A3B --max-model-len 131072",
			want: v28(func(e *deploy.EngineConfig) {
				e.MaxModelLen, e.AllowLongMaxModelLen = 131072, true
			})},
		{name: "DeepSeek-R1 TP8 MTP on H200 (deepseek_mtp, block fp8)", gpu: "H200",
			cmd: `vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8 --trust-remote-code --speculative-config '{"method":"deepseek_mtp","num_speculative_tokens":1}'`,
			// yarn: original_max_position_embeddings 4096 x factor 40 = 163840; MLA keeps kv auto.
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.MaxModelLen, e.Quantization = 8, 163840, "fp8"
				e.Speculative = deploy.Speculative{Method: "mtp", NumTokens: 1}
			}),
			count: 8},
		{name: "DeepSeek-R1 DP8 EP with DeepEP low-latency (DP attention) on H200", gpu: "H200",
			cmd: "vllm serve deepseek-ai/DeepSeek-R1 --data-parallel-size 8 --enable-expert-parallel --all2all-backend deepep_low_latency",
			// data-parallel MoE with a batched all-to-all: 256 tokens; seqs then min(1024, 256).
			want: v28(func(e *deploy.EngineConfig) {
				e.DataParallel, e.ExpertParallel, e.All2AllBackend, e.MaxModelLen, e.Quantization = 8, true, "deepep_low_latency", 163840, "fp8"
				e.MaxNumBatchedTokens, e.MaxNumSeqs, e.MaxCaptureSize = 256, 256, 256
			}),
			count: 8,
			check: func(t *testing.T, b *Built) {
				// A MoE model's DP ranks step together: one engine of 8 lockstep ranks.
				if b.Deployment.DataParallelMode() != deploy.DPLockstep || b.Deployment.LockstepRanks() != 8 || b.Deployment.Engine.EPSize() != 8 {
					t.Errorf("DP8 EP: mode %v, %d ranks, EP %d; want 8 lockstep ranks, EP 8", b.Deployment.DataParallelMode(), b.Deployment.LockstepRanks(), b.Deployment.Engine.EPSize())
				}
			}},
		{name: "DeepSeek-R1 TP8 PP2 on H100", gpu: "H100",
			cmd: "vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8 --pipeline-parallel-size 2",
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.PipelineParallel, e.MaxModelLen, e.Quantization = 8, 2, 163840, "fp8"
			}),
			count: 16,
			check: func(t *testing.T, b *Built) {
				// 61 layers in 2 stages: the first holds 31.
				if b.Deployment.StageLayers() != 31 {
					t.Errorf("PP2: %d layers on the busiest stage, want 31", b.Deployment.StageLayers())
				}
			}},
		{name: "Llama-3.1-70B TP4 PP2 on L40S", gpu: "L40S",
			cmd: "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --pipeline-parallel-size 2 --max-model-len 16384",
			// 48 GB: the < 70 GiB tier, 2,048 tokens and 256 sequences.
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.PipelineParallel, e.MaxModelLen, e.MaxNumBatchedTokens, e.MaxNumSeqs = 4, 2, 16384, 2048, 256
			}),
			count: 8},
		{name: "DeepSeek-R1 PP2 with MTP (not simulated: drafting across stages)", gpu: "H200",
			cmd: `vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8 --pipeline-parallel-size 2 --speculative-config '{"method":"mtp","num_speculative_tokens":1}'`,
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.PipelineParallel, e.MaxModelLen, e.Quantization = 8, 2, 163840, "fp8"
				e.Speculative = deploy.Speculative{Method: "mtp", NumTokens: 1}
			}),
			count:  16,
			notSim: "engine.pipeline_parallel_size = 2 with engine.speculative.method = \"mtp\": not simulated yet"},
		{name: "GLM-5-FP8 TP8 EP MTP on B200 (k from the checkpoint)", gpu: "B200",
			cmd: `vllm serve zai-org/GLM-5-FP8 -tp 8 --enable-expert-parallel --tool-call-parser glm47 --reasoning-parser glm45 --speculative-config '{"method":"mtp","model":"zai-org/GLM-5-FP8"}'`,
			// >= 160 GiB tier (v0.28): 16,384 / 1,024; sparse MLA: kv fp8; k = num_nextn_predict_layers 1.
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.ExpertParallel, e.MaxModelLen, e.KVCacheDType, e.MaxNumBatchedTokens, e.Quantization = 8, true, 202752, "fp8", 16384, "fp8"
				e.Speculative = deploy.Speculative{Method: "mtp", Model: "zai-org/GLM-5-FP8", NumTokens: 1}
			}),
			count: 8},
		{name: "gpt-oss-120b MXFP4 on B200, vLLM 0.27 (no 160 GiB tier yet)", gpu: "B200", version: "0.27.0",
			cmd: "vllm serve openai/gpt-oss-120b --async-scheduling",
			// yarn: 4096 x 32 = 131072.
			want: v28(func(e *deploy.EngineConfig) { e.Version, e.MaxModelLen, e.Quantization = "0.27.0", 131072, "mxfp4" })},
		{name: "Qwen3-235B-A22B NVFP4 TP4 on B200 (ModelOpt)", gpu: "B200",
			cmd: "vllm serve nvidia/Qwen3-235B-A22B-FP4 --tensor-parallel-size 4",
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.MaxModelLen, e.MaxNumBatchedTokens, e.Quantization = 4, 40960, 16384, "modelopt_fp4"
			}),
			count: 4},
		{name: "Qwen3-Next (hybrid) on vLLM 0.27: no prefix caching", gpu: "H200", version: "0.27.0",
			cmd: "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4",
			want: v28(func(e *deploy.EngineConfig) {
				e.Version, e.TensorParallel, e.MaxModelLen, e.PrefixCaching = "0.27.0", 4, 262144, false
			}),
			count: 4},
		{name: "Qwen3-Next (hybrid) on vLLM 0.28: prefix caching in align mode", gpu: "H200",
			cmd:   "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4",
			want:  v28(func(e *deploy.EngineConfig) { e.TensorParallel, e.MaxModelLen = 4, 262144 }),
			count: 4},
		{name: "Llama-4-Scout TP8 with a flag of no effect", gpu: "H100",
			cmd: `vllm serve meta-llama/Llama-4-Scout-17B-16E-Instruct --tensor-parallel-size 8 --max-model-len 1000000 --override-generation-config '{"attn_temperature_tuning": true}'`,
			want: v28(func(e *deploy.EngineConfig) {
				e.TensorParallel, e.MaxModelLen = 8, 1000000
			}),
			count:   8,
			ignored: []string{`--override-generation-config {"attn_temperature_tuning": true}`}},
		{name: "an unknown model", gpu: "H100",
			cmd: "vllm serve acme/NoSuchModel-7B -tp 2",
			err: "Download its config with `huggingface-cli download acme/NoSuchModel-7B config.json` (ModelOpt checkpoints: also hf_quant_config.json), or pass --model-config PATH"},
	} {
		t.Run(c.name, func(t *testing.T) {
			words, err := vllmcmd.Split(c.cmd)
			if err != nil {
				t.Fatal(err)
			}
			s := New()
			notes, err := s.ApplyVLLM(words)
			if err != nil {
				t.Fatal(err)
			}
			s.Hardware.GPU, s.Engine.Version = c.gpu, c.version
			b, err := s.Build()
			if c.name == "Llama-4-Scout TP8 with a flag of no effect" && llama4Err != nil {
				// Until model/hf reads llama4 configs the model is refused, naming its type.
				if err == nil || !strings.Contains(err.Error(), `unsupported model_type "llama4"`) {
					t.Fatalf("err = %v, want the unsupported model_type named", err)
				}
				return
			}
			var ns *deploy.NotSimulatedError
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			case c.notSim != "":
				if !errors.As(err, &ns) || !strings.Contains(err.Error(), c.notSim) || b == nil {
					t.Fatalf("err = %v, want a NotSimulatedError with %q and the scenario recorded", err, c.notSim)
				}
			case err != nil:
				t.Fatal(err)
			}
			want := c.want
			if got := b.Deployment.Engine; !got.Equal(&want) {
				t.Errorf("engine\n got %+v\nwant %+v", got, want)
			}
			if n := max(c.count, 1); b.Deployment.Hardware.Count != n {
				t.Errorf("hardware.count %d, want %d", b.Deployment.Hardware.Count, n)
			}
			// The published configs are built in (model/hf's registry); the others come from the
			// cache, from the snapshot refs/main names.
			if _, _, err := hf.Builtin(s.Model.Name); err == nil {
				if !strings.HasPrefix(b.ModelFrom, "built-in ") {
					t.Errorf("model from %q, want the built-in config", b.ModelFrom)
				}
			} else if !strings.HasPrefix(b.ModelFrom, "Hugging Face cache ") || !strings.Contains(b.ModelFrom, "0123456789abcdef0123456789abcdef01234567") {
				t.Errorf("model from %q, want the cache snapshot refs/main names", b.ModelFrom)
			}
			for _, u := range c.ignored {
				if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "ignored") && strings.Contains(n, u) }) {
					t.Errorf("notes %q do not list the flag of no effect %q", notes, u)
				}
			}
			if c.check != nil {
				c.check(t, b)
			}
			if c.notSim == "" {
				// What imports simulates: the server starts (weights and one request fit).
				if _, err := sim.NewServer(b.Deployment, param.Priors()); err != nil {
					t.Errorf("the imported deployment does not start: %v", err)
				}
			}
			// The resolved scenario, written and read back, resolves to the same engine.
			back := New()
			back.Engine, back.Model, back.Hardware = b.Resolved.Engine, b.Resolved.Model, b.Resolved.Hardware
			b2, err2 := back.Build()
			if (err2 == nil) != (err == nil) || b2 == nil || !b2.Deployment.Engine.Equal(&b.Deployment.Engine) {
				t.Errorf("the resolved scenario does not resolve to itself: %v", err2)
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFindModelOrder: an explicit file wins over everything, a path over the built-ins, a built-in
// over the cache; without refs/main the newest snapshot is read; --revision picks refs/<rev>.
func TestFindModelOrder(t *testing.T) {
	cache := hfCache(t)
	cfg := filepath.Join("testdata", "hf", "meta-llama--Llama-3.1-8B-Instruct")
	m, err := FindModel("meta-llama/Llama-3.1-8B-Instruct", cfg, "")
	if err != nil || m.From != "file "+cfg || m.Arch.Name != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("explicit file: %+v, %v", m, err)
	}
	m, err = FindModel(cfg, "", "")
	if err != nil || !strings.HasPrefix(m.From, "path ") || m.Arch.Name != "meta-llama--Llama-3.1-8B-Instruct" {
		t.Errorf("a directory: %+v, %v", m, err)
	}
	m, err = FindModel("nvidia/GLM-5.3-Flash-NVFP4", "", "")
	if err != nil || !strings.HasPrefix(m.From, "built-in nvidia/GLM-5.3-Flash-NVFP4") || m.Arch.Name != "glm-5.3-flash" {
		t.Errorf("built-in by HF id: %+v, %v", m, err)
	}
	m, err = FindModel("meta-llama/Llama-3.1-8B-Instruct", "", "")
	if err != nil || !strings.HasPrefix(m.From, "built-in meta-llama/Llama-3.1-8B-Instruct") {
		t.Errorf("a built-in config wins over the cache: %+v, %v", m, err)
	}
	const next = "Qwen/Qwen3-Next-80B-A3B-Instruct" // not built in: read from the cache
	m, err = FindModel(next, "", "")
	if err != nil || !strings.Contains(m.From, "0123456789abcdef0123456789abcdef01234567") || m.Arch.Name != next || m.Arch.MaxModelLen != 262144 {
		t.Errorf("cache, refs/main: %+v, %v", m, err)
	}
	repo := filepath.Join(cache, "models--Qwen--Qwen3-Next-80B-A3B-Instruct")
	os.Remove(filepath.Join(repo, "refs", "main"))
	if _, err = FindModel(next, "", ""); err == nil || !strings.Contains(err.Error(), "fedcba9876543210") {
		// Without refs/main the newest snapshot is read: here the broken one.
		t.Errorf("without refs/main: err = %v, want the newest (broken) snapshot read", err)
	}
	os.WriteFile(filepath.Join(repo, "refs", "v1"), []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644)
	if m, err = FindModel(next, "", "v1"); err != nil || !strings.Contains(m.From, "0123456789abcdef0123456789abcdef01234567") {
		t.Errorf("--revision v1: %+v, %v", m, err)
	}
	if _, err = FindModel(next, "", "v2"); err == nil || !strings.Contains(err.Error(), "no refs/v2") {
		t.Errorf("--revision v2: err = %v", err)
	}
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", filepath.Join(cache, "nowhere"))
	want := filepath.Join(cache, "nowhere", "hub", "models--Qwen--Qwen3-Next-80B-A3B-Instruct")
	if _, err = FindModel(next, "", ""); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "huggingface-cli download "+next+" config.json") {
		t.Errorf("HF_HOME: err = %v, want it to name %s and how to download the config", err, want)
	}
}
