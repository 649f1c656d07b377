package bench

import (
	"fmt"
	"math"
	"sort"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
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

// Job is one independently simulated unit of the protocol: a prefill row (a cold scout on an idle
// server) or a decode cell (the scout that caches the prompt, then the cell's streams). Each job
// starts from a fresh server, so jobs can run in any order, or in parallel outside the core, and
// give the same cells. What a real run carries from cell to cell is the prefix cache of the
// context's prompt, which the job's own scout recreates; the benchmark's hidden warm-up uses a
// distinct prefix and so changes nothing measured.
type Job struct {
	Index       int // position in the matrix: prefill rows first, then decode cells
	Phase       matrix.Phase
	Label       string
	Tokens      int
	Concurrency int
	PromptID    uint64
	// Over marks a decode cell the benchmark's rule refuses to run.
	Over bool
}

// Plan lists the protocol's jobs in matrix order.
func Plan(srv *sim.Server, proto *Protocol) ([]Job, error) {
	if err := proto.Validate(); err != nil {
		return nil, err
	}
	mml := srv.Deployment.Engine.MaxModelLen
	kvTokens := srv.Layout.KVCacheSizeTokens
	var prefill, decode []Job
	for i, c := range proto.Contexts {
		n, _ := matrix.ParseContext(c)
		t, ok := proto.Fit(n, mml, proto.MaxOutput)
		if !ok {
			return nil, fmt.Errorf("protocol.contexts[%d] = %s: %d tokens do not fit max_model_len %d with %d output tokens and a %d-token margin (room %d; only contexts up to %.0f%% above the room are trimmed)",
				i, c, n, mml, proto.MaxOutput, proto.MarginTokens, mml-proto.MaxOutput-proto.MarginTokens, 100*proto.TrimSlack)
		}
		label := matrix.Label(t)
		pid := promptID(i)
		prefill = append(prefill, Job{Phase: matrix.Prefill, Label: label, Tokens: t, Concurrency: 1, PromptID: pid})
		for _, conc := range proto.Concurrency {
			decode = append(decode, Job{Phase: matrix.Decode, Label: label, Tokens: t, Concurrency: conc, PromptID: pid,
				Over: proto.OverCapacity(conc, t, kvTokens)})
		}
	}
	for i, c := range proto.PrefillOnly {
		n, _ := matrix.ParseContext(c)
		t, ok := proto.Fit(n, mml, 1)
		if !ok {
			return nil, fmt.Errorf("protocol.prefill_only[%d] = %s: %d tokens do not fit max_model_len %d", i, c, n, mml)
		}
		prefill = append(prefill, Job{Phase: matrix.Prefill, Label: c, Tokens: t, Concurrency: 1, PromptID: promptID(len(proto.Contexts) + i)})
	}
	if len(prefill) == 0 {
		return nil, fmt.Errorf("no protocol context fits max_model_len %d with %d output tokens", mml, proto.MaxOutput)
	}
	jobs := append(prefill, decode...)
	for i := range jobs {
		jobs[i].Index = i
	}
	return jobs, nil
}

// JobResult is what one job produced.
type JobResult struct {
	Cell   matrix.Cell
	Trace  *CellTrace // decode cells that ran
	Steps  int64
	Events int64
	SimEnd vtime.Time
}

// JobSeed derives a job's random seed from the run's seed and the job, so results do not depend on
// the order jobs run in.
func JobSeed(seed uint64, j *Job) uint64 {
	x := seed*0x9e3779b97f4a7c15 + uint64(j.Tokens)*0xbf58476d1ce4e5b9 + uint64(j.Concurrency)*0x94d049bb133111eb
	if j.Phase == matrix.Prefill {
		x ^= 0x5555
	}
	x ^= x >> 31
	return x
}

// RunJob simulates one job on a fresh engine. It is single-threaded and deterministic.
func RunJob(srv *sim.Server, proto *Protocol, j Job, seed uint64) (JobResult, error) {
	if j.Over {
		c := matrix.NewCell(matrix.Decode, j.Label, j.Tokens, j.Concurrency)
		c.Status = matrix.OverCapacity
		return JobResult{Cell: c}, nil
	}
	eng := srv.NewEngine(JobSeed(seed, &j))
	r := &runner{eng: eng, proto: proto, srv: srv}
	var res JobResult
	var err error
	if j.Phase == matrix.Prefill {
		res.Cell, err = r.scout(j.Label, j.Tokens, j.PromptID)
	} else {
		if _, err = r.scout(j.Label, j.Tokens, j.PromptID); err == nil {
			res.Cell, res.Trace, err = r.decodeCell(j.Label, j.Tokens, j.Concurrency, j.PromptID)
		}
	}
	res.Steps, res.Events, res.SimEnd = eng.Steps, eng.Events(), eng.Now()
	return res, err
}

// Assemble builds the matrix from job results given in job order.
func Assemble(srv *sim.Server, proto *Protocol, jobs []Job, results []JobResult) *Result {
	d := srv.Deployment
	m := &matrix.Matrix{Info: matrix.Info{
		Model: d.Model.Name, GPU: d.Hardware.GPU.Name, GPUCount: d.Hardware.Count,
		Engine: d.Engine.Name, EngineVersion: d.Engine.Version, Quantization: d.Engine.Quantization,
		BenchTool: proto.Name, DurationS: proto.DurationS, MaxOutput: proto.MaxOutput, KVCacheSizeTokens: srv.Layout.KVCacheSizeTokens,
	}}
	res := &Result{Matrix: m}
	for i, j := range jobs {
		r := &results[i]
		if j.Phase == matrix.Prefill {
			m.Prefill = append(m.Prefill, r.Cell)
		} else {
			m.Decode = append(m.Decode, r.Cell)
		}
		if r.Trace != nil {
			res.Traces = append(res.Traces, *r.Trace)
		}
		res.Steps += r.Steps
		res.Events += r.Events
		res.SimEnd += r.SimEnd
	}
	return res
}

// RunMatrix runs every job of the protocol in order, on this goroutine.
func RunMatrix(srv *sim.Server, proto *Protocol, opt Options) (*Result, error) {
	jobs, err := Plan(srv, proto)
	if err != nil {
		return nil, err
	}
	results := make([]JobResult, len(jobs))
	for i, j := range jobs {
		if results[i], err = RunJob(srv, proto, j, opt.Seed); err != nil {
			return nil, err
		}
		if opt.Progress != nil {
			opt.Progress(i+1, len(jobs), j.Label)
		}
	}
	return Assemble(srv, proto, jobs, results), nil
}

func seconds(s float64) vtime.Duration { return vtime.FromSeconds(s) }

// maxReadyWaitS bounds the readiness wait of a cell whose streams never all run at once.
const maxReadyWaitS = 1800

type runner struct {
	eng   *sim.Engine
	proto *Protocol
	srv   *sim.Server
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

// CellOptions adapt RunDecodeCell to a caller that keeps its own per-request statistics.
type CellOptions struct {
	// ReadyLimit bounds the wait for a readiness gate that cannot time out (C <= max_num_seqs)
	// but never passes; 0 means 30 simulated minutes.
	ReadyLimit vtime.Duration
	// OnSubmit is called for every stream request sent.
	OnSubmit func(rec *sim.Record)
	// OnTokens is called for every delivery to a stream request.
	OnTokens func(rec *sim.Record, n int, done bool, now vtime.Time)
	// OnCancel is called for every stream request cancelled at the end (still live).
	OnCancel func(rec *sim.Record)
}

// CellRun is the raw outcome of one decode cell: every stream request and what the window saw.
type CellRun struct {
	Records                []*sim.Record // every stream request, in submission order
	Start                  vtime.Time    // streams launched
	WindowStart, WindowEnd vtime.Time
	WindowTokens           int // tokens delivered inside the window
	Completed              int // requests finished inside the window
	Cancelled              int // requests still live at the window's end
	Peak                   int // most requests running at once
	Ready                  bool
	RunningSeconds         float64 // integral of num_requests_running over the window
	TimedOut               bool    // the streams never all ran within the ready limit
}

// RunDecodeCell runs one llm-inference-bench decode cell on e, whose prefix cache the caller has
// prepared (the scout): C closed-loop streams with the identical prompt, the readiness gate polled
// every PollS (C running, none waiting, every stream has a token, stable for StableS; with
// C > max_num_seqs it times out after ready_timeout_s), the fixed window, then cancellation of
// every stream and a drain. It is the one implementation of the protocol's decode cell; bench and
// workload both use it.
func RunDecodeCell(e *sim.Engine, srv *sim.Server, p *Protocol, tokens, c int, pid uint64, o CellOptions) (*CellRun, error) {
	run := &CellRun{}
	spec := sim.RequestSpec{PromptTokens: tokens, MaxTokens: p.MaxOutput, PromptID: pid}
	streams := make([]*sim.Record, c)
	windowStart, windowEnd := vtime.Never, vtime.Never
	active := true
	submit := func(s sim.RequestSpec) *sim.Record {
		rec := e.Submit(s)
		run.Records = append(run.Records, rec)
		if o.OnSubmit != nil {
			o.OnSubmit(rec)
		}
		return rec
	}
	e.Hooks.OnTokens = func(e *sim.Engine, rec *sim.Record, n int, done bool) {
		now := e.Now()
		if now >= windowStart && now < windowEnd {
			run.WindowTokens += n
			if done {
				run.Completed++
			}
		}
		if o.OnTokens != nil {
			o.OnTokens(rec, n, done, now)
		}
		if done && active {
			streams[rec.Spec.Tag] = submit(rec.Spec)
		}
	}
	defer func() { e.Hooks.OnTokens = nil }()

	run.Start = e.Now()
	for i := range streams {
		s := spec
		s.Tag = i
		streams[i] = submit(s)
	}
	sched := e.Scheduler()
	ready := func() bool {
		if sched.NumWaiting() > 0 || sched.NumRunning() < c {
			return false
		}
		for _, st := range streams {
			if st.FirstToken < 0 {
				return false
			}
		}
		return true
	}
	poll := seconds(p.PollS)
	timeout := run.Start.Add(seconds(srv.Params[param.ReadyTimeoutS]))
	if c <= srv.Deployment.Engine.MaxNumSeqs {
		// The gate can pass: the benchmark waits for it as long as it takes.
		timeout = vtime.Never
	}
	limit := o.ReadyLimit
	if limit <= 0 {
		limit = seconds(maxReadyWaitS)
	}
	stop := func() error {
		active = false
		for _, st := range streams {
			if st.Live() {
				run.Cancelled++
				if o.OnCancel != nil {
					o.OnCancel(st)
				}
			}
			e.Cancel(st)
		}
		return e.RunUntilIdle()
	}
	var stableSince vtime.Time = -1
	for t := run.Start; ; {
		t = min(t.Add(poll), timeout)
		if err := e.RunUntil(t); err != nil {
			return nil, err
		}
		run.Peak = max(run.Peak, sched.NumRunning())
		if ready() {
			if stableSince < 0 {
				stableSince = t
			}
			if t.Sub(stableSince) >= seconds(p.StableS) {
				run.Ready = true
				break
			}
		} else {
			stableSince = -1
		}
		if t >= timeout {
			break
		}
		if t.Sub(run.Start) > limit {
			// The streams never all run (e.g. prefill chunks that cannot fit beside the decodes).
			run.TimedOut = true
			return run, stop()
		}
	}
	windowStart = e.Now()
	windowEnd = windowStart.Add(seconds(p.DurationS))
	run.WindowStart, run.WindowEnd = windowStart, windowEnd
	runStart := e.RunningIntegral()
	for t := windowStart; t < windowEnd; {
		t = min(t.Add(poll), windowEnd)
		if err := e.RunUntil(t); err != nil {
			return nil, err
		}
		run.Peak = max(run.Peak, sched.NumRunning())
	}
	run.RunningSeconds = e.RunningIntegral() - runStart
	return run, stop()
}

// decodeCell runs one decode cell and reduces it to the benchmark's numbers: medians over every
// stream request of TTFT and time between tokens, window throughput, status.
func (r *runner) decodeCell(label string, tokens, c int, pid uint64) (matrix.Cell, *CellTrace, error) {
	cell := matrix.NewCell(matrix.Decode, label, tokens, c)
	run, err := RunDecodeCell(r.eng, r.srv, r.proto, tokens, c, pid, CellOptions{})
	if err != nil {
		return cell, nil, fmt.Errorf("decode %s x %d: %w", label, c, err)
	}
	tr := &CellTrace{Key: cell.Key(), Start: run.Start, WindowStart: run.WindowStart, Ready: run.Ready,
		PeakRunning: run.Peak, Requests: len(run.Records)}
	if run.TimedOut {
		// The benchmark would report the cell invalid rather than wait forever.
		cell.Status = matrix.Error
		return cell, tr, nil
	}
	var ttfts, itls []float64
	for _, rec := range run.Records {
		tr.Preemptions += rec.Preemptions
		if rec.FirstToken >= 0 {
			ttfts = append(ttfts, rec.FirstToken.Sub(rec.Send).Seconds()*1e3)
		}
		if rec.Tokens >= 2 {
			itls = append(itls, rec.LastToken.Sub(rec.FirstToken).Seconds()*1e3/float64(rec.Tokens-1))
		}
	}
	dur := run.WindowEnd.Sub(run.WindowStart).Seconds()
	cell.Status = matrix.Valid
	if run.Peak < c {
		cell.Status = matrix.RequestsQueued
	}
	cell.TotalTokS = float64(run.WindowTokens) / dur
	cell.OutputTokens = run.WindowTokens
	cell.Completed = run.Completed
	cell.MeasuredS = dur
	cell.AvgActive = run.RunningSeconds / dur
	if len(ttfts) > 0 {
		cell.TTFTms = median(ttfts)
	}
	if len(itls) > 0 {
		cell.TBTms = median(itls)
		cell.PerRequestTokS = 1e3 / cell.TBTms
	}
	return cell, tr, nil
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

// Keys lists the cells the protocol produces for a max_model_len, in matrix order (prefill rows
// then decode cells), whatever the KV capacity.
func (p *Protocol) Keys(maxModelLen int) []matrix.Key {
	var pre, dec []matrix.Key
	for _, c := range p.Contexts {
		n, err := matrix.ParseContext(c)
		if err != nil {
			continue
		}
		t, ok := p.Fit(n, maxModelLen, p.MaxOutput)
		if !ok {
			continue
		}
		label := matrix.Label(t)
		pre = append(pre, matrix.Key{Phase: matrix.Prefill, Context: label, Concurrency: 1})
		for _, conc := range p.Concurrency {
			dec = append(dec, matrix.Key{Phase: matrix.Decode, Context: label, Concurrency: conc})
		}
	}
	for _, c := range p.PrefillOnly {
		n, err := matrix.ParseContext(c)
		if err != nil {
			continue
		}
		if _, ok := p.Fit(n, maxModelLen, 1); ok {
			pre = append(pre, matrix.Key{Phase: matrix.Prefill, Context: c, Concurrency: 1})
		}
	}
	return append(pre, dec...)
}

// CheckMeasured reports an error naming the first measured cell the protocol does not produce, and
// how many of the protocol's cells the measurement lacks.
func (p *Protocol) CheckMeasured(m *matrix.Matrix, maxModelLen int) error {
	keys := p.Keys(maxModelLen)
	known := make(map[matrix.Key]bool, len(keys))
	for _, k := range keys {
		known[k] = true
	}
	found := 0
	for _, c := range m.Cells() {
		k := c.Key()
		if k.Phase == matrix.Prefill {
			k.Concurrency = 1
		}
		if !known[k] {
			return fmt.Errorf("measured cell %s is not one the scenario's protocol runs (contexts %v fitted to max_model_len %d, concurrency %v): the measurement and the scenario disagree",
				k, p.Contexts, maxModelLen, p.Concurrency)
		}
		found++
	}
	if found == 0 {
		return fmt.Errorf("the measured matrix has no cells")
	}
	return nil
}
