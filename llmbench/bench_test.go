package llmbench_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

var (
	seedOnce sync.Once
	seedRes  *llmbench.Result
	seedErr  error
	seedSrv  *sim.Server
)

// seedRun simulates the embedded seed scenario once per test binary, with the shipped parameters
// (calibrated when a calibration exists, else priors).
func seedRun(t testing.TB) (*llmbench.Result, *sim.Server) {
	t.Helper()
	seedOnce.Do(func() {
		s := scenario.Default()
		r, err := s.Resolve(scenario.ResolveOptions{})
		if err != nil {
			seedErr = err
			return
		}
		seedSrv, seedErr = sim.NewServer(r.Deployment, r.Params)
		if seedErr != nil {
			return
		}
		seedRes, seedErr = llmbench.RunMatrix(seedSrv, &s.Protocol, llmbench.Options{Seed: s.Seed})
	})
	if seedErr != nil {
		t.Fatal(seedErr)
	}
	return seedRes, seedSrv
}

func seedMeasured(t testing.TB) *matrix.Matrix {
	m, err := matrix.LoadBytes(scenario.SeedMeasured(), "seed")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSeedStatusesMatch(t *testing.T) {
	res, _ := seedRun(t)
	meas := seedMeasured(t)
	if len(res.Matrix.Decode) != 64 || len(meas.Decode) != 64 {
		t.Fatalf("decode cells: predicted %d, measured %d; want 64", len(res.Matrix.Decode), len(meas.Decode))
	}
	for i, p := range res.Matrix.Decode {
		m := meas.Decode[i]
		if p.Context != m.Context || p.Concurrency != m.Concurrency {
			t.Fatalf("cell %d: predicted %s x %d, measured %s x %d: order differs", i, p.Context, p.Concurrency, m.Context, m.Concurrency)
		}
		if p.Status != m.Status {
			t.Errorf("%s x %d: status %q, measured %q", p.Context, p.Concurrency, p.Status, m.Status)
		}
	}
}

func TestSeedKVCapacityWithinStatusBound(t *testing.T) {
	_, srv := seedRun(t)
	// 16K x 128 ran: 128 x (16,384 + 4,096) = 2,621,440 <= kv tokens; 1019K x 4 was refused:
	// 4 x (1,044,416 + 4,096) = 4,194,048 > kv tokens.
	kv := srv.Layout.KVCacheSizeTokens
	if kv < 2621440 || kv >= 4194048 {
		t.Fatalf("kv_cache_size_tokens = %d, outside the seed's bound [2621440, 4194048)", kv)
	}
}

func TestSeedProtocolStructure(t *testing.T) {
	res, _ := seedRun(t)
	m := res.Matrix
	// The 1024K decode context is fitted to max_model_len - 4,096 - 64 tokens.
	c, ok := m.Find(matrix.Key{Phase: matrix.Decode, Context: "1019K", Concurrency: 1})
	if !ok || c.ContextTokens != 1044416 {
		t.Fatalf("1019K row: found %v, tokens %d; want 1,044,416-token prompts", ok, c.ContextTokens)
	}
	// Prefill rows: every decode context plus the prefill-only 1024K row.
	if len(m.Prefill) != 9 || m.Prefill[8].Context != "1024K" {
		t.Fatalf("prefill rows = %d (last %q), want 9 ending with 1024K", len(m.Prefill), m.Prefill[len(m.Prefill)-1].Context)
	}
	for _, c := range m.Decode {
		if !c.Status.Ran() {
			continue
		}
		// Output tokens are what the window saw: total tok/s x window.
		if got := c.TotalTokS * c.MeasuredS; int(got+0.5) != c.OutputTokens {
			t.Errorf("%s x %d: %v tok/s x %v s != %d output tokens", c.Context, c.Concurrency, c.TotalTokS, c.MeasuredS, c.OutputTokens)
		}
		switch {
		case c.Concurrency == 1:
			// One 4,096-token request completes (about 22 s) and its successor starts.
			if c.Completed != 1 {
				t.Errorf("%s x 1: completed %d, want 1", c.Context, c.Completed)
			}
			// The successor pays its TTFT inside the window, so total tok/s stays at or below the
			// per-request rate; 1 % allows for the two requests' different acceptance draws.
			if c.OutputTokens <= 4096-int(c.PerRequestTokS*2) || c.TotalTokS > 1.01*c.PerRequestTokS {
				t.Errorf("%s x 1: %d tokens at %v tok/s (per request %v): want one finished request plus part of the next, total below per-request",
					c.Context, c.OutputTokens, c.TotalTokS, c.PerRequestTokS)
			}
		case c.Concurrency >= 4:
			// 4,096 tokens at under 100 tok/s per stream take over 40 s: nothing completes.
			if c.Completed != 0 {
				t.Errorf("%s x %d: completed %d, want 0", c.Context, c.Concurrency, c.Completed)
			}
		}
		if c.Concurrency > 32 {
			// The readiness condition cannot hold, so the window starts at the tool's timeout
			// (60 s up to 32K), long after all 32 admissible requests run: every poll in the
			// window sees max_num_seqs running, as the seed shows (32.0), and none of them has
			// reached its 4,096th token by the window's end.
			if c.AvgActive != 32 || c.Completed != 0 {
				t.Errorf("%s x %d: average active %v, completed %d; want 32.0 (max_num_seqs) and 0", c.Context, c.Concurrency, c.AvgActive, c.Completed)
			}
		} else if c.AvgActive > float64(c.Concurrency)+1e-9 {
			t.Errorf("%s x %d: average active %v above C", c.Context, c.Concurrency, c.AvgActive)
		}
	}
}

func TestMatrixDeterministic(t *testing.T) {
	_, srv := seedRun(t)
	proto := scenario.Default().Protocol
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		res, err := llmbench.RunMatrix(srv, &proto, llmbench.Options{Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		if err := matrix.WriteCSV(buf, res.Matrix); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two runs with seed 7 gave different CSV")
	}
	// A different seed changes the acceptance draws and therefore the numbers.
	res, err := llmbench.RunMatrix(srv, &proto, llmbench.Options{Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	matrix.WriteCSV(&c, res.Matrix)
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatal("seeds 7 and 8 gave identical CSV: the seed is not reaching the acceptance draws")
	}
}

func TestDenseModelDecodeFallsWithContext(t *testing.T) {
	// The same cost model, unchanged, on a dense GQA model: decode must slow with context because
	// every token reads the whole KV cache. Llama-3.1-70B-like shape on 8 x H100 (NVLink).
	a := &arch.Arch{Name: "llama-70b-like", Family: "llama", Hidden: 8192, Vocab: 128256, Layers: []arch.LayerGroup{{
		Count: 80, Attn: arch.Attention{Kind: arch.AttnGQA, Heads: 64, KVHeads: 8, HeadDim: 128},
		FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 28672}}}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	gpu, err := hardware.BuiltinCatalog().Find("H100-SXM")
	if err != nil {
		t.Fatal(err)
	}
	e := deploy.DefaultEngineConfig()
	e.TensorParallel = 8
	e.MaxModelLen = 131072
	d := &deploy.Deployment{Model: a, Hardware: hardware.Machine{GPU: gpu, Count: 8}, Engine: e}
	srv, err := sim.NewServer(d, param.Priors())
	if err != nil {
		t.Fatal(err)
	}
	var prev float64
	for i, ctx := range []int{4096, 32768, 131000 - 2048} {
		x, err := llmbench.Explain(srv, ctx, 32)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && x.TotalTokS >= prev*0.97 {
			t.Errorf("context %d: %.0f tok/s, not clearly below %.0f at the shorter context", ctx, x.TotalTokS, prev)
		}
		prev = x.TotalTokS
	}
}

// BenchmarkSeedMatrix simulates the whole seed matrix (73 cells, about 30 minutes of server time).
func BenchmarkSeedMatrix(b *testing.B) {
	_, srv := seedRun(b)
	proto := scenario.Default().Protocol
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := llmbench.RunMatrix(srv, &proto, llmbench.Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
