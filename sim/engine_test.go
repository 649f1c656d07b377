package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/vtime"
)

// smallServer is a small dense GQA model on a GPU with little memory, so random loads hit the KV
// limit, preempt and queue.
func smallServer(t interface{ Fatal(...any) }, memGiB float64, seqs, budget int, spec int) *Server {
	a := &arch.Arch{Name: "tiny", Family: "llama", Hidden: 1024, Vocab: 8000, Layers: []arch.LayerGroup{{
		Count: 8, Attn: arch.Attention{Kind: arch.AttnGQA, Heads: 16, KVHeads: 4, HeadDim: 64},
		FFN: arch.FFN{Kind: arch.FFNDense, Intermediate: 4096}}}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	g := hardware.GPU{Name: "toy", MemoryGiB: memGiB, BandwidthGBps: 1000, BF16TFLOPS: 100, FP8TFLOPS: 200, Link: hardware.LinkPCIe, LinkGBps: 32, LinkLatencyUS: 10}
	e := deploy.DefaultEngineConfig()
	e.MaxModelLen, e.MaxNumSeqs, e.MaxNumBatchedTokens, e.GPUMemoryUtilization = 4096, seqs, budget, 0.9
	d := &deploy.Deployment{Model: a, Hardware: hardware.Machine{GPU: g, Count: 1}, Engine: e}
	p := param.Priors()
	p[param.NonTorchGiB], p[param.CUDAGraphGiB], p[param.ActivationBuffers] = 0.3, 0.1, 4
	if spec > 0 {
		d.Engine.Speculative = deploy.Speculative{Method: "ngram", NumTokens: spec}
	}
	s, err := NewServer(d, p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type arrival struct {
	at                   vtime.Time
	prompt, out, prompID int
}

// load draws a family of arrivals: steady, burst or ramp, with seeded jitter.
func load(t *rapid.T) []arrival {
	kind := rapid.SampledFrom([]string{"steady", "burst", "ramp"}).Draw(t, "kind")
	n := rapid.IntRange(1, 40).Draw(t, "n")
	var out []arrival
	at := vtime.Time(0)
	for i := 0; i < n; i++ {
		switch kind {
		case "steady":
			at = at.Add(vtime.Duration(rapid.IntRange(1, 200).Draw(t, "gap_ms")) * vtime.Millisecond)
		case "ramp":
			at = at.Add(vtime.Duration(rapid.IntRange(1, 400).Draw(t, "gap_ms")/(i+1)+1) * vtime.Millisecond)
		}
		out = append(out, arrival{at: at,
			prompt:  rapid.IntRange(1, 3000).Draw(t, "prompt"),
			out:     rapid.IntRange(1, 300).Draw(t, "out"),
			prompID: rapid.IntRange(0, 3).Draw(t, "prompt_id")})
	}
	return out
}

// TestEngineInvariants runs random loads to completion and checks the engine's promises: the pool
// never hands out more blocks than it has and leaks none; tokens are conserved; prefill covers each
// admission exactly once; time never goes backwards (the engine panics otherwise); the run ends.
func TestEngineInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mem := rapid.Float64Range(0.85, 1.3).Draw(t, "mem_gib")
		spec := rapid.IntRange(0, 4).Draw(t, "spec")
		srv := smallServer(t, mem, rapid.IntRange(1, 16).Draw(t, "seqs"), rapid.IntRange(64, 2048).Draw(t, "budget"), spec)
		eng := srv.NewEngine(rapid.Uint64().Draw(t, "seed"))
		arrivals := load(t)
		var recs []*Record
		pool := eng.Scheduler().KV().Pool
		for _, a := range arrivals {
			a := a
			eng.At(a.at, func(e *Engine) {
				recs = append(recs, e.Submit(RequestSpec{PromptTokens: a.prompt, MaxTokens: a.out, PromptID: uint64(a.prompID + 1)}))
			})
		}
		// Cancel a random few mid-flight.
		cancels := rapid.IntRange(0, 3).Draw(t, "cancels")
		for i := 0; i < cancels; i++ {
			at := vtime.Time(rapid.IntRange(0, 5000).Draw(t, "cancel_ms")) * vtime.Time(vtime.Millisecond)
			eng.At(at, func(e *Engine) {
				if len(recs) > 0 {
					e.Cancel(recs[len(recs)/2])
				}
			})
		}
		eng.Hooks.OnTokens = func(e *Engine, r *Record, n int, done bool) {
			pool.CheckInvariants()
			if pool.NumFree() < 0 || pool.NumFree() > pool.NumBlocks() {
				t.Fatalf("free blocks %d of %d", pool.NumFree(), pool.NumBlocks())
			}
		}
		err := eng.RunUntilIdle()
		if err != nil {
			// The only acceptable failure: a prompt that cannot fit even in an idle engine.
			t.Skipf("run stopped: %v", err)
		}
		if pool.NumFree() != pool.NumBlocks() {
			t.Fatalf("after every request ended %d of %d blocks are free: leak", pool.NumFree(), pool.NumBlocks())
		}
		for _, r := range recs {
			if r.Live() {
				t.Fatalf("request %d still live after the engine went idle", r.ID)
			}
			if r.Tokens > r.Spec.MaxTokens {
				t.Fatalf("request %d: %d tokens > max_tokens %d", r.ID, r.Tokens, r.Spec.MaxTokens)
			}
			if r.Finished && r.Tokens != r.Spec.MaxTokens && r.Spec.PromptTokens+r.Tokens < srv.Deployment.Engine.MaxModelLen {
				t.Fatalf("request %d finished with %d of %d tokens below max_model_len", r.ID, r.Tokens, r.Spec.MaxTokens)
			}
			if r.Finished && r.Prefilled != r.PrefillOwed {
				t.Fatalf("request %d: prefilled %d tokens, admissions owed %d (preemptions %d)", r.ID, r.Prefilled, r.PrefillOwed, r.Preemptions)
			}
			if r.Finished && r.Preemptions == 0 && r.PrefillOwed != r.Spec.PromptTokens-r.CachedTokens {
				t.Fatalf("request %d: owed %d != prompt %d - hit %d", r.ID, r.PrefillOwed, r.Spec.PromptTokens, r.CachedTokens)
			}
			if r.FirstToken >= 0 && (r.FirstToken < r.Send || r.LastToken < r.FirstToken) {
				t.Fatalf("request %d: send %v first %v last %v out of order", r.ID, r.Send, r.FirstToken, r.LastToken)
			}
		}
	})
}

func TestEngineGuard(t *testing.T) {
	srv := smallServer(t, 1, 4, 512, 0)
	eng := New(Config{Scheduler: srv.SchedulerConfig(), Layout: srv.Layout, Cost: srv.Cost, MaxEvents: 10})
	for i := 0; i < 5; i++ {
		eng.Submit(RequestSpec{PromptTokens: 100, MaxTokens: 100, PromptID: 1})
	}
	err := eng.RunUntilIdle()
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err = %v, want ErrLimit after 10 events", err)
	}
}

func TestEngineRejectsUnfittablePrompt(t *testing.T) {
	srv := smallServer(t, 1, 4, 4096, 0)
	// A pool shrunk below one prompt (vLLM would refuse to start; the engine must still not hang).
	l := *srv.Layout
	l.NumBlocks = 10
	eng := New(Config{Scheduler: srv.SchedulerConfig(), Layout: &l, Cost: srv.Cost})
	eng.Submit(RequestSpec{PromptTokens: 11 * l.BlockSize, MaxTokens: 10, PromptID: 1})
	if err := eng.RunUntilIdle(); err == nil {
		t.Fatal("a prompt larger than the whole KV cache: want an error, not a hang")
	}
}

func TestEventOrder(t *testing.T) {
	srv := smallServer(t, 1, 4, 512, 0)
	eng := srv.NewEngine(1)
	var got []string
	for i := 0; i < 3; i++ {
		i := i
		eng.At(vtime.Time(5), func(*Engine) { got = append(got, fmt.Sprint("timer", i)) })
	}
	if err := eng.RunUntil(10); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[timer0 timer1 timer2]" {
		t.Fatalf("timers at equal times ran as %v, want sequence order", got)
	}
}

func TestFrontendSerialises(t *testing.T) {
	srv := smallServer(t, 1, 8, 4096, 0)
	eng := srv.NewEngine(1)
	a := eng.Submit(RequestSpec{PromptTokens: 1000, MaxTokens: 1, PromptID: 1})
	b := eng.Submit(RequestSpec{PromptTokens: 1000, MaxTokens: 1, PromptID: 2})
	if err := eng.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	d := vtime.FromSeconds(srv.Cost.FrontendSeconds(1000))
	if a.Arrive != vtime.Time(d) || b.Arrive != vtime.Time(2*d) {
		t.Fatalf("arrivals %v and %v, want %v and %v: the API server handles one prompt at a time", a.Arrive, b.Arrive, d, 2*d)
	}
}

func BenchmarkEngineClosedLoop(b *testing.B) {
	srv := smallServer(b, 8, 64, 2048, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		eng := srv.NewEngine(1)
		for j := 0; j < 256; j++ {
			eng.Submit(RequestSpec{PromptTokens: 200 + rng.IntN(800), MaxTokens: 100 + rng.IntN(200), PromptID: uint64(j%8 + 1)})
		}
		if err := eng.RunUntilIdle(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAdmissionTime(t *testing.T) {
	srv := smallServer(t, 1, 1, 4096, 0)
	eng := srv.NewEngine(1)
	a := eng.Submit(RequestSpec{PromptTokens: 100, MaxTokens: 200, PromptID: 1})
	b := eng.Submit(RequestSpec{PromptTokens: 100, MaxTokens: 5, PromptID: 2})
	if err := eng.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	// max_num_seqs 1: b waits in the queue until a finishes.
	if a.Admitted != a.Arrive || b.Admitted < a.End || b.Admitted <= b.Arrive {
		t.Fatalf("a arrive %v admitted %v end %v; b arrive %v admitted %v: want a admitted on arrival, b after a ends", a.Arrive, a.Admitted, a.End, b.Arrive, b.Admitted)
	}
}
