package protocol

import (
	"github.com/servesim/servesim/internal/stats"
	"math"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/vtime"
)

// OverCapacity is the benchmark's rule: a cell is not run when C x (context + max_output) exceeds
// the server's reported kv_cache_size_tokens (C is the requested concurrency, not the number the
// engine runs at once).
func (p *Protocol) OverCapacity(c, contextTokens, kvCacheSizeTokens int) bool {
	return int64(c)*int64(contextTokens+p.MaxOutput) > int64(kvCacheSizeTokens)
}

// MaxConcurrencyFor is the largest C the rule admits at a context.
func (p *Protocol) MaxConcurrencyFor(contextTokens, kvCacheSizeTokens int) int {
	return kvCacheSizeTokens / (contextTokens + p.MaxOutput)
}

// QueuedAvgFraction: a cell whose average of running requests in the window is below this
// fraction of C is Requests queued (from C = 2, see DecodeStatus).
const QueuedAvgFraction = 0.95

// DecodeStatus is the status of a decode cell that ran, by the tool's rule: Requests queued when
// the readiness wait timed out, when no poll in the window saw C requests running, when a poll in
// the window saw a request waiting, or when the average of running requests in the window is
// below 0.95 C; else Valid.
//
// The running, waiting and average tests read the window's polls: over the whole cell, the ramp's
// waiting requests would mark every C = 32 cell of the seed Requests queued, and it shows them
// Valid. The average test applies from C = 2: the seed shows 1019K x 1 Valid with an average of
// 0.9 (the restarted request spends about 2.5 s in the API server's tokeniser, where it is neither
// running nor waiting), which the test as worded would call queued.
func DecodeStatus(o *Observation) matrix.Status {
	c := o.Concurrency
	if o.Gate == GateTimeout {
		return matrix.RequestsQueued
	}
	peak, waiting, sum := 0, false, 0
	for _, s := range o.Polls {
		peak = max(peak, s.Running)
		waiting = waiting || s.Waiting > 0
		sum += s.Running
	}
	if len(o.Polls) == 0 || peak < c || waiting {
		return matrix.RequestsQueued
	}
	if c >= 2 && float64(sum)/float64(len(o.Polls)) < QueuedAvgFraction*float64(c) {
		return matrix.RequestsQueued
	}
	return matrix.Valid
}

// AvgActive is the tool's average of active requests: the mean of the window's
// num_requests_running polls, rounded to 0.1 (NaN without polls).
func AvgActive(polls []Poll) float64 {
	if len(polls) == 0 {
		return math.NaN()
	}
	sum := 0
	for _, s := range polls {
		sum += s.Running
	}
	return math.Round(10*float64(sum)/float64(len(polls))) / 10
}

// Request is what the client saw of one streamed request.
type Request struct {
	Send       vtime.Time // the request was sent
	FirstToken vtime.Time // first content token received (< 0: none)
	LastToken  vtime.Time // last token received
	Tokens     int        // tokens received
}

// TTFTms is the time to first token in milliseconds, from the send; ok is false without a token.
func (r *Request) TTFTms() (ms float64, ok bool) {
	if r.FirstToken < 0 {
		return 0, false
	}
	return r.FirstToken.Sub(r.Send).Seconds() * 1e3, true
}

// TBTms is the request's time between tokens in milliseconds, (last - first) / (tokens - 1); ok
// is false with fewer than two tokens. A stream cut at the window's end counts up to its last
// token.
func (r *Request) TBTms() (ms float64, ok bool) {
	if r.Tokens < 2 {
		return 0, false
	}
	return r.LastToken.Sub(r.FirstToken).Seconds() * 1e3 / float64(r.Tokens-1), true
}

// PrefillCell is a prefill row from its scout request: TTFT, and prefill tok/s = prompt tokens /
// TTFT. A scout without a token is an Error.
func PrefillCell(label string, tokens int, scout Request) matrix.Cell {
	c := matrix.NewCell(matrix.Prefill, label, tokens, 1)
	if scout.FirstToken < 0 {
		c.Status = matrix.Error
		return c
	}
	ttft := scout.FirstToken.Sub(scout.Send)
	c.Status = matrix.Valid
	c.TTFTms = ttft.Milliseconds()
	c.TotalTokS = float64(tokens) / ttft.Seconds()
	c.Completed = 1
	return c
}

// Observation is what one decode cell's run saw, beyond its requests: the input of DecodeCell.
type Observation struct {
	Concurrency int        // streams requested
	CellStart   vtime.Time // the cell's clock started (before its scout)
	Streams     vtime.Time // the streams were launched (after the scout)
	Gate        GateState  // how the readiness wait ended
	Window      Window
	// Polls are the polls taken inside the window (WindowPolls).
	Polls []Poll
	// WindowTokens counts the completion tokens received inside the window; LastToken is when
	// the last of them arrived (-1: none).
	WindowTokens int
	LastToken    vtime.Time
	// Completed counts the stream requests that finished during the whole cell.
	Completed int
}

// DecodeCell reduces a decode cell to the tool's numbers. Over every stream request of the cell
// that received a token (reqs, restarts included): TTFT is the median from the send, time between
// tokens the median of the per-request values over each request's whole observed life, and
// per-request tok/s 1000 / that median. Over the window: total tok/s = the window's tokens / the
// time from its start to the last token received in it (also the measured time), average active =
// AvgActive of its polls. Completed counts the whole cell. A cell whose gate gave up is an Error.
func DecodeCell(label string, tokens int, o *Observation, reqs []Request) matrix.Cell {
	cell := matrix.NewCell(matrix.Decode, label, tokens, o.Concurrency)
	if o.Gate == GateGaveUp {
		cell.Status = matrix.Error
		return cell
	}
	var ttfts, tbts []float64
	for i := range reqs {
		if ms, ok := reqs[i].TTFTms(); ok {
			ttfts = append(ttfts, ms)
		}
		if ms, ok := reqs[i].TBTms(); ok {
			tbts = append(tbts, ms)
		}
	}
	cell.Status = DecodeStatus(o)
	cell.OutputTokens = o.WindowTokens
	cell.Completed = o.Completed
	cell.AvgActive = AvgActive(o.Polls)
	if o.WindowTokens > 0 && o.LastToken > o.Window.Start {
		span := o.LastToken.Sub(o.Window.Start).Seconds()
		cell.TotalTokS = float64(o.WindowTokens) / span
		cell.MeasuredS = span
	} else {
		cell.TotalTokS = 0
		cell.MeasuredS = 0
	}
	if len(ttfts) > 0 {
		cell.TTFTms = stats.Median(ttfts)
	}
	if len(tbts) > 0 {
		cell.TBTms = stats.Median(tbts)
		cell.PerRequestTokS = 1e3 / cell.TBTms
	}
	return cell
}
