package hardware_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/sim"
)

// tomlFloat writes v as TOML does (nan, inf, -inf).
func tomlFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// FuzzCatalogIntoEngine: GPU catalog values that the catalog accepts flow into the engine without
// a panic (NaN bandwidth used to panic simulate with "vtime: invalid duration NaN s") and give
// finite, positive step times and latencies. A tiny dense model keeps each execution cheap.
func FuzzCatalogIntoEngine(f *testing.F) {
	f.Add(95.59, 1597.0, 480.0, 960.0, 1920.0, 64.0, 10.0, 1.6, "pcie")
	f.Add(80.0, math.NaN(), 989.0, 1979.0, 0.0, 450.0, 3.0, 2.5, "nvlink")
	f.Add(1e300, 1e-9, 0.0, -1.0, math.Inf(1), 0.01, 1e9, -1.0, "xgmi")
	f.Add(1.0, 10.0, 1e-300, 0.0, 0.0, 0.1, 0.01, 0.0, "pcie")
	f.Add(16.0, 10.0, 1e-300, 0.0, 0.0, 0.1, 0.01, 0.0, "pcie")
	a := &arch.Arch{Name: "tiny", Family: "llama", Hidden: 1024, Vocab: 8000, Layers: []arch.LayerGroup{{
		Count: 8, Attn: arch.Attention{Kind: arch.AttnGQA, Heads: 16, KVHeads: 4, HeadDim: 64},
		FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 4096}}}}
	if err := a.Normalize(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, mem, bw, bf16, fp8, fp4, link, lat, price float64, kind string) {
		doc := fmt.Sprintf("[[gpu]]\nname = \"g\"\nmemory_gib = %s\nbandwidth_gbps = %s\nbf16_tflops = %s\nfp8_tflops = %s\nfp4_tflops = %s\nlink = %q\nlink_gbps = %s\nlink_latency_us = %s\nprice_per_hour = %s\n",
			tomlFloat(mem), tomlFloat(bw), tomlFloat(bf16), tomlFloat(fp8), tomlFloat(fp4), kind, tomlFloat(link), tomlFloat(lat), tomlFloat(price))
		c, err := hardware.ParseCatalog([]byte(doc), "g.toml")
		if err != nil {
			return
		}
		g := c.GPUs[0]
		for _, v := range []float64{g.MemoryBytes(), g.BandwidthBytesPerS(), g.LinkBytesPerS(), g.PeakFLOPS(arch.BF16), g.PeakFLOPS(arch.FP8)} {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("accepted GPU %+v gives %v", g, v)
			}
		}
		e := deploy.DefaultEngineConfig()
		e.MaxModelLen, e.MaxNumSeqs, e.MaxNumBatchedTokens, e.GPUMemoryUtilization = 4096, 8, 2048, 0.9
		d := &deploy.Deployment{Model: a, Hardware: hardware.Machine{GPU: g, Count: 1}, Engine: e}
		srv, err := sim.NewServer(d, param.Priors())
		if err != nil {
			return // too little memory for the model: an error, as it should be
		}
		var s cost.StepShape
		s.Add(cost.SeqWork{Start: 1000, Tokens: 1, Decode: true, Emits: true})
		if st := srv.Cost.Step(&s); !(st.TotalSeconds > 0 && st.TotalSeconds < 3600) {
			t.Fatalf("GPU %+v: a one-token decode step of a tiny model takes %v s", g, st.TotalSeconds)
		}
		eng := srv.NewEngine(1)
		rec := eng.Submit(sim.RequestSpec{PromptTokens: 256, MaxTokens: 8})
		if err := eng.RunUntilIdle(); err != nil {
			t.Fatalf("GPU %+v: %v", g, err)
		}
		tpot := rec.LastToken.Sub(rec.FirstToken).Seconds() / 7
		if !rec.Finished || !(tpot > 0) || math.IsInf(tpot, 0) {
			t.Fatalf("GPU %+v: finished %v, TPOT %v s", g, rec.Finished, tpot)
		}
	})
}
