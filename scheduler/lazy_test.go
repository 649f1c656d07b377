package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/servesim/servesim/kvcache"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/cost"
)

// linearSeq prices a request's share of a step in proportion to the tokens it reads and adds (an
// affine function of its start, as the cost model's are).
type linearSeq struct{}

func (linearSeq) Seq(w cost.SeqWork) cost.SeqSeconds {
	return cost.SeqSeconds{Attention: 1e-6 * float64(w.Start+w.Tokens)}
}

// TestLazyMatchesSchedule drives a scheduler in lazy mode and one in the plain mode with the same
// requests, arriving at the same steps, on a dense layout (where a growing decoder takes its block
// unnamed), a full-attention group beside a sliding-window one and a hybrid one with a recurrent
// state (where it names its blocks, and prompt chunks align to the block), with a pool of one to
// three max-length requests (preemptions) and a token budget from a few tokens per running request
// to a few prompts' worth, and checks at every step that the lazy one schedules the same step: the
// same tokens and sequences, the same preemptions, the same requests finishing with the same
// outputs, and afterwards the same running and waiting queues, every request at the same computed
// and output tokens.
func TestLazyMatchesSchedule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := lazyCase{
			mml:    rapid.SampledFrom([]int{512, 4096}).Draw(t, "max_model_len"),
			budget: rapid.SampledFrom([]int{16, 48, 64, 256, 2048}).Draw(t, "budget"),
			seqs:   rapid.IntRange(1, 24).Draw(t, "max_num_seqs"),
			layout: rapid.SampledFrom([]string{"dense", "dense", "sliding", "hybrid"}).Draw(t, "layout"),
		}
		if c.layout == "sliding" {
			c.window = rapid.SampledFrom([]int{lazyBlock, 3 * lazyBlock, 100}).Draw(t, "window")
		}
		// A pool of one max-length request's blocks and up to two more: any request fits alone
		// (one that did not would preempt itself forever), and a few at once preempt each other.
		c.extra = rapid.IntRange(0, 2*c.layout0(t).BlocksPerRequestMax).Draw(t, "extra_blocks")
		n := rapid.IntRange(1, 40).Draw(t, "requests")
		arrive := make([]int, n)
		for i := range arrive {
			arrive[i] = rapid.IntRange(0, 200).Draw(t, "arrival_step")
		}
		slices.Sort(arrive)
		for i, a := range arrive {
			longest := c.mml - 1
			if rapid.Bool().Draw(t, "short") {
				longest = 48 // many running at once: they fill the budget
			}
			c.reqs = append(c.reqs, lazyReq{arrive: a, prompt: rapid.IntRange(1, longest).Draw(t, "prompt"),
				out: rapid.IntRange(1, 300).Draw(t, "max_tokens"), pid: uint64(rapid.IntRange(1, 3).Draw(t, "prompt_id")),
				unique: rapid.Bool().Draw(t, "unique")})
			if q := &c.reqs[i]; q.unique {
				q.pid = 1000 + uint64(i) // no other request has its prompt
			}
		}
		checkLazy(t, c)
	})
}

// TestLazyPassStoppedLeavesExplicitAlone is a case TestLazyMatchesSchedule found: a pass that runs
// out of budget before an explicit request (one made explicit at this step) must leave it unscheduled, as
// Schedule does, not count it among the lazy decoders it starves.
func TestLazyPassStoppedLeavesExplicitAlone(t *testing.T) {
	checkLazy(t, lazyCase{layout: "hybrid", mml: 4096, budget: 48, seqs: 24, reqs: []lazyReq{
		{0, 1, 4, 1, false}, {0, 176, 1, 1, false}, {0, 17, 1, 1, false}, {0, 15, 3, 1, false}, {0, 1, 2, 1, false}, {0, 1, 3, 1, false}}})
}

// lazyBlock is the block size of TestLazyMatchesSchedule's layouts.
const lazyBlock = 16

// lazyCase is a scheduler configuration and its requests for checkLazy.
type lazyCase struct {
	layout            string // dense, sliding (window tokens) or hybrid
	mml, budget, seqs int
	window            int
	extra             int // blocks beyond one max-length request's
	reqs              []lazyReq
}

// lazyReq is a request arriving at step arrive, with content id pid; unique says no other
// request shares its prompt (kvcache.Content.PromptUnique: its blocks are freed without content).
type lazyReq struct {
	arrive, prompt, out int
	pid                 uint64
	unique              bool
}

type fataler interface {
	Fatalf(format string, args ...any)
}

// layout0 is c's layout before its pool is sized.
func (c *lazyCase) layout0(t fataler) *kvcache.Layout {
	specs := []arch.KVSpec{{Name: "attn", Kind: arch.SpecFull, Layers: 1, BytesPerToken: 1, AlignTokens: lazyBlock}}
	switch c.layout {
	case "sliding":
		specs = append(specs, arch.KVSpec{Name: "local", Kind: arch.SpecSliding, Layers: 1, BytesPerToken: 1, AlignTokens: lazyBlock, Window: c.window})
	case "hybrid":
		specs = append(specs, arch.KVSpec{Name: "state", Kind: arch.SpecState, Layers: 1, StateBytes: float64(lazyBlock)})
	}
	l, err := kvcache.NewLayout(specs, float64(8*c.mml*len(specs)), kvcache.Options{BlockSize: lazyBlock, MaxModelLen: c.mml,
		MaxNumBatchedTokens: c.budget, PrefixCaching: true})
	if err != nil {
		t.Fatalf("%v", err)
	}
	return l
}

// checkLazy drives a scheduler in lazy mode and one in the plain mode through case c and checks
// at every step that they schedule the same step (see TestLazyMatchesSchedule).
func checkLazy(t fataler, c lazyCase) {
	l := c.layout0(t)
	l.NumBlocks = l.BlocksPerRequestMax + c.extra
	budget, seqs, layout := c.budget, c.seqs, c.layout
	cfg := Config{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs, MaxModelLen: c.mml, ChunkedPrefill: true}
	if layout == "hybrid" {
		cfg.AlignBlock = lazyBlock
	}
	plain := New(cfg, kvcache.NewManager(l, false), rand.New(rand.NewPCG(1, 2)))
	lazy := New(cfg, kvcache.NewManager(l, false), rand.New(rand.NewPCG(1, 2)))
	lazy.EnableLazy(linearSeq{})

	type pair struct{ p, z *Request }
	var reqs []pair
	n := len(c.reqs)
	var pb, zb Batch
	next := 0
	for step := 0; step < 20000; step++ {
		for next < n && c.reqs[next].arrive <= step {
			q := c.reqs[next]
			mk := func() *Request {
				return &Request{ID: RequestID(next), MaxTokens: q.out, Content: kvcache.Content{PromptID: q.pid, PromptTokens: q.prompt, PromptUnique: q.unique, UniqueID: 1<<40 + uint64(next)}}
			}
			p := pair{mk(), mk()}
			reqs = append(reqs, p)
			plain.Add(p.p)
			lazy.Add(p.z)
			next++
		}
		if next == n && !plain.HasWork() {
			if lazy.HasWork() {
				t.Fatalf("step %d: the plain scheduler is done, the lazy one has %d running, %d waiting", step, lazy.NumRunning(), lazy.NumWaiting())
			}
			return
		}
		plain.Schedule(&pb)
		lazy.ScheduleLazy(&zb)
		zb.Lazy.Steps = 1
		fail := func(format string, a ...any) {
			t.Fatalf("step %d (%s, budget %d, max_num_seqs %d, %d blocks): %s", step, layout, budget, seqs, l.NumBlocks, fmt.Sprintf(format, a...))
		}
		if pb.NumTokens != zb.NumTokens || len(pb.Entries) != len(zb.Entries)+zb.Lazy.Implicit {
			fail("plain schedules %d tokens for %d requests, lazy %d for %d (%d implicit)",
				pb.NumTokens, len(pb.Entries), zb.NumTokens, len(zb.Entries)+zb.Lazy.Implicit, zb.Lazy.Implicit)
		}
		if a, b := ids(pb.Preempted), ids(zb.Preempted); a != b {
			fail("plain preempts %s, lazy %s", a, b)
		}
		finished := func(outs []Output) string {
			var s []string
			for _, o := range outs {
				if o.Finished {
					s = append(s, fmt.Sprintf("%d@%d", o.Req.ID, o.Req.Output))
				}
			}
			slices.Sort(s)
			return fmt.Sprint(s)
		}
		if a, b := finished(plain.Update(&pb)), finished(lazy.UpdateLazy(&zb)); a != b {
			fail("plain finishes %s, lazy %s", a, b)
		}
		if a, b := ids(plain.running), ids(lazy.running); a != b {
			fail("running: plain %s, lazy %s", a, b)
		}
		if a, b := ids(plain.waiting.slice()), ids(lazy.waiting.slice()); a != b {
			fail("waiting: plain %s, lazy %s", a, b)
		}
		for _, q := range reqs {
			c, o := lazy.Current(q.z)
			if q.p.State != q.z.State || c != q.p.Computed || o != q.p.Output {
				fail("request %d: plain %v computed %d output %d, lazy %v computed %d output %d",
					q.p.ID, q.p.State, q.p.Computed, q.p.Output, q.z.State, c, o)
			}
			if q.p.State == Running {
				// A lazy decoder's blocks: those in its table and those grown for it without.
				held := q.z.table.HeldBlocks()
				if lazy.isLazy(q.z) {
					held += lazy.owedBlocks(q.z)
				}
				if want := q.p.table.HeldBlocks(); held != want {
					fail("request %d holds %d blocks, lazy %d", q.p.ID, want, held)
				}
			}
		}
		if a, b := plain.kv.Pool.NumFree(), lazy.kv.Pool.NumFree(); a != b {
			fail("free blocks: plain %d, lazy %d", a, b)
		}
	}
	t.Fatalf("not done after 20000 steps")
}
