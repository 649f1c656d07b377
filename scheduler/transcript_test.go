package scheduler

import (
	"flag"
	"fmt"
	"github.com/servesim/servesim/model/param"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/servesim/servesim/internal/transcript"
	"github.com/servesim/servesim/kvcache"
	"github.com/servesim/servesim/model/arch"
)

var update = flag.Bool("update", false, "rewrite the expected output of scheduler transcripts")

// A transcript is a sequence of commands, each followed by "----" and the expected output, then a
// blank line (etcd-io/raft interaction tests, cockroachdb/datadriven). Commands:
//
//	setup blocks=N block=B budget=T seqs=S [spec=K accept=p1,p2,...] [eagle] [hybrid] [mml=M] [nochunk]
//	add id=I prompt=P max=M [pid=X]
//	step            schedule one step, apply it, print what ran and what came out
//	abort id=I
//	state           queues and pool
//
// With accept=1,1,0 the acceptance draws are deterministic (1 = always, 0 = never).
type harness struct {
	s    *Scheduler
	kv   *kvcache.Manager
	reqs map[int]*Request
	b    Batch
}

func (h *harness) run(t *testing.T, cmd string) string {
	fields := strings.Fields(cmd)
	a := transcript.Args(fields[1:])
	var out strings.Builder
	switch fields[0] {
	case "setup":
		block := transcript.Int(t, a, "block", 16)
		specs := []arch.KVSpec{{Name: "attn", Kind: arch.SpecFull, Layers: 1, BytesPerToken: 1, AlignTokens: block}}
		k := transcript.Int(t, a, "spec", 0)
		if _, ok := a["hybrid"]; ok {
			specs = append(specs, arch.KVSpec{Name: "state", Kind: arch.SpecState, Layers: 1, StateBytes: float64(block)})
		}
		blocks := transcript.Int(t, a, "blocks", 64)
		mml := transcript.Int(t, a, "mml", 4096)
		l, err := kvcache.NewLayout(specs, float64(blocks*block), kvcache.Options{BlockSize: block, SpecTokens: k, MaxModelLen: min(mml, blocks*block/len(specs)), MaxNumBatchedTokens: transcript.Int(t, a, "budget", 64), PrefixCaching: true})
		if err != nil {
			t.Fatal(err)
		}
		l.MaxModelLen = mml
		_, eagle := a["eagle"]
		h.kv = kvcache.NewManager(l, eagle)
		var cdf []float64
		if k > 0 {
			for _, p := range strings.Split(a["accept"], ",") {
				f, err := strconv.ParseFloat(p, 64)
				if err != nil {
					t.Fatalf("accept: %v", err)
				}
				cdf = append(cdf, f)
			}
			if len(cdf) != k {
				t.Fatalf("accept has %d rates for spec=%d", len(cdf), k)
			}
		}
		cfg := Config{MaxNumBatchedTokens: transcript.Int(t, a, "budget", 64), MaxNumSeqs: transcript.Int(t, a, "seqs", 8), MaxModelLen: mml,
			SpecTokens: k, Accept: param.SpecAcceptance{Rates: cdf}}
		_, nochunk := a["nochunk"]
		cfg.ChunkedPrefill = !nochunk
		if _, ok := a["hybrid"]; ok {
			cfg.AlignBlock = block
		}
		h.s = New(cfg, h.kv, rand.New(rand.NewPCG(1, 2)))
		h.reqs = map[int]*Request{}
		fmt.Fprintf(&out, "pool %d blocks of %d tokens, %d groups\n", h.kv.Pool.NumBlocks(), block, len(l.Groups))
	case "add":
		id := transcript.Int(t, a, "id", 0)
		r := &Request{ID: RequestID(id), MaxTokens: transcript.Int(t, a, "max", 1),
			Content: kvcache.Content{PromptID: uint64(transcript.Int(t, a, "pid", 1000+id)), PromptTokens: transcript.Int(t, a, "prompt", 1), UniqueID: uint64(id)}}
		h.reqs[id] = r
		h.s.Add(r)
		fmt.Fprintf(&out, "waiting: %s\n", ids(h.s.waiting.slice()))
	case "abort":
		h.s.Abort(h.reqs[transcript.Int(t, a, "id", 0)])
		h.state(&out)
	case "step":
		h.s.Schedule(&h.b)
		for _, p := range h.b.Preempted {
			fmt.Fprintf(&out, "preempt %d\n", p.ID)
		}
		if len(h.b.Entries) == 0 {
			out.WriteString("idle\n")
		}
		for _, e := range h.b.Entries {
			kind := "prefill"
			if e.Decode {
				kind = "decode"
			}
			fmt.Fprintf(&out, "run %d: %s %d+%d", e.Req.ID, kind, e.Start, e.Tokens)
			if e.Drafts > 0 {
				fmt.Fprintf(&out, " (%d drafts)", e.Drafts)
			}
			if e.Start > 0 && e.Req.Admitted > 0 && e.Req.CachedTokens == e.Start && !e.Decode && e.Req.Computed == e.Start && e.Req.PrefilledTokens == 0 {
				fmt.Fprintf(&out, " [cache hit %d]", e.Start)
			}
			out.WriteString("\n")
		}
		for _, o := range h.s.Update(&h.b) {
			if o.Tokens == 0 {
				continue
			}
			fmt.Fprintf(&out, "emit %d: +%d (accepted %d) -> %d/%d", o.Req.ID, o.Tokens, o.Accepted, o.Req.Output, o.Req.MaxTokens)
			if o.Finished {
				out.WriteString(" finished")
			}
			out.WriteString("\n")
		}
		h.state(&out)
	case "state":
		h.state(&out)
	default:
		t.Fatalf("unknown command %q", fields[0])
	}
	return out.String()
}

func (h *harness) state(out *strings.Builder) {
	fmt.Fprintf(out, "running %s waiting %s free %d/%d cached %d\n", ids(h.s.running), ids(h.s.waiting.slice()), h.kv.Pool.NumFree(), h.kv.Pool.NumBlocks(), h.kv.Pool.NumCached())
	h.kv.Pool.CheckInvariants()
}

func ids(rs []*Request) string {
	var s []string
	for _, r := range rs {
		s = append(s, strconv.Itoa(int(r.ID)))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func TestTranscripts(t *testing.T) {
	transcript.RunDir(t, *update, func() func(*testing.T, string) string {
		h := &harness{}
		return h.run
	})
}
