package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"

	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// WorkloadResult is what a client measured of a workload sent over HTTP, in the server's
// simulated time (the client's clock times its speed), summarised as 'servesim simulate'
// summarises a simulated run (workload.Metrics).
type WorkloadResult struct {
	Requests  int // sent
	Completed int // finished with a finish reason
	Rejected  int // refused with a 400 (a prompt and output longer than max_model_len)
	// DurationS is from the start to the last completion.
	DurationS                 float64
	InputTokens, OutputTokens int64 // of completed requests
	OutputTokS, RequestsPerS  float64
	TTFT, TPOT, E2E           workload.Dist // milliseconds, as workload.Metrics
}

// RunWorkload sends reqs as streamed completions, as servesim's workloads run on the engine: with
// concurrency 0 an open loop (request i sent at its arrival time At after the start), else a
// closed loop of that many clients, each sending the next request of the list when its previous
// one ends. Every request runs to its OutputTokens (ignore_eos); its prompt is sent as token ids
// named by its PromptID and PrefixID (Prompt), so the server's prefix cache sees the sharing the
// simulation sees. progress, if set, is called as requests end.
func (c *Client) RunWorkload(ctx context.Context, reqs []workload.Request, concurrency int, progress func(done, total int)) (*WorkloadResult, error) {
	if len(reqs) == 0 {
		return nil, errors.New("no request to send")
	}
	if concurrency < 0 {
		return nil, fmt.Errorf("concurrency %d: want 0 (an open loop) or more", concurrency)
	}
	for i := range reqs {
		if len(reqs[i].Blocks) > 0 {
			return nil, fmt.Errorf("request %d names its prompt by prefix blocks (a trace): not sent over HTTP", i)
		}
	}
	if _, err := c.Info(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		r   Result
		err error
	}
	outs := make([]outcome, len(reqs))
	var mu sync.Mutex
	done := 0
	var firstErr error
	start := c.Now()
	send := func(i int) {
		q := &reqs[i]
		body := c.CompletionBody(Prompt{Tokens: q.InputTokens, PromptID: q.PromptID, PrefixID: q.PrefixID, PrefixTokens: q.PrefixTokens}, q.OutputTokens)
		r, err := c.Stream(ctx, body, nil)
		mu.Lock()
		defer mu.Unlock()
		outs[i] = outcome{r, err}
		var se *StatusError
		if err != nil && !(errors.As(err, &se) && se.Code == http.StatusBadRequest) && firstErr == nil && ctx.Err() == nil {
			firstErr = fmt.Errorf("request %d: %w", i, err)
			cancel()
		}
		done++
		if progress != nil {
			progress(done, len(reqs))
		}
	}
	var wg sync.WaitGroup
	if concurrency > 0 {
		next := 0
		for k := 0; k < min(concurrency, len(reqs)); k++ {
			wg.Go(func() {
				for {
					mu.Lock()
					i := next
					next++
					mu.Unlock()
					if i >= len(reqs) || ctx.Err() != nil {
						return
					}
					send(i)
				}
			})
		}
	} else {
		for i := range reqs {
			if err := c.sleepUntil(ctx, start.Add(vtime.Duration(reqs[i].At))); err != nil {
				break
			}
			wg.Go(func() { send(i) })
		}
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &WorkloadResult{}
	var ttft, tpot, e2e []float64
	last := start
	ms := func(a, b vtime.Time) float64 { return b.Sub(a).Seconds() * 1e3 }
	for i, o := range outs {
		res.Requests++
		if o.err != nil {
			res.Rejected++
			continue
		}
		r := o.r
		if !r.Finished || r.FirstToken < 0 {
			return nil, fmt.Errorf("request %d: the stream ended without a finish reason after %d tokens", i, r.Tokens)
		}
		res.Completed++
		res.InputTokens += int64(reqs[i].InputTokens)
		res.OutputTokens += int64(r.Tokens)
		ttft = append(ttft, ms(r.Send, r.FirstToken))
		e2e = append(e2e, ms(r.Send, r.LastToken))
		if r.Tokens > 1 {
			tpot = append(tpot, ms(r.FirstToken, r.LastToken)/float64(r.Tokens-1))
		}
		last = max(last, r.LastToken)
	}
	res.DurationS = last.Sub(start).Seconds()
	if res.DurationS > 0 {
		res.OutputTokS = float64(res.OutputTokens) / res.DurationS
		res.RequestsPerS = float64(res.Completed) / res.DurationS
	}
	res.TTFT, res.TPOT, res.E2E = workload.DistOf(ttft), workload.DistOf(tpot), workload.DistOf(e2e)
	return res, nil
}

// Agrees says whether a value measured over HTTP agrees with the simulated one: within tol of
// it, or within floor (the timing noise, in the same unit) when that is larger.
func Agrees(got, want, tol, floor float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) == math.IsNaN(want)
	}
	return math.Abs(got-want) <= max(tol*math.Abs(want), floor)
}
