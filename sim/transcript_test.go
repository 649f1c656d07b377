package sim

import (
	"flag"
	"fmt"
	"github.com/servesim/servesim/model/param"
	"strconv"
	"strings"
	"testing"

	"github.com/servesim/servesim/internal/transcript"
	"github.com/servesim/servesim/kvcache"
	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/scheduler"
	"github.com/servesim/servesim/vtime"
)

var update = flag.Bool("update", false, "rewrite the expected output of sim transcripts")

// A transcript is a sequence of commands, each followed by "----" and the expected output, then a
// blank line (etcd-io/raft interaction tests, cockroachdb/datadriven). Lines starting with # are
// comments: they say why the expected lines are right. Times are simulated milliseconds.
// Commands:
//
//	setup blocks=N block=B budget=T seqs=S step=US tok=US fe=US fetok=US [spec=K accept=p1,...] [eagle]
//	        an engine over a one-group KV cache of N B-token blocks, with a fake cost model: a step
//	        takes step + tok x scheduled tokens microseconds; the API server takes fe + fetok x
//	        prompt tokens microseconds per request, one request at a time
//	submit at=MS prompt=P max=M [pid=X] [again=N]
//	        a client timer at MS that sends a request (ids count from 1 in send order) whose
//	        prompt is content X (default: distinct per submit command); with
//	        again=N, each time it finishes its client sends it again, N times (a closed loop)
//	cancel at=MS id=I       a client timer that cancels request I
//	timer at=MS name=X      a client timer that only logs
//	run until=MS | run idle process events, logging each as it happens
//	records                 every request's record
//
// The log shows, per event: "arrive" (the request reaches the scheduler after the frontend), "step"
// (a step starts: its entries, as id: kind start+tokens, and when it will end), "deliver" (a
// finished step streams n tokens to a client), timer actions ("submit", "cancel", "timer").
type simHarness struct {
	e       *Engine
	recs    []*Record
	arrived map[*Record]bool
	log     []string // lines of the event being processed
	pending string   // a step start, logged after the event's other lines
	again   map[*Record]int
	submits int // submit commands so far: the default prompt content of the next
}

// fakeCost is a cost model with round numbers.
type fakeCost struct {
	h             *simHarness
	stepUS, tokUS float64
	feUS, feTokUS float64
}

func (c *fakeCost) Step(s *cost.StepShape) cost.StepCost {
	us := c.stepUS + c.tokUS*float64(s.Tokens)
	c.h.stepStarts(us)
	return cost.StepCost{TotalSeconds: us * 1e-6, GPUSeconds: us * 1e-6}
}

func (c *fakeCost) FrontendSeconds(prompt int) float64 {
	return (c.feUS + c.feTokUS*float64(prompt)) * 1e-6
}

func ms(t vtime.Time) string { return fmt.Sprintf("%.3f", float64(t)/1e6) }

func (h *simHarness) logf(format string, a ...any) {
	h.log = append(h.log, fmt.Sprintf("%s ", ms(h.e.Now()))+fmt.Sprintf(format, a...))
}

// stepStarts is called by the cost model when the engine starts a step (the batch is built).
func (h *simHarness) stepStarts(us float64) {
	var parts []string
	for _, p := range h.e.batch.Preempted {
		parts = append(parts, fmt.Sprintf("preempt %d", p.ID))
	}
	for _, en := range h.e.batch.Entries {
		kind := "prefill"
		if en.Decode {
			kind = "decode"
		}
		s := fmt.Sprintf("%d: %s %d+%d", en.Req.ID, kind, en.Start, en.Tokens)
		if en.Drafts > 0 {
			s += fmt.Sprintf(" (%d drafts)", en.Drafts)
		}
		parts = append(parts, s)
	}
	end := h.e.Now().Add(vtime.FromSeconds(us * 1e-6))
	h.pending = fmt.Sprintf("%s step %d: %s; ends %s", ms(h.e.Now()), h.e.Steps+1, strings.Join(parts, ", "), ms(end))
}

// observe runs before every event (RunWhile's condition): it logs what the previous event did.
// Arrivals are seen here, after the event; a step the event started is logged last, because the
// engine starts it after handling the event.
func (h *simHarness) observe() bool {
	for _, r := range h.recs {
		if r.Arrive >= 0 && !h.arrived[r] {
			h.arrived[r] = true
			h.log = append(h.log, fmt.Sprintf("%s arrive %d", ms(r.Arrive), r.ID))
		}
	}
	if h.pending != "" {
		h.log = append(h.log, h.pending)
		h.pending = ""
	}
	return true
}

func msTime(f float64) vtime.Time { return vtime.Time(vtime.FromSeconds(f / 1e3)) }

func (h *simHarness) submit(spec RequestSpec, again int) *Record {
	r := h.e.Submit(spec)
	h.recs = append(h.recs, r)
	if again > 0 {
		h.again[r] = again
	}
	h.logf("submit %d (prompt %d, max %d): arrives %s", r.ID, spec.PromptTokens, spec.MaxTokens, ms(h.e.frontendFree))
	return r
}

func (h *simHarness) run(t *testing.T, cmd string) string {
	fields := strings.Fields(cmd)
	a := transcript.Args(fields[1:])
	h.log = h.log[:0]
	var out strings.Builder
	switch fields[0] {
	case "setup":
		block := int(transcript.Num(t, a, "block", 16))
		blocks := int(transcript.Num(t, a, "blocks", 64))
		budget := int(transcript.Num(t, a, "budget", 64))
		k := int(transcript.Num(t, a, "spec", 0))
		specs := []arch.KVSpec{{Name: "attn", Kind: arch.SpecFull, Layers: 1, BytesPerToken: 1, AlignTokens: block}}
		l, err := kvcache.NewLayout(specs, float64(blocks*block), kvcache.Options{BlockSize: block, SpecTokens: k,
			MaxModelLen: blocks * block, MaxNumBatchedTokens: budget, PrefixCaching: true})
		if err != nil {
			t.Fatal(err)
		}
		var cdf []float64
		if k > 0 {
			for _, p := range strings.Split(a["accept"], ",") {
				f, err := strconv.ParseFloat(p, 64)
				if err != nil {
					t.Fatalf("accept: %v", err)
				}
				cdf = append(cdf, f)
			}
		}
		*h = simHarness{arrived: map[*Record]bool{}, again: map[*Record]int{}}
		c := &fakeCost{h: h, stepUS: transcript.Num(t, a, "step", 10000), tokUS: transcript.Num(t, a, "tok", 0),
			feUS: transcript.Num(t, a, "fe", 1000), feTokUS: transcript.Num(t, a, "fetok", 0)}
		_, eagle := a["eagle"]
		h.e = New(Config{Scheduler: scheduler.Config{MaxNumBatchedTokens: budget, MaxNumSeqs: int(transcript.Num(t, a, "seqs", 8)),
			MaxModelLen: blocks * block, ChunkedPrefill: true, SpecTokens: k, Accept: param.SpecAcceptance{Rates: cdf}},
			Layout: l, EagleDrop: eagle, Cost: c, Seed: 1})
		h.e.Hooks.OnTokens = func(e *Engine, r *Record, n int, done bool) {
			s := fmt.Sprintf("deliver %d: +%d -> %d", r.ID, n, r.Tokens)
			if done {
				s += " finished"
			}
			h.logf("%s", s)
			if done && h.again[r] > 0 {
				h.submit(r.Spec, h.again[r]-1)
			}
		}
		fmt.Fprintf(&out, "%d blocks of %d tokens, budget %d, max_num_seqs %d\n", blocks, block, budget, int(transcript.Num(t, a, "seqs", 8)))
		return out.String()
	case "submit":
		at := msTime(transcript.Num(t, a, "at", 0))
		spec := RequestSpec{PromptTokens: int(transcript.Num(t, a, "prompt", 1)), MaxTokens: int(transcript.Num(t, a, "max", 1)),
			PromptID: uint64(transcript.Num(t, a, "pid", float64(1000+h.submits)))}
		h.submits++
		again := int(transcript.Num(t, a, "again", 0))
		h.e.At(at, func(*Engine) { h.submit(spec, again) })
	case "cancel":
		id := int(transcript.Num(t, a, "id", 0))
		h.e.At(msTime(transcript.Num(t, a, "at", 0)), func(e *Engine) {
			h.logf("cancel %d", id)
			e.Cancel(h.recs[id-1])
		})
	case "timer":
		name := a["name"]
		h.e.At(msTime(transcript.Num(t, a, "at", 0)), func(*Engine) { h.logf("timer %s", name) })
	case "run":
		limit := vtime.Never
		if v, ok := a["until"]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			limit = msTime(f)
		}
		err := h.e.RunWhile(h.observe, limit)
		h.observe()
		if err == nil && limit != vtime.Never {
			err = h.e.RunUntil(limit)
		}
		for _, l := range h.log {
			out.WriteString(l + "\n")
		}
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
		}
		s := h.e.Scheduler()
		fmt.Fprintf(&out, "now %s: running %d waiting %d free %d/%d\n", ms(h.e.Now()), s.NumRunning(), s.NumWaiting(),
			s.KV().Pool.NumFree(), s.KV().Pool.NumBlocks())
	case "records":
		t := func(x vtime.Time) string {
			if x < 0 {
				return "-"
			}
			return ms(x)
		}
		for _, r := range h.recs {
			state := "live"
			switch {
			case r.Finished:
				state = "finished"
			case r.Cancelled:
				state = "cancelled"
			}
			fmt.Fprintf(&out, "%d: send %s arrive %s admitted %s first %s last %s end %s tokens %d %s; cached %d prefilled %d preemptions %d\n",
				r.ID, t(r.Send), t(r.Arrive), t(r.Admitted), t(r.FirstToken), t(r.LastToken), t(r.End), r.Tokens, state,
				r.CachedTokens, r.Prefilled, r.Preemptions)
		}
	default:
		t.Fatalf("unknown command %q", fields[0])
	}
	return out.String()
}

func TestTranscripts(t *testing.T) {
	transcript.RunDir(t, *update, func() func(*testing.T, string) string {
		h := &simHarness{}
		return h.run
	})
}
