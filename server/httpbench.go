package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/vtime"
)

// LLMBenchClient runs llm-inference-bench's protocol (package protocol's rules, the stages
// llmbench.Session runs on the engine) as a real HTTP client: every request is a streamed
// /v1/completions call, the server's state is read from its /metrics as the tool reads it
// (running, waiting, the generation-token counter, kv_cache_size_tokens), and every time is the
// client's.
type LLMBenchClient struct {
	C     *Client
	Proto *protocol.Protocol
	// Progress, if set, is called before each stage with a label.
	Progress func(label string)

	info ServerInfo
}

// CellRun is one decode cell as the client measured it.
type CellRun struct {
	Cell        matrix.Cell
	Scout       protocol.Request
	Gate        protocol.GateState
	Requests    int // stream requests sent
	PeakRunning int
}

// LLMBenchResult is a run of some of the protocol's cells.
type LLMBenchResult struct {
	// Cells are the cells asked for, in the order asked; an over-capacity cell is reported
	// without running, as the tool does.
	Cells []matrix.Cell
	// Runs are the decode cells that ran, by key.
	Runs              map[matrix.Key]*CellRun
	KVCacheSizeTokens int
	MaxModelLen       int
}

// Run runs the stages of the tool's schedule (protocol.Protocol.Schedule, for the server's
// max_model_len and kv_cache_size_tokens) that measure the cells of keys, in the tool's order,
// with the hidden warm-ups first when warmups is set. A prefill row whose first-column cell is
// not asked for is measured by a scout alone (as the tool does when that cell is over capacity).
func (b *LLMBenchClient) Run(ctx context.Context, keys []matrix.Key, warmups bool) (*LLMBenchResult, error) {
	info, err := b.C.Info(ctx)
	if err != nil {
		return nil, err
	}
	b.info = info
	m, err := b.C.Metrics(ctx)
	if err != nil {
		return nil, err
	}
	if m.KVCacheSizeTokens <= 0 {
		return nil, fmt.Errorf("%s/metrics: no vllm:cache_config_info with kv_cache_size_tokens (or num_gpu_blocks and block_size): the over-capacity rule needs it", b.C.base)
	}
	p := *b.Proto
	p.Warmup = warmups
	jobs, stages, err := p.Schedule(info.MaxModelLen, m.KVCacheSizeTokens)
	if err != nil {
		return nil, err
	}
	want := map[matrix.Key]bool{}
	for _, k := range keys {
		if k.Phase == matrix.Prefill {
			k.Concurrency = 1
		}
		want[k] = true
	}
	found := map[matrix.Key]int{}
	for i := range jobs {
		found[jobs[i].Key()] = i
	}
	for _, k := range keys {
		if k.Phase == matrix.Prefill {
			k.Concurrency = 1
		}
		if _, ok := found[k]; !ok {
			return nil, fmt.Errorf("cell %s: not one of the protocol's cells at max_model_len %d (contexts %v, concurrency %v)", k, info.MaxModelLen, p.Contexts, p.Concurrency)
		}
	}
	res := &LLMBenchResult{Runs: map[matrix.Key]*CellRun{}, KVCacheSizeTokens: m.KVCacheSizeTokens, MaxModelLen: info.MaxModelLen}
	cells := map[matrix.Key]matrix.Cell{}
	for i := range jobs {
		if j := &jobs[i]; j.Over && want[j.Key()] {
			c := matrix.NewCell(j.Phase, j.Label, j.Tokens, j.Concurrency)
			c.Status = matrix.OverCapacity
			cells[j.Key()] = c
		}
	}
	for i := range stages {
		st := stages[i]
		switch st.Kind {
		case protocol.StageWarmup, protocol.StageWarmupDecode:
			if !warmups {
				continue
			}
			b.progress(fmt.Sprintf("warm-up (%d-token prompt)", st.PromptTokens))
			if err := b.warmup(ctx, &st); err != nil {
				return nil, err
			}
		case protocol.StagePrefill:
			j := &jobs[st.Job]
			if !want[j.Key()] {
				continue
			}
			b.progress("prefill " + j.Label)
			c, err := b.prefill(ctx, j)
			if err != nil {
				return nil, err
			}
			cells[j.Key()] = c
		case protocol.StageCell:
			j := &jobs[st.Job]
			scoutWanted := st.Scout >= 0 && want[jobs[st.Scout].Key()]
			if !want[j.Key()] {
				if scoutWanted {
					s := &jobs[st.Scout]
					b.progress("prefill " + s.Label)
					c, err := b.prefill(ctx, s)
					if err != nil {
						return nil, err
					}
					cells[s.Key()] = c
				}
				continue
			}
			b.progress(fmt.Sprintf("decode %s x %d", j.Label, j.Concurrency))
			run, err := b.cell(ctx, j)
			if err != nil {
				return nil, fmt.Errorf("decode %s x %d: %w", j.Label, j.Concurrency, err)
			}
			cells[j.Key()] = run.Cell
			res.Runs[j.Key()] = run
			if scoutWanted {
				s := &jobs[st.Scout]
				cells[s.Key()] = protocol.PrefillCell(s.Label, s.Tokens, run.Scout)
			}
		}
	}
	for _, k := range keys {
		if k.Phase == matrix.Prefill {
			k.Concurrency = 1
		}
		res.Cells = append(res.Cells, cells[k])
	}
	return res, nil
}

func (b *LLMBenchClient) progress(label string) {
	if b.Progress != nil {
		b.Progress(label)
	}
}

// drain waits until the server has nothing running or waiting (the tool's drain barrier),
// polling every 20 ms of its clock (at least every 2 ms of wall time).
func (b *LLMBenchClient) drain(ctx context.Context) error {
	every := max(vtime.FromSeconds(0.02), vtime.Duration(float64(2*time.Millisecond)*b.C.clk.speed))
	for {
		m, err := b.C.Metrics(ctx)
		if err != nil {
			return err
		}
		if m.Running == 0 && m.Waiting == 0 {
			return nil
		}
		if err := b.C.sleepUntil(ctx, b.C.Now().Add(every)); err != nil {
			return err
		}
	}
}

// one sends one request on the drained server, waits for it, and drains again.
func (b *LLMBenchClient) one(ctx context.Context, p Prompt, maxTokens int) (protocol.Request, error) {
	if err := b.drain(ctx); err != nil {
		return protocol.Request{}, err
	}
	r, err := b.C.Stream(ctx, b.C.CompletionBody(p, maxTokens), nil)
	if err != nil {
		return protocol.Request{}, err
	}
	return r.Request(), b.drain(ctx)
}

// Request is the result as the protocol's statistics take it.
func (r Result) Request() protocol.Request {
	return protocol.Request{Send: r.Send, FirstToken: r.FirstToken, LastToken: r.LastToken, Tokens: r.Tokens}
}

func (b *LLMBenchClient) warmup(ctx context.Context, st *protocol.Stage) error {
	p := Prompt{Tokens: st.PromptTokens, PromptID: st.PromptID}
	if st.Kind == protocol.StageWarmup {
		_, err := b.one(ctx, p, st.MaxTokens)
		return err
	}
	if _, err := b.one(ctx, p, protocol.PrefillOnlyOutput); err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := b.C.Stream(sctx, b.C.CompletionBody(p, st.MaxTokens), nil)
		done <- err
	}()
	err := b.C.sleepUntil(ctx, b.C.Now().Add(vtime.FromSeconds(b.Proto.WarmupDecodeS)))
	cancel()
	if serr := <-done; serr != nil && !errors.Is(serr, context.Canceled) && err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	return b.drain(ctx)
}

func (b *LLMBenchClient) prefill(ctx context.Context, j *protocol.Job) (matrix.Cell, error) {
	r, err := b.one(ctx, Prompt{Tokens: j.Tokens, PromptID: j.PromptID}, protocol.PrefillOnlyOutput)
	if err != nil {
		return matrix.Cell{}, fmt.Errorf("prefill %s: %w", j.Label, err)
	}
	return protocol.PrefillCell(j.Label, j.Tokens, r), nil
}

// cell runs one decode cell as llmbench.Session.Cell does on the engine: on the drained server the
// cell's clock starts; the scout runs alone; C closed-loop streams of the identical prompt start,
// each restarted when its request finishes; the server is polled every PollS until the readiness
// gate passes or times out; the window runs DurationS from that poll, polled likewise; then the
// streams are cancelled, the server drained, and PauseS pass.
func (b *LLMBenchClient) cell(ctx context.Context, j *protocol.Job) (*CellRun, error) {
	p, c := b.Proto, j.Concurrency
	if err := b.drain(ctx); err != nil {
		return nil, err
	}
	obs := protocol.Observation{Concurrency: c, Window: protocol.NoWindow(), LastToken: -1}
	obs.CellStart = b.C.Now()
	prompt := Prompt{Tokens: j.Tokens, PromptID: j.PromptID}
	scout, err := b.one(ctx, prompt, protocol.PrefillOnlyOutput)
	if err != nil {
		return nil, fmt.Errorf("scout: %w", err)
	}
	run := &CellRun{Scout: scout}
	body := b.C.CompletionBody(prompt, p.MaxOutput)

	var mu sync.Mutex
	var reqs []*protocol.Request
	gotToken := make([]bool, c)
	window := protocol.NoWindow()
	var streamErr error
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	obs.Streams = b.C.Now()
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for sctx.Err() == nil {
				rq := &protocol.Request{FirstToken: -1, LastToken: -1}
				mu.Lock()
				reqs = append(reqs, rq)
				mu.Unlock()
				res, err := b.C.Stream(sctx, body, func(n int, at vtime.Time) {
					mu.Lock()
					gotToken[i] = true
					if rq.FirstToken < 0 {
						rq.FirstToken = at
					}
					rq.LastToken = at
					rq.Tokens += n
					if at > window.Start && at < window.End {
						obs.WindowTokens += n
						obs.LastToken = max(obs.LastToken, at)
					}
					mu.Unlock()
				})
				mu.Lock()
				rq.Send = res.Send
				if err == nil && res.Finished {
					obs.Completed++
				}
				if err != nil && sctx.Err() == nil && streamErr == nil {
					streamErr = fmt.Errorf("stream %d: %w", i, err)
					stop()
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}(i)
	}
	poll := func() (protocol.Poll, error) {
		at := b.C.Now()
		m, err := b.C.Metrics(ctx)
		if err != nil {
			return protocol.Poll{}, err
		}
		pl := protocol.Poll{At: at, Running: m.Running, Waiting: m.Waiting, Generated: m.Generated}
		mu.Lock()
		for _, ok := range gotToken {
			if ok {
				pl.Streaming++
			}
		}
		mu.Unlock()
		run.PeakRunning = max(run.PeakRunning, pl.Running)
		return pl, nil
	}
	fail := func(err error) (*CellRun, error) {
		stop()
		wg.Wait()
		return nil, err
	}
	gate := p.NewGate(obs.CellStart, obs.Streams, c, j.Tokens, 0)
	var last protocol.Poll
	for obs.Gate == protocol.GateWaiting {
		if err := b.C.sleepUntil(sctx, gate.Next()); err != nil {
			return fail(b.streamError(&mu, &streamErr, err))
		}
		if last, err = poll(); err != nil {
			return fail(err)
		}
		obs.Gate = gate.Observe(last)
	}
	mu.Lock()
	window = p.Window(last.At)
	obs.Window = window
	mu.Unlock()
	for _, t := range p.WindowPolls(window) {
		if err := b.C.sleepUntil(sctx, t); err != nil {
			return fail(b.streamError(&mu, &streamErr, err))
		}
		pl, err := poll()
		if err != nil {
			return fail(err)
		}
		obs.Polls = append(obs.Polls, pl)
	}
	stop()
	wg.Wait()
	if streamErr != nil {
		return nil, streamErr
	}
	if err := b.drain(ctx); err != nil {
		return nil, err
	}
	if err := b.C.sleepUntil(ctx, b.C.Now().Add(vtime.FromSeconds(p.PauseS))); err != nil {
		return nil, err
	}
	all := make([]protocol.Request, len(reqs))
	for i, r := range reqs {
		all[i] = *r
	}
	run.Requests = len(reqs)
	run.Gate = obs.Gate
	run.Cell = protocol.DecodeCell(j.Label, j.Tokens, &obs, all)
	return run, nil
}

// streamError is the error that stopped the cell: a stream's, else err.
func (b *LLMBenchClient) streamError(mu *sync.Mutex, streamErr *error, err error) error {
	mu.Lock()
	defer mu.Unlock()
	if *streamErr != nil {
		return *streamErr
	}
	return err
}
