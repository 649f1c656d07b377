package bench

import (
	"fmt"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
)

// CellTrace is what the simulation saw in one decode cell, beyond the matrix numbers.
type CellTrace struct {
	Key         matrix.Key
	Start       vtime.Time // streams launched
	WindowStart vtime.Time // vtime.Never: the gate gave up, no window
	Ready       bool       // the readiness gate passed (false: timed out or gave up)
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

// Plan lists the protocol's jobs for the server (its max_model_len and kv_cache_size_tokens), in
// matrix order (protocol.Protocol.Plan). Each job is simulated independently from a fresh server,
// so jobs can run in any order, or in parallel outside the core, and give the same cells. What a
// real run carries from cell to cell is the prefix cache of the context's prompt, which the job's
// own scout recreates; the benchmark's hidden warm-up uses a distinct prefix and so changes
// nothing measured.
func Plan(srv *sim.Server, proto *protocol.Protocol) ([]protocol.Job, error) {
	return proto.Plan(srv.Deployment.Engine.MaxModelLen, srv.Layout.KVCacheSizeTokens)
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
func JobSeed(seed uint64, j *protocol.Job) uint64 {
	x := seed*0x9e3779b97f4a7c15 + uint64(j.Tokens)*0xbf58476d1ce4e5b9 + uint64(j.Concurrency)*0x94d049bb133111eb
	if j.Phase == matrix.Prefill {
		x ^= 0x5555
	}
	x ^= x >> 31
	return x
}

// RunJob simulates one job on a fresh engine. It is single-threaded and deterministic.
func RunJob(srv *sim.Server, proto *protocol.Protocol, j protocol.Job, seed uint64) (JobResult, error) {
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
func Assemble(srv *sim.Server, proto *protocol.Protocol, jobs []protocol.Job, results []JobResult) *Result {
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
func RunMatrix(srv *sim.Server, proto *protocol.Protocol, opt Options) (*Result, error) {
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

type runner struct {
	eng   *sim.Engine
	proto *protocol.Protocol
	srv   *sim.Server
}

// request is what the benchmark's client saw of an engine request.
func request(rec *sim.Record) protocol.Request {
	return protocol.Request{Send: rec.Send, FirstToken: rec.FirstToken, LastToken: rec.LastToken, Tokens: rec.Tokens}
}

// scout sends one cold request with max_tokens = 1 on an idle server: the prefill row.
func (r *runner) scout(label string, tokens int, pid uint64) (matrix.Cell, error) {
	e := r.eng
	rec := e.Submit(sim.RequestSpec{PromptTokens: tokens, MaxTokens: 1, PromptID: pid})
	if err := e.RunUntilIdle(); err != nil {
		return matrix.Cell{}, fmt.Errorf("prefill %s: %w", label, err)
	}
	return protocol.PrefillCell(label, tokens, request(rec)), nil
}

// CellOptions adapt RunDecodeCell to a caller that keeps its own per-request statistics.
type CellOptions struct {
	// ReadyLimit bounds the wait for a readiness gate that cannot time out (C <= max_num_seqs)
	// but never passes; 0 means protocol.ReadyWaitLimit.
	ReadyLimit vtime.Duration
	// OnSubmit is called for every stream request sent.
	OnSubmit func(rec *sim.Record)
	// OnTokens is called for every delivery to a stream request.
	OnTokens func(rec *sim.Record, n int, done bool, now vtime.Time)
	// OnCancel is called for every stream request cancelled at the end (still live).
	OnCancel func(rec *sim.Record)
}

// CellRun is the raw outcome of one decode cell: what the benchmark observed, and every stream
// request.
type CellRun struct {
	protocol.Observation
	Records   []*sim.Record // every stream request, in submission order
	Cancelled int           // requests still live at the window's end
}

// RunDecodeCell runs one llm-inference-bench decode cell on e, whose prefix cache the caller has
// prepared (the scout): C closed-loop streams with the identical prompt, the readiness gate
// (protocol.Gate: polled every PollS, timed out by ready_timeout_s when C > max_num_seqs, given
// up past the wait limit), the fixed window, then cancellation of every stream and a drain. It is
// the one implementation of the protocol's decode cell on the engine; bench and workload both use
// it.
func RunDecodeCell(e *sim.Engine, srv *sim.Server, p *protocol.Protocol, tokens, c int, pid uint64, o CellOptions) (*CellRun, error) {
	run := &CellRun{Observation: protocol.Observation{Concurrency: c, Window: protocol.NoWindow()}}
	spec := sim.RequestSpec{PromptTokens: tokens, MaxTokens: p.MaxOutput, PromptID: pid}
	streams := make([]*sim.Record, c)
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
		if done && run.Window.Contains(now) {
			run.Completed++
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
	poll := func() protocol.Poll {
		s := protocol.Poll{Running: sched.NumRunning(), Waiting: sched.NumWaiting()}
		for _, st := range streams {
			if st.FirstToken >= 0 {
				s.Streaming++
			}
		}
		return s
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
	gate := p.NewGate(run.Start, c, srv.Deployment.Engine.MaxNumSeqs,
		vtime.FromSeconds(srv.Params[param.ReadyTimeoutS]), o.ReadyLimit)
	for run.Gate == protocol.GateWaiting {
		t := gate.Next()
		if err := e.RunUntil(t); err != nil {
			return nil, err
		}
		s := poll()
		run.Peak = max(run.Peak, s.Running)
		run.Gate = gate.Observe(t, s)
	}
	if run.Gate == protocol.GateGaveUp {
		return run, stop()
	}
	run.Window = p.Window(e.Now())
	runStart := e.RunningIntegral()
	// The window's tokens are those delivered after its start (the deliveries at the start were
	// processed before it began) and before its end.
	tokensAtStart := e.DeliveredTokens()
	for t := run.Window.Start; t < run.Window.End; {
		t = p.NextPoll(t, run.Window.End)
		if t == run.Window.End {
			if err := e.RunUntil(t - 1); err != nil {
				return nil, err
			}
			run.WindowTokens = int(e.DeliveredTokens() - tokensAtStart)
		}
		if err := e.RunUntil(t); err != nil {
			return nil, err
		}
		run.Peak = max(run.Peak, sched.NumRunning())
	}
	run.RunningSeconds = e.RunningIntegral() - runStart
	return run, stop()
}

// decodeCell runs one decode cell and reduces it to the benchmark's numbers (protocol.DecodeCell).
func (r *runner) decodeCell(label string, tokens, c int, pid uint64) (matrix.Cell, *CellTrace, error) {
	run, err := RunDecodeCell(r.eng, r.srv, r.proto, tokens, c, pid, CellOptions{})
	if err != nil {
		return matrix.NewCell(matrix.Decode, label, tokens, c), nil, fmt.Errorf("decode %s x %d: %w", label, c, err)
	}
	reqs := make([]protocol.Request, len(run.Records))
	tr := &CellTrace{Key: matrix.Key{Phase: matrix.Decode, Context: label, Concurrency: c}, Start: run.Start,
		WindowStart: run.Window.Start, Ready: run.Gate == protocol.GateReady, PeakRunning: run.Peak, Requests: len(run.Records)}
	for i, rec := range run.Records {
		reqs[i] = request(rec)
		if run.Gate != protocol.GateGaveUp {
			tr.Preemptions += rec.Preemptions
		}
	}
	return protocol.DecodeCell(label, tokens, &run.Observation, reqs), tr, nil
}
