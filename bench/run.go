package bench

import (
	"fmt"
	"math"
	"sort"

	"servesim/matrix"
	"servesim/model"
	"servesim/sim"
	"servesim/vtime"
)

// CellTrace is what the simulation saw in one decode cell, beyond the matrix numbers.
type CellTrace struct {
	Key         matrix.Key
	Start       vtime.Time // streams launched
	WindowStart vtime.Time
	Ready       bool // the readiness gate passed (false: timed out)
	PeakRunning int
	Requests    int
	Preemptions int
}

// Result is a simulated matrix with its diagnostics.
type Result struct {
	Matrix *matrix.Matrix
	Traces []CellTrace
	Steps  int64
	Events int64
	SimEnd vtime.Time
}

// Options control one matrix run.
type Options struct {
	Seed uint64
	// Progress, if set, is called after each cell with (cells done, cells total, label).
	Progress func(done, total int, label string)
}

// promptID gives each context its own prompt content (identical within the context's cells).
func promptID(ctxIndex int) uint64 { return 0x1000 + uint64(ctxIndex) }

const warmupPromptID = 0xfeed

// RunMatrix runs the whole protocol against one simulated server, in the benchmark's order:
// warm-up; for each context a cold scout prefill, then the decode cells by concurrency; then the
// prefill-only rows. The server (and its prefix cache) persists across cells, as it does in the
// real run.
func RunMatrix(srv *sim.Server, proto *Protocol, opt Options) (*Result, error) {
	if err := proto.Validate(); err != nil {
		return nil, err
	}
	d := srv.Deployment
	mml := d.Engine.MaxModelLen
	kvTokens := srv.Layout.KVCacheSizeTokens
	m := &matrix.Matrix{Info: matrix.Info{
		Model: d.Model.Name, GPU: d.Hardware.GPU.Name, GPUCount: d.Hardware.Count,
		Engine: d.Engine.Name, EngineVersion: d.Engine.Version, Quantization: d.Engine.Quantization,
		BenchTool: proto.Name, DurationS: proto.DurationS, MaxOutput: proto.MaxOutput, KVCacheSizeTokens: kvTokens,
	}}
	res := &Result{Matrix: m}
	eng := srv.NewEngine(opt.Seed)
	r := &runner{eng: eng, proto: proto, srv: srv, res: res}

	type ctxPlan struct {
		label   string
		tokens  int
		prefill bool // prefill-only row
	}
	var plans []ctxPlan
	for _, c := range proto.Contexts {
		n, _ := matrix.ParseContext(c)
		if t, ok := proto.Fit(n, mml, proto.MaxOutput); ok {
			plans = append(plans, ctxPlan{label: matrix.Label(t), tokens: t})
		}
	}
	for _, c := range proto.PrefillOnly {
		n, _ := matrix.ParseContext(c)
		if t, ok := proto.Fit(n, mml, 1); ok {
			plans = append(plans, ctxPlan{label: c, tokens: t, prefill: true})
		}
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("no protocol context fits max_model_len %d with %d output tokens", mml, proto.MaxOutput)
	}
	total := 0
	for _, p := range plans {
		total++
		if !p.prefill {
			total += len(proto.Concurrency)
		}
	}
	done := 0
	progress := func(label string) {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total, label)
		}
	}

	// Hidden warm-up: one request at the largest decode context, distinct prefix, then cancelled.
	if proto.WarmupS > 0 {
		largest := 0
		for _, p := range plans {
			if !p.prefill && p.tokens > largest {
				largest = p.tokens
			}
		}
		if largest > 0 {
			w := eng.Submit(sim.RequestSpec{PromptTokens: largest, MaxTokens: proto.MaxOutput, PromptID: warmupPromptID})
			if err := eng.RunUntil(eng.Now().Add(seconds(proto.WarmupS))); err != nil {
				return nil, err
			}
			eng.Cancel(w)
			if err := eng.RunUntilIdle(); err != nil {
				return nil, err
			}
		}
	}

	for i, p := range plans {
		pid := promptID(i)
		out := 1
		if !p.prefill {
			out = proto.MaxOutput
		}
		_ = out
		cell, err := r.scout(p.label, p.tokens, pid)
		if err != nil {
			return nil, err
		}
		m.Prefill = append(m.Prefill, cell)
		progress("prefill " + p.label)
		if p.prefill {
			continue
		}
		for _, c := range proto.Concurrency {
			cell := matrix.NewCell(matrix.Decode, p.label, p.tokens, c)
			if proto.OverCapacity(c, p.tokens, kvTokens) {
				cell.Status = matrix.OverCapacity
			} else {
				cell, err = r.decodeCell(p.label, p.tokens, c, pid)
				if err != nil {
					return nil, err
				}
			}
			m.Decode = append(m.Decode, cell)
			progress(fmt.Sprintf("decode %s x %d", p.label, c))
		}
	}
	res.Steps = eng.Steps
	res.Events = eng.Events()
	res.SimEnd = eng.Now()
	return res, nil
}

func seconds(s float64) vtime.Duration { return vtime.FromSeconds(s) }

type runner struct {
	eng   *sim.Engine
	proto *Protocol
	srv   *sim.Server
	res   *Result
}

// scout sends one cold request with max_tokens = 1 on an idle server: the prefill row.
func (r *runner) scout(label string, tokens int, pid uint64) (matrix.Cell, error) {
	e := r.eng
	rec := e.Submit(sim.RequestSpec{PromptTokens: tokens, MaxTokens: 1, PromptID: pid})
	if err := e.RunUntilIdle(); err != nil {
		return matrix.Cell{}, fmt.Errorf("prefill %s: %w", label, err)
	}
	c := matrix.NewCell(matrix.Prefill, label, tokens, 1)
	if rec.FirstToken < 0 {
		c.Status = matrix.Error
		return c, nil
	}
	ttft := rec.FirstToken.Sub(rec.Send)
	c.Status = matrix.Valid
	c.TTFTms = ttft.Milliseconds()
	c.TotalTokS = float64(tokens) / ttft.Seconds()
	c.Completed = 1
	return c, nil
}

// stream is one closed-loop client stream of a decode cell.
type stream struct {
	cur *sim.Record
}

// decodeCell runs C closed-loop streams with the identical prompt, waits for the readiness gate
// (or its timeout), measures a fixed window, then cancels everything.
func (r *runner) decodeCell(label string, tokens, c int, pid uint64) (matrix.Cell, error) {
	e := r.eng
	p := r.proto
	cell := matrix.NewCell(matrix.Decode, label, tokens, c)
	spec := sim.RequestSpec{PromptTokens: tokens, MaxTokens: p.MaxOutput, PromptID: pid}
	streams := make([]stream, c)
	var all []*sim.Record
	windowStart, windowEnd := vtime.Never, vtime.Never
	var winTokens, completed int
	active := true
	e.Hooks.OnTokens = func(e *sim.Engine, rec *sim.Record, n int, done bool) {
		now := e.Now()
		if now >= windowStart && now < windowEnd {
			winTokens += n
			if done {
				completed++
			}
		}
		if done && active {
			i := rec.Spec.Tag
			streams[i].cur = e.Submit(rec.Spec)
			all = append(all, streams[i].cur)
		}
	}
	defer func() { e.Hooks.OnTokens = nil }()

	start := e.Now()
	for i := range streams {
		s := spec
		s.Tag = i
		streams[i].cur = e.Submit(s)
		all = append(all, streams[i].cur)
	}
	sched := e.Scheduler()
	peak := 0
	ready := func() bool {
		if sched.NumWaiting() > 0 || sched.NumRunning() < c {
			return false
		}
		for i := range streams {
			if streams[i].cur.FirstToken < 0 {
				return false
			}
		}
		return true
	}
	// Readiness gate, polled.
	poll := seconds(p.PollS)
	timeout := start.Add(seconds(r.srv.Params[model.PReadyTimeoutS]))
	if c <= r.srv.Deployment.Engine.MaxNumSeqs {
		// The gate can pass: the benchmark waits for it as long as it takes.
		timeout = vtime.Never
	}
	var stableSince vtime.Time = -1
	isReady := false
	t := start
	for {
		t = t.Add(poll)
		if t > timeout {
			t = timeout
		}
		if err := e.RunUntil(t); err != nil {
			return cell, fmt.Errorf("decode %s x %d: %w", label, c, err)
		}
		peak = max(peak, sched.NumRunning())
		if ready() {
			if stableSince < 0 {
				stableSince = t
			}
			if t.Sub(stableSince) >= seconds(p.StableS) {
				isReady = true
				break
			}
		} else {
			stableSince = -1
		}
		if t >= timeout {
			break
		}
		if t.Sub(start) > seconds(3600*24) {
			return cell, fmt.Errorf("decode %s x %d: streams never became ready in a simulated day", label, c)
		}
	}
	windowStart = e.Now()
	windowEnd = windowStart.Add(seconds(p.DurationS))
	runStart := e.RunningIntegral()
	// Run the window, tracking the peak of running requests at each poll.
	for t := windowStart; t < windowEnd; {
		t = min(t.Add(poll), windowEnd)
		if err := e.RunUntil(t); err != nil {
			return cell, fmt.Errorf("decode %s x %d: %w", label, c, err)
		}
		peak = max(peak, sched.NumRunning())
	}
	runEnd := e.RunningIntegral()
	active = false
	for i := range streams {
		e.Cancel(streams[i].cur)
	}
	if err := e.RunUntilIdle(); err != nil {
		return cell, fmt.Errorf("decode %s x %d: %w", label, c, err)
	}

	dur := windowEnd.Sub(windowStart).Seconds()
	var ttfts, itls []float64
	preempt := 0
	for _, rec := range all {
		preempt += rec.Preemptions
		if rec.FirstToken >= 0 {
			ttfts = append(ttfts, rec.FirstToken.Sub(rec.Send).Seconds()*1e3)
		}
		if rec.Tokens >= 2 {
			itls = append(itls, rec.LastToken.Sub(rec.FirstToken).Seconds()*1e3/float64(rec.Tokens-1))
		}
	}
	cell.Status = matrix.Valid
	if peak < c {
		cell.Status = matrix.RequestsQueued
	}
	cell.TotalTokS = float64(winTokens) / dur
	cell.OutputTokens = winTokens
	cell.Completed = completed
	cell.MeasuredS = dur
	cell.AvgActive = (runEnd - runStart) / dur
	if len(ttfts) > 0 {
		cell.TTFTms = median(ttfts)
	}
	if len(itls) > 0 {
		cell.TBTms = median(itls)
		cell.PerRequestTokS = 1e3 / cell.TBTms
	}
	r.res.Traces = append(r.res.Traces, CellTrace{Key: cell.Key(), Start: start, WindowStart: windowStart, Ready: isReady,
		PeakRunning: peak, Requests: len(all), Preemptions: preempt})
	return cell, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
