package scenario

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
	"github.com/servesim/servesim/sim"
)

func TestDefaultResolves(t *testing.T) {
	s := Default()
	r, err := s.Resolve(ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Source != SourceCalibrated {
		t.Errorf("seed scenario source = %q, want calibrated (the shipped seed calibration)", r.Source)
	}
	u, err := s.Resolve(ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	if pri, _ := priors.Of(u.Deployment); u.Source != SourcePrior || u.Params != pri {
		t.Errorf("--uncalibrated: source %q, params differ from the deployment's priors: %v", u.Source, u.Params != pri)
	}
	if r.Deployment.Drafter == nil || r.Deployment.Engine.SpecTokens() != 7 {
		t.Errorf("seed drafter %v, k = %d; want the DFlash2 drafter with k = 7", r.Deployment.Drafter, r.Deployment.Engine.SpecTokens())
	}
}

// TestEncodeRoundTrip: `servesim config` output loads back to the same scenario.
func TestEncodeRoundTrip(t *testing.T) {
	s := Default()
	var buf bytes.Buffer
	if err := s.Encode(&buf, param.Priors(), "priors"); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(buf.Bytes(), "config.toml")
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(back.Engine, s.Engine) || back.Hardware != s.Hardware || back.Model != s.Model || back.Seed != s.Seed {
		t.Errorf("round trip changed the scenario:\n%+v\n%+v", back, s)
	}
	if strings.Join(back.Protocol.Contexts, ",") != strings.Join(s.Protocol.Contexts, ",") {
		t.Errorf("protocol contexts %v, want %v", back.Protocol.Contexts, s.Protocol.Contexts)
	}
	// The parameters are written as comments: the file overrides none, and loads back with the
	// deployment's own priors, not as a calibration.
	if len(back.Params) != 0 {
		t.Errorf("the written scenario sets %v under [params]", back.Params)
	}
	p, err := back.Resolve(ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	if pri, _ := priors.Of(p.Deployment); p.Params != pri || p.Summary.Class != param.ClassPrior {
		t.Errorf("written priors load back as %s, not the deployment's priors", p.Summary.Class)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[engine]\nmax_num_seqs = -4\n", "engine.max_num_seqs = -4: must be a positive integer"},
		{"[engine]\nbogus = 1\n", `unknown key "engine.bogus"`},
		{"seed = \"x\"\n", "line 1"},
		{"[hardware]\ncount = 0\n", "hardware.count = 0"},
		{"[engine]\ngpu_memory_utilization = 1.5\n", "gpu_memory_utilization = 1.5"},
		{"[protocol]\nconcurrency = [0]\n", "protocol.concurrency[0] = 0"},
		{"[protocol]\ncontexts = [\"8Q\"]\n", "protocol.contexts[0]"},
		{"[params]\nmem_bw_eff = 2.0\n", "params.mem_bw_eff = 2"},
		{"[params]\nwarp_speed = 2.0\n", "params.warp_speed: unknown parameter"},
		{"[engine]\nkv_cache_dtype = \"int3\"\n", "kv_cache_dtype"},
	} {
		_, err := Parse([]byte(c.toml), "s.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q): err = %v, want it to mention %q", c.toml, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "s.toml") {
			t.Errorf("Parse(%q): error %q does not name the file", c.toml, err)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(*Scenario)
		want string
	}{
		{func(s *Scenario) { s.Hardware.GPU = "TPU-v9" }, "unknown GPU"},
		{func(s *Scenario) { s.Model.Name = "gpt-7" }, `model "gpt-7": no description found offline`},
		{func(s *Scenario) { s.Hardware.GPU = "MI300X" }, "NVFP4"},
		{func(s *Scenario) { s.Engine.TensorParallel = deploy.Ptr(3); s.Hardware.Count = 3 }, "does not divide"},
		{func(s *Scenario) { s.Hardware.GPU = "" }, "hardware.gpu: not given: want a GPU name (--gpu NAME"},
		{func(s *Scenario) { s.Model.Name = "" }, "model: not given"},
		{func(s *Scenario) { s.Engine.PipelineParallel = deploy.Ptr(2); s.Hardware.Count = 8 }, "engine.pipeline_parallel_size = 2 with engine.speculative.method = \"dflash\": not simulated yet: speculative decoding across pipeline stages"},
		{func(s *Scenario) { s.Hardware.Count = 8 }, "hardware.count = 8"},
	} {
		s := Default()
		c.edit(s)
		_, err := s.Resolve(ResolveOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want it to mention %q", err, c.want)
		}
	}
}

func TestCalibrationMatch(t *testing.T) {
	s := Default()
	r, err := s.Resolve(ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	k := CalibrationKey{GPU: "RTX-PRO-6000-Server", Model: "glm-5.3-flash", Family: "glm_moe_dsa", Engine: "vllm", EngineVersion: r.Deployment.Engine.Version}
	if got := k.Match(r.Deployment); got != SourceCalibrated {
		t.Errorf("same GPU and version: %q, want calibrated", got)
	}
	k.GPU = "B200"
	if got := k.Match(r.Deployment); got != SourceTransferred {
		t.Errorf("other GPU, same family: %q, want transferred", got)
	}
	k.Family, k.Model = "llama", "llama-3.1-70b"
	if got := k.Match(r.Deployment); got != SourcePrior {
		t.Errorf("other family: %q, want prior", got)
	}
}

// TestLevelResolution: the seed calibration applies level by level: on the seed all of it; on the
// Workstation card with the same engine its gpu-level values transferred (same generation) and
// the rest calibrated; on an H100 the Hopper priors at the gpu level and the engine and model
// values still calibrated; for another model on an H100 with another vLLM version, priors only.
func TestLevelResolution(t *testing.T) {
	type want struct {
		gpu, engine, model param.OriginKind
		src                Source
	}
	check := func(name string, s *Scenario, w want) {
		t.Helper()
		r, err := s.Resolve(ResolveOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, x := range []struct {
			id   param.ID
			want param.OriginKind
		}{{param.MemBWEff, w.gpu}, {param.NCCLBWEff, w.gpu}, {param.StepOverheadUS, w.engine}, {param.AcceptTau, w.model}, {param.RoutingAlphaSame, w.model}} {
			if got := r.Provenance[x.id]; got.Kind != x.want {
				t.Errorf("%s: %s from %s (%s), want %s", name, x.id.Def().Name, got.Kind, got.Detail, x.want)
			}
		}
		if r.Source != w.src {
			t.Errorf("%s: source %s, want %s", name, r.Source, w.src)
		}
		if w.gpu == param.OriginPrior {
			pri, _ := priors.Of(r.Deployment)
			if r.Params[param.MemBWEff] != pri[param.MemBWEff] {
				t.Errorf("%s: mem_bw_eff %g, want the generation prior %g", name, r.Params[param.MemBWEff], pri[param.MemBWEff])
			}
		}
		// Never from a calibration: the workload's parameter and the ones the seed cannot see.
		if got := r.Provenance[param.SamePrompt].Kind; got != param.OriginWorkload {
			t.Errorf("%s: same_prompt from %s", name, got)
		}
		if got := r.Provenance[param.GEMMEffFP8].Kind; got != param.OriginPrior {
			t.Errorf("%s: gemm_eff_fp8 from %s, want the generation prior (the seed has no fp8 GEMMs)", name, got)
		}
	}
	check("seed", Default(), want{param.OriginCalibrated, param.OriginCalibrated, param.OriginCalibrated, SourceCalibrated})
	ws := Default()
	ws.Hardware.GPU = "RTX-PRO-6000-Workstation"
	check("workstation", ws, want{param.OriginTransferred, param.OriginCalibrated, param.OriginCalibrated, SourceTransferred})
	h := Default()
	h.Hardware.GPU = "H200-SXM"
	check("seed model on H200", h, want{param.OriginPrior, param.OriginCalibrated, param.OriginCalibrated, SourceTransferred})
	l := New()
	l.Model.Name, l.Hardware.GPU = "meta-llama/Llama-3.1-8B-Instruct", "H100-SXM"
	check("Llama on H100", l, want{param.OriginPrior, param.OriginPrior, param.OriginPrior, SourcePrior})
}

func FuzzParseScenario(f *testing.F) {
	var buf bytes.Buffer
	Default().Encode(&buf, param.Priors(), "priors")
	f.Add(buf.Bytes())
	f.Add(seedTOML())
	f.Add([]byte("[engine]\nmax_num_seqs = 4\n[protocol]\nconcurrency = [1, 2]\n"))
	f.Add([]byte("[params]\nmem_bw_eff = 0.7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 8<<10 { // keeps executions cheap and minimisation quick
			return
		}
		s, err := Parse(data, "fuzz.toml")
		if err != nil {
			return
		}
		// A scenario that parses either resolves or fails with an error; it never panics. File
		// references are dropped: the fuzzer must not read arbitrary paths (/dev/zero, ...).
		s.Hardware.GPUFile, s.Model.File, s.ParamsFile = "", "", ""
		s.Model.Name, s.Model.Drafter = "glm-5.3-flash", "glm-5.3-flash-dflash2"
		if s.Hardware.GPU == "" {
			s.Hardware.GPU = "B200"
		}
		s.Resolve(ResolveOptions{Uncalibrated: true})
	})
}

func FuzzParseParamsFile(f *testing.F) {
	for _, c := range BuiltinCalibrations() {
		var b bytes.Buffer
		c.Encode(&b)
		f.Add(b.Bytes())
	}
	f.Add([]byte("[params]\nmem_bw_eff = 0.7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := ParseParamsFile(data, "fuzz.toml")
		if err != nil {
			return
		}
		p := pf.Values()
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed params file gives invalid params: %v", err)
		}
	})
}

// TestPartialFileTakesVLLMDefaults: a key a scenario file leaves out takes vLLM's default for the
// version, GPU and model, never the embedded seed's value; lists replace, not merge.
func TestPartialFileTakesVLLMDefaults(t *testing.T) {
	s, err := Parse([]byte("[model]\nname = \"glm-5.3-flash\"\n\n[hardware]\ngpu = \"RTX-PRO-6000-Server\"\n\n[protocol]\nconcurrency = [1, 2]\n\n[engine]\nmax_num_seqs = 8\ntensor_parallel_size = 4\nmax_model_len = 131072\n"), "p.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Protocol.Concurrency; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("concurrency = %v, want [1 2] (lists replace, not merge)", got)
	}
	r, err := s.Resolve(ResolveOptions{Uncalibrated: true})
	if err != nil {
		t.Fatal(err)
	}
	e := r.Deployment.Engine
	want := deploy.EngineConfig{Name: "vllm", Version: deploy.DefaultVersion, TensorParallel: 4, DataParallel: 1, PipelineParallel: 1,
		MaxModelLen: 131072, GPUMemoryUtilization: 0.92, KVCacheDType: "fp8", MaxNumBatchedTokens: 8192, MaxNumSeqs: 8,
		ChunkedPrefill: true, PrefixCaching: true, AsyncScheduling: true, MaxCaptureSize: 16, Quantization: "NVFP4"}
	if !e.Equal(&want) {
		t.Errorf("partial file: engine\n got %+v\nwant %+v (vLLM's defaults, not the seed's)", e, want)
	}
	if r.Deployment.Drafter != nil || r.Deployment.Hardware.Count != 4 {
		t.Errorf("drafter %v, %d GPUs; want none (the seed's DFlash drafter must not leak) and the engine's 4", r.Deployment.Drafter, r.Deployment.Hardware.Count)
	}
}

func TestErrorLines(t *testing.T) {
	_, err := Parse([]byte("seed = 1\n\n[engine]\ntensor_parallel_size = 4\nmax_num_seqs = -4\n"), "scenario.toml")
	if err == nil || !strings.HasPrefix(err.Error(), "scenario.toml:5: engine.max_num_seqs = -4: must be a positive integer") {
		t.Errorf("err = %v, want scenario.toml:5: engine.max_num_seqs = -4: must be a positive integer", err)
	}
	_, err = Parse([]byte("[hardware]\ngpus = 4\n"), "x.toml")
	if err == nil || !strings.HasPrefix(err.Error(), "x.toml:2: unknown key \"hardware.gpus\"") {
		t.Errorf("err = %v, want x.toml:2: unknown key", err)
	}
}

// TestAcceptanceFromScenario: a scenario's [engine.speculative] acceptance (the per-position rates
// vLLM reports) or mean_acceptance_length replaces the method's prior; without them the prior
// is used: for mtp the model-level parameter mtp_accept_tau, whose prior is DeepSeek-V3's 85 %
// first-position acceptance with the mtp prior's decay.
func TestAcceptanceFromScenario(t *testing.T) {
	base := "[model]\nname = \"deepseek-ai/DeepSeek-R1\"\n\n[hardware]\ngpu = \"H200\"\n\n[engine]\ntensor_parallel_size = 8\nmax_model_len = 32768\n\n[engine.speculative]\nmethod = \"mtp\"\nnum_speculative_tokens = 3\n"
	for _, c := range []struct {
		extra, source string
		first, mean   float64
	}{
		{"", "parameter mtp_accept_tau", 0.85, 1 + 0.85 + 0.85*0.68 + 0.85*0.68*0.544},
		{"acceptance = [0.9, 0.7, 0.5]\n", "engine.speculative.acceptance", 0.9, 3.1},
		{"mean_acceptance_length = 2.2\n", "engine.speculative.mean_acceptance_length 2.2", 0, 2.2},
	} {
		s, err := Parse([]byte(base+c.extra), "s.toml")
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(ResolveOptions{Uncalibrated: true})
		if err != nil {
			t.Fatal(err)
		}
		a := r.Deployment.Acceptance(&r.Params)
		if !strings.HasPrefix(a.Source, c.source) || math.Abs(a.Mean()-c.mean) > 1e-9 || (c.first > 0 && math.Abs(a.Rates[0]-c.first) > 1e-12) {
			t.Errorf("%q: acceptance %v (mean %.4f, %s), want from %q, mean %.4f", c.extra, a.Rates, a.Mean(), a.Source, c.source, c.mean)
		}
		if srv, err := sim.NewServer(r.Deployment, r.Params); err != nil {
			t.Fatal(err)
		} else if got := srv.SchedulerConfig().Accept.Rates; !slices.Equal(got, a.Rates) {
			t.Errorf("%q: the scheduler draws from %v, want %v", c.extra, got, a.Rates)
		}
	}
}
