package workload

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
)

// noFrontend is the step cost of an engine driven in-process by vLLM's LLM class (vllm bench
// throughput): there is no API server, so a request reaches the scheduler when it is added. The
// cost model's other methods (the fast mode's span costs included) are its own.
type noFrontend struct{ *cost.Model }

func (noFrontend) FrontendSeconds(int) float64 { return 0 }

// offlineEngine is an engine of srv without the API server's per-request time; it runs in the
// fast mode unless srv.StepByStep.
func offlineEngine(srv *sim.Server, seed uint64) *sim.Engine {
	return sim.New(sim.Config{
		Scheduler:  srv.SchedulerConfig(),
		Layout:     srv.Layout,
		EagleDrop:  srv.Deployment.Engine.Speculative.EagleFamily(),
		Cost:       noFrontend{srv.Cost},
		Seed:       seed,
		StepByStep: srv.StepByStep,
	})
}

// runVLLMBench simulates a vllm-bench or offline workload: the dataset's requests are dealt
// round-robin over the replicas (the client's semaphore is shared out the same way), each
// replica runs its share, and the parts are summarised together.
func runVLLMBench(srv *sim.Server, s *Spec, o Options) (*Metrics, error) {
	b := s.VLLM
	if b.Dataset == "sharegpt" {
		if err := s.LoadDataset(); err != nil {
			return nil, err
		}
	}
	reqs, _, err := b.benchRequests(s.Kind)
	if err != nil {
		return nil, err
	}
	seed := s.SeedFor(o)
	r := o.replicas(srv)
	active := r
	var concs []int
	if b.MaxConcurrency > 0 {
		concs = splitCount(b.MaxConcurrency, r)
		active = min(b.MaxConcurrency, r)
	}
	total := len(reqs)
	done := 0
	var parts []part
	seen := map[uint64]int{}
	for i := 0; i < active; i++ {
		var sub []benchReq
		for j := i; j < len(reqs); j += active {
			sub = append(sub, reqs[j])
		}
		// The ready check goes to the first replica; the warm-ups are dealt like the requests.
		ready := s.Kind == KindVLLMBench && !b.NoReadyCheck && i == 0 && len(reqs) > 0
		warmups := 0
		if s.Kind == KindVLLMBench && len(reqs) > 0 {
			warmups = b.NumWarmups / active
			if i < b.NumWarmups%active {
				warmups++
			}
		}
		if len(sub) == 0 && !ready && warmups == 0 {
			continue
		}
		conc := 0
		if concs != nil {
			conc = concs[i]
		}
		var prog func(int)
		if o.Progress != nil {
			base := done
			prog = func(n int) { o.Progress(base+n, total) }
		}
		var warm *benchReq
		if len(reqs) > 0 {
			warm = &reqs[0]
		}
		// Replicas that receive identical work (the same lengths, send times and prompt sharing)
		// behave identically: simulated once, counted as many times.
		key := benchKey(sub, warm, ready, warmups, conc)
		if j, ok := seen[key]; ok {
			parts[j].mult++
			done += len(sub)
			continue
		}
		c, err := runBenchClient(srv, sub, warm, ready, warmups, conc, seed, s.sampleInterval(), &s.SLO, s.Kind == KindOffline, prog)
		if err != nil {
			return nil, err
		}
		seen[key] = len(parts)
		parts = append(parts, part{c, 1})
		done += len(sub)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("workload %q: no request to simulate", s.Name)
	}
	return summarise(s, seed, parts, r), nil
}

// runBenchClient is vllm bench's client against one engine. First, pre requests with request 0's
// prompt and lengths (the ready check and the warm-ups), at most conc at a time, run to
// completion; they fill the prefix cache with request 0's prompt. Then the measured run starts
// (t0): request i is due at t0 + At; a due request waits for a slot of the semaphore (conc; 0 is
// unlimited), FIFO, and is sent when it gets one, so its TTFT counts from then, as vLLM's does. A
// request longer than max_model_len fails at once (the API server's 400) and frees its slot.
// Offline runs use an engine without the API server's time.
func runBenchClient(srv *sim.Server, reqs []benchReq, warm *benchReq, ready bool, warmups, conc int, seed uint64, every vtime.Duration, slo *SLO, offline bool, progress func(int)) (*collector, error) {
	eng := srv.NewEngine(seed)
	if offline {
		eng = offlineEngine(srv, seed)
	}
	r := newRunnerOn(srv, eng, every, slo)
	e := r.eng
	c := r.col
	mml := srv.Deployment.Engine.MaxModelLen
	specOf := func(q *benchReq, tag int) sim.RequestSpec {
		return sim.RequestSpec{PromptTokens: q.InputTokens, MaxTokens: q.OutputTokens, PromptID: q.PromptID,
			PrefixID: q.PrefixID, PrefixTokens: q.PrefixTokens, Tag: tag}
	}
	limit := conc
	if limit == 0 {
		limit = int(^uint(0) >> 1)
	}
	if ready || warmups > 0 {
		if warm.InputTokens+warm.OutputTokens > mml {
			return nil, fmt.Errorf("vllm bench's ready check sends request 0 (%d prompt + %d output tokens), longer than max_model_len %d: the benchmark stops there",
				warm.InputTokens, warm.OutputTokens, mml)
		}
		left := 0
		e.Hooks.OnTokens = func(e *sim.Engine, rec *sim.Record, n int, fin bool) {
			if !fin {
				return
			}
			r.live--
			if left > 0 {
				left--
				r.submit(specOf(warm, -1), false)
			}
		}
		// The ready check runs alone; the warm-ups then share the semaphore.
		if ready {
			r.submit(specOf(warm, -1), false)
			if err := e.RunUntilIdle(); err != nil {
				return nil, err
			}
		}
		left = warmups
		for left > 0 && r.live < limit {
			left--
			r.submit(specOf(warm, -1), false)
		}
		if err := e.RunUntilIdle(); err != nil {
			return nil, err
		}
	}
	t0 := e.Now()
	if conc == 0 {
		c.watch = newBurstWatch(reqs, mml, srv.Deployment.Engine.MaxNumSeqs, t0)
	}
	avail := limit
	var queue []int
	next, done := 0, 0
	step := max(len(reqs)/100, 1)
	// pump sends queued requests while the semaphore has slots.
	pump := func() {
		for avail > 0 && len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			q := &reqs[i]
			c.submitted++
			if q.InputTokens+q.OutputTokens > mml {
				c.rejected++
				continue
			}
			avail--
			r.submit(specOf(q, i), true)
		}
	}
	var last vtime.Time
	e.Hooks.OnTokens = func(e *sim.Engine, rec *sim.Record, n int, fin bool) {
		if !fin {
			return
		}
		r.finished(rec, reqs[rec.Spec.Tag].counted)
		last = e.Now()
		done++
		if progress != nil && done%step == 0 {
			progress(done)
		}
		avail++
		pump()
	}
	if len(reqs) > 0 {
		var arrive func(*sim.Engine)
		arrive = func(e *sim.Engine) {
			for next < len(reqs) && t0.Add(vtime.Duration(reqs[next].At)) <= e.Now() {
				queue = append(queue, next)
				next++
			}
			pump()
			if next < len(reqs) {
				e.At(t0.Add(vtime.Duration(reqs[next].At)), arrive)
			}
		}
		e.At(t0.Add(vtime.Duration(reqs[0].At)), arrive)
	}
	if err := e.RunUntilIdle(); err != nil {
		return nil, err
	}
	if progress != nil {
		progress(len(reqs))
	}
	if c.completed > 0 {
		c.durationS = last.Sub(t0).Seconds()
	}
	r.finishStats()
	return c, nil
}

// benchKey fingerprints one replica's share of a vllm-bench or offline run: the semaphore, the
// ready check and warm-ups, and per request the send time, the lengths, the counted length and
// the prompt sharing (which earlier request of the share, if any, has the same prompt or prefix,
// and whether it is the warm-up prompt). Content ids only name prompts, so shares with equal keys
// run identically.
func benchKey(reqs []benchReq, warm *benchReq, ready bool, warmups, conc int) uint64 {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	flag := func(x bool) uint64 {
		if x {
			return 1
		}
		return 0
	}
	put(uint64(conc))
	put(uint64(warmups))
	put(flag(ready))
	put(uint64(len(reqs)))
	firstPrompt := map[uint64]int{}
	firstPrefix := map[uint64]int{}
	for i := range reqs {
		q := &reqs[i]
		put(uint64(q.At))
		put(uint64(q.InputTokens)<<32 | uint64(q.OutputTokens))
		put(uint64(q.PrefixTokens)<<32 | uint64(q.counted))
		if j, ok := firstPrompt[q.PromptID]; ok {
			put(uint64(j))
		} else {
			firstPrompt[q.PromptID] = i
			put(^uint64(0))
		}
		if q.PrefixID != 0 {
			if j, ok := firstPrefix[q.PrefixID]; ok {
				put(uint64(j))
			} else {
				firstPrefix[q.PrefixID] = i
				put(^uint64(1))
			}
		}
		put(flag(warm != nil && q.PromptID == warm.PromptID))
	}
	return h.Sum64()
}
