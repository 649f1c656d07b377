package llmbench

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
	CellStart   vtime.Time // the cell's clock started (before its scout)
	Start       vtime.Time // streams launched
	WindowStart vtime.Time // vtime.Never: the gate gave up, no window
	Ready       bool       // the readiness gate passed (false: timed out or gave up)
	PeakRunning int        // most requests running at any poll of the cell
	Requests    int
	Preemptions int
}

// Result is a simulated matrix with its diagnostics.
type Result struct {
	Matrix *matrix.Matrix
	Traces []CellTrace // decode cells that ran, in the order the tool ran them
	Steps  int64
	Events int64
	SimEnd vtime.Time
}

// Options control one matrix run.
type Options struct {
	Seed uint64
	// Progress, if set, is called after each stage with (stages done, stages total, label).
	Progress func(done, total int, label string)
}

// Plan lists the protocol's jobs for the server (its max_model_len and kv_cache_size_tokens), in
// matrix order, and the stages the tool runs them in (protocol.Protocol.Schedule).
func Plan(srv *sim.Server, proto *protocol.Protocol) ([]protocol.Job, []protocol.Stage, error) {
	return proto.Schedule(srv.Deployment.Engine.MaxModelLen, srv.Layout.KVCacheSizeTokens)
}

// JobSeed derives a job's random seed from the run's seed and the job: each stage reseeds the
// engine's acceptance draws with it, so a cell's draws do not depend on the cells before it.
func JobSeed(seed uint64, j *protocol.Job) uint64 {
	x := seed*0x9e3779b97f4a7c15 + uint64(j.Tokens)*0xbf58476d1ce4e5b9 + uint64(j.Concurrency)*0x94d049bb133111eb
	if j.Phase == matrix.Prefill {
		x ^= 0x5555
	}
	x ^= x >> 31
	return x
}

// stageSeed is the seed of a warm-up stage.
func stageSeed(seed uint64, st *protocol.Stage) uint64 {
	x := seed*0x9e3779b97f4a7c15 ^ st.PromptID*0xbf58476d1ce4e5b9
	x ^= x >> 29
	return x
}

// RunMatrix runs the protocol as the tool does (protocol.Protocol.Schedule): the hidden warm-ups,
// then every cell in the tool's order, all on one engine whose prefix cache is never reset, each
// cell starting on a drained server and followed by the pause. It is single-threaded and
// deterministic: the same server, protocol and seed give the same matrix.
//
// The tool sends one prompt to every stream of a cell, so the matrix runs with same_prompt 1.
func RunMatrix(srv *sim.Server, proto *protocol.Protocol, opt Options) (*Result, error) {
	if srv.Replicas > 1 {
		return nil, fmt.Errorf("data_parallel_size = %d of model %q runs %d independent engines behind one API server: the benchmark matrix runs on one engine; simulate a workload instead (servesim simulate --workload ..., which deals the requests over the replicas), or give data_parallel_size 1",
			srv.Replicas, srv.Deployment.Model.Name, srv.Replicas)
	}
	srv, err := WithSamePrompt(srv, 1)
	if err != nil {
		return nil, err
	}
	jobs, stages, err := Plan(srv, proto)
	if err != nil {
		return nil, err
	}
	cells := make([]matrix.Cell, len(jobs))
	for i, j := range jobs {
		cells[i] = matrix.NewCell(j.Phase, j.Label, j.Tokens, j.Concurrency)
		if j.Over {
			cells[i].Status = matrix.OverCapacity
		}
	}
	s := NewSession(srv.NewEngine(opt.Seed), srv, proto, opt.Seed)
	res := &Result{}
	for i := range stages {
		st := &stages[i]
		label := "warm-up"
		switch st.Kind {
		case protocol.StageWarmup, protocol.StageWarmupDecode:
			if err := s.Warmup(st); err != nil {
				return nil, err
			}
		case protocol.StagePrefill:
			j := &jobs[st.Job]
			label = j.Label
			if cells[st.Job], err = s.Prefill(j); err != nil {
				return nil, err
			}
		case protocol.StageCell:
			j := &jobs[st.Job]
			label = j.Label
			run, err := s.Cell(j, CellOptions{})
			if err != nil {
				return nil, err
			}
			cells[st.Job] = run.Cell(j)
			if st.Scout >= 0 {
				p := &jobs[st.Scout]
				cells[st.Scout] = protocol.PrefillCell(p.Label, p.Tokens, request(run.Scout))
			}
			res.Traces = append(res.Traces, run.Trace(j))
		}
		if opt.Progress != nil {
			opt.Progress(i+1, len(stages), label)
		}
	}
	e := s.Engine()
	res.Steps, res.Events, res.SimEnd = e.Steps, e.Events(), e.Now()
	res.Matrix = assemble(srv, proto, jobs, cells)
	return res, nil
}

// assemble builds the matrix from the jobs' cells (matrix order).
func assemble(srv *sim.Server, proto *protocol.Protocol, jobs []protocol.Job, cells []matrix.Cell) *matrix.Matrix {
	d := srv.Deployment
	m := &matrix.Matrix{Info: matrix.Info{
		Model: d.Model.Name, GPU: d.Hardware.GPU.Name, GPUCount: d.Hardware.Count,
		Engine: d.Engine.Name, EngineVersion: d.Engine.Version, Quantization: d.Engine.Quantization,
		BenchTool: proto.Name, DurationS: proto.DurationS, MaxOutput: proto.MaxOutput, KVCacheSizeTokens: srv.Layout.KVCacheSizeTokens,
	}}
	for i, j := range jobs {
		if j.Phase == matrix.Prefill {
			m.Prefill = append(m.Prefill, cells[i])
		} else {
			m.Decode = append(m.Decode, cells[i])
		}
	}
	return m
}

// Session runs the tool's stages one after another on one engine.
type Session struct {
	eng   *sim.Engine
	srv   *sim.Server
	proto *protocol.Protocol
	seed  uint64
}

// NewSession runs stages of proto on e (an engine of srv); seed is the run's seed, from which
// every stage reseeds the engine (JobSeed).
func NewSession(e *sim.Engine, srv *sim.Server, proto *protocol.Protocol, seed uint64) *Session {
	return &Session{eng: e, srv: srv, proto: proto, seed: seed}
}

// Engine is the session's engine.
func (s *Session) Engine() *sim.Engine { return s.eng }

// request is what the benchmark's client saw of an engine request.
func request(rec *sim.Record) protocol.Request {
	return protocol.Request{Send: rec.Send, FirstToken: rec.FirstToken, LastToken: rec.LastToken, Tokens: rec.Tokens}
}

// one sends one request on the drained server and runs until it is done and the server is
// drained again.
func (s *Session) one(spec sim.RequestSpec) (*sim.Record, error) {
	rec := s.eng.Submit(spec)
	return rec, s.eng.RunUntilIdle()
}

// Warmup runs a warm-up stage; its results are discarded.
func (s *Session) Warmup(st *protocol.Stage) error {
	e := s.eng
	e.Reseed(stageSeed(s.seed, st))
	spec := sim.RequestSpec{PromptTokens: st.PromptTokens, MaxTokens: st.MaxTokens, PromptID: st.PromptID}
	if st.Kind == protocol.StageWarmup {
		_, err := s.one(spec)
		return wrap(err, "warm-up (%d-token prompt)", st.PromptTokens)
	}
	// The decode warm-up: the prompt is prefilled first, then one stream decodes for a while.
	scout := spec
	scout.MaxTokens = protocol.PrefillOnlyOutput
	if _, err := s.one(scout); err != nil {
		return wrap(err, "decode warm-up prefill (%d tokens)", st.PromptTokens)
	}
	rec := e.Submit(spec)
	if err := e.RunUntil(e.Now().Add(vtime.FromSeconds(s.proto.WarmupDecodeS))); err != nil {
		return wrap(err, "decode warm-up (%d tokens)", st.PromptTokens)
	}
	e.Cancel(rec)
	return wrap(e.RunUntilIdle(), "decode warm-up (%d tokens)", st.PromptTokens)
}

func wrap(err error, format string, a ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(a, err)...)
}

// Prefill measures a prefill row with a scout alone: one request with a one-token output.
func (s *Session) Prefill(j *protocol.Job) (matrix.Cell, error) {
	s.eng.Reseed(JobSeed(s.seed, j))
	rec, err := s.one(sim.RequestSpec{PromptTokens: j.Tokens, MaxTokens: protocol.PrefillOnlyOutput, PromptID: j.PromptID})
	if err != nil {
		return matrix.Cell{}, fmt.Errorf("prefill %s: %w", j.Label, err)
	}
	return protocol.PrefillCell(j.Label, j.Tokens, request(rec)), nil
}

// CellOptions adapt a decode cell to a caller that keeps its own per-request statistics.
type CellOptions struct {
	// ReadyLimit, when positive, bounds the simulated wait for readiness: a gate with no verdict
	// that long after the cell's start gives up, and the cell fails. The tool has no such limit
	// (its timeout ends every wait); a planner uses it to abandon thrashing configurations early.
	ReadyLimit vtime.Duration
	// OnSubmit is called for every stream request sent (not the scout).
	OnSubmit func(rec *sim.Record)
	// OnTokens is called for every delivery to a stream request.
	OnTokens func(rec *sim.Record, n int, done bool, now vtime.Time)
	// OnCancel is called for every stream request cancelled at the end (still live).
	OnCancel func(rec *sim.Record)
}

// CellRun is the raw outcome of one decode cell: what the benchmark observed, its scout, and
// every stream request.
type CellRun struct {
	protocol.Observation
	Scout *sim.Record
	// WaitPolls are the polls of the readiness wait; the last one ended it (Gate).
	WaitPolls []protocol.Poll
	Records   []*sim.Record // every stream request, in submission order
	Cancelled int           // requests still live at the window's end
	// WindowSteps counts the verifier steps inside the window, summed over requests (as
	// WindowTokens counts tokens): WindowTokens / WindowSteps is the mean acceptance length.
	WindowSteps int
	Peak        int // most requests running at any poll (readiness wait and window)
}

// Cell is the cell's numbers by the tool's rules (protocol.DecodeCell).
func (r *CellRun) Cell(j *protocol.Job) matrix.Cell {
	reqs := make([]protocol.Request, len(r.Records))
	for i, rec := range r.Records {
		reqs[i] = request(rec)
	}
	return protocol.DecodeCell(j.Label, j.Tokens, &r.Observation, reqs)
}

// Trace is the cell's diagnostics.
func (r *CellRun) Trace(j *protocol.Job) CellTrace {
	tr := CellTrace{Key: j.Key(), CellStart: r.CellStart, Start: r.Streams, WindowStart: r.Window.Start,
		Ready: r.Gate == protocol.GateReady, PeakRunning: r.Peak, Requests: len(r.Records)}
	if r.Gate != protocol.GateGaveUp {
		for _, rec := range r.Records {
			tr.Preemptions += rec.Preemptions
		}
	}
	return tr
}

// Cell runs one decode cell of job j on the drained server as llm_decode_bench.py's run_one_cell
// does: the cell's clock starts; the scout (the cell's prompt, max_tokens 1) runs alone; then C
// closed-loop streams of the identical prompt start; the server is polled every PollS until the
// readiness condition holds (protocol.Gate) or the readiness timeout for the context passes; the
// window runs DurationS from that poll, polled likewise; then every stream is cancelled, the
// server drained, and PauseS of idle time pass before the next stage. It is the one
// implementation of the tool's decode cell on the engine; RunMatrix and workload both use it.
func (s *Session) Cell(j *protocol.Job, o CellOptions) (*CellRun, error) {
	e, p, c := s.eng, s.proto, j.Concurrency
	e.Reseed(JobSeed(s.seed, j))
	run := &CellRun{Observation: protocol.Observation{Concurrency: c, Window: protocol.NoWindow(), LastToken: -1}}
	fail := func(err error) (*CellRun, error) { return nil, fmt.Errorf("decode %s x %d: %w", j.Label, c, err) }
	run.CellStart = e.Now()
	spec := sim.RequestSpec{PromptTokens: j.Tokens, MaxTokens: p.MaxOutput, PromptID: j.PromptID}
	scout := spec
	scout.MaxTokens = protocol.PrefillOnlyOutput
	rec, err := s.one(scout)
	if err != nil {
		return fail(err)
	}
	run.Scout = rec

	streams := make([]*sim.Record, c)
	gotToken := make([]bool, c) // the stream has received a token (any of its requests)
	active := true
	submit := func(sp sim.RequestSpec) *sim.Record {
		rec := e.Submit(sp)
		run.Records = append(run.Records, rec)
		if o.OnSubmit != nil {
			o.OnSubmit(rec)
		}
		return rec
	}
	e.Hooks.OnTokens = func(e *sim.Engine, rec *sim.Record, n int, done bool) {
		now := e.Now()
		if done {
			run.Completed++
		}
		gotToken[rec.Spec.Tag] = true
		if o.OnTokens != nil {
			o.OnTokens(rec, n, done, now)
		}
		if done && active {
			streams[rec.Spec.Tag] = submit(rec.Spec)
		}
	}
	defer func() { e.Hooks.OnTokens = nil }()

	run.Streams = e.Now()
	for i := range streams {
		sp := spec
		sp.Tag = i
		streams[i] = submit(sp)
	}
	sched := e.Scheduler()
	poll := func(at vtime.Time) protocol.Poll {
		s := protocol.Poll{At: at, Running: sched.NumRunning(), Waiting: sched.NumWaiting() + e.Pending(), Generated: e.Generated}
		for _, ok := range gotToken {
			if ok {
				s.Streaming++
			}
		}
		run.Peak = max(run.Peak, s.Running)
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
		if err := e.RunUntilIdle(); err != nil {
			return err
		}
		return e.RunUntil(e.Now().Add(vtime.FromSeconds(p.PauseS)))
	}
	gate := p.NewGate(run.CellStart, run.Streams, c, j.Tokens, o.ReadyLimit)
	for run.Gate == protocol.GateWaiting {
		t := gate.Next()
		if err := e.RunUntil(t); err != nil {
			return fail(err)
		}
		pl := poll(t)
		run.WaitPolls = append(run.WaitPolls, pl)
		run.Gate = gate.Observe(pl)
	}
	if run.Gate == protocol.GateGaveUp {
		if err := stop(); err != nil {
			return fail(err)
		}
		return run, nil
	}
	run.Window = p.Window(e.Now())
	// The window's tokens are those delivered after its start (the deliveries at the start were
	// processed before it began) and before its end: the engine's counter just after the start
	// and just before the end, and its last delivery then. (The engine delivers many tokens in one
	// event when it advances requests without visiting them, so they are not counted one by one.)
	startTokens, startSteps, closed := e.Generated, e.Verified, false
	closeWindow := func() error {
		if err := e.RunUntil(run.Window.End - 1); err != nil {
			return err
		}
		run.WindowTokens = int(e.Generated - startTokens)
		run.WindowSteps = int(e.Verified - startSteps)
		if at := e.LastDelivery(); at > run.Window.Start {
			run.LastToken = at
		}
		closed = true
		return nil
	}
	for _, t := range p.WindowPolls(run.Window) {
		if t >= run.Window.End && !closed {
			if err := closeWindow(); err != nil {
				return fail(err)
			}
		}
		if err := e.RunUntil(t); err != nil {
			return fail(err)
		}
		run.Polls = append(run.Polls, poll(t))
	}
	if !closed {
		if err := closeWindow(); err != nil {
			return fail(err)
		}
	}
	if err := e.RunUntil(run.Window.End); err != nil {
		return fail(err)
	}
	if err := stop(); err != nil {
		return fail(err)
	}
	return run, nil
}

// WithSamePrompt returns srv with the workload-level parameter same_prompt set to share (the
// fraction of a batch's requests that carry one prompt, which concentrates MoE routing; see
// param.Values.RoutingConcentration): srv itself when it already has it, else a server rebuilt
// with it. The rebuilt server keeps srv's replicas (srv.Deployment is then one replica's) and its
// step-by-step mode.
func WithSamePrompt(srv *sim.Server, share float64) (*sim.Server, error) {
	if srv.Params[param.SamePrompt] == share {
		return srv, nil
	}
	p := srv.Params
	p[param.SamePrompt] = share
	out, err := sim.NewServer(srv.Deployment, p)
	if err != nil {
		return nil, err
	}
	out.Replicas, out.StepByStep = srv.Replicas, srv.StepByStep
	return out, nil
}
