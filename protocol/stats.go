package protocol

import (
	"math"
	"sort"

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

// DecodeStatus is the status of a decode cell that ran: Requests queued when fewer than its c
// streams ever ran at once (peak), else Valid.
func DecodeStatus(peak, c int) matrix.Status {
	if peak < c {
		return matrix.RequestsQueued
	}
	return matrix.Valid
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

// Median is the middle value, the mean of the middle two for an even count, NaN for none.
func Median(v []float64) float64 {
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
	Start       vtime.Time // the streams were launched
	Gate        GateState  // how the readiness wait ended
	Window      Window
	// WindowTokens and Completed count the tokens received and the requests finished inside the
	// window.
	WindowTokens int
	Completed    int
	// Peak is the most requests running at once at any poll.
	Peak int
	// RunningSeconds is the integral of num_requests_running over the window.
	RunningSeconds float64
}

// DecodeCell reduces a decode cell to the benchmark's numbers. Over every stream request of the
// cell (reqs, restarts included): TTFT is the median, time between tokens the median of the
// per-request values and per-request tok/s 1000 / that median. Over the window: total tok/s =
// window tokens / window length, average active = RunningSeconds / window length, completed =
// requests finished inside it. A cell whose gate gave up is an Error.
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
	dur := o.Window.Seconds()
	cell.Status = DecodeStatus(o.Peak, o.Concurrency)
	cell.TotalTokS = float64(o.WindowTokens) / dur
	cell.OutputTokens = o.WindowTokens
	cell.Completed = o.Completed
	cell.MeasuredS = dur
	cell.AvgActive = o.RunningSeconds / dur
	if len(ttfts) > 0 {
		cell.TTFTms = Median(ttfts)
	}
	if len(tbts) > 0 {
		cell.TBTms = Median(tbts)
		cell.PerRequestTokS = 1e3 / cell.TBTms
	}
	return cell
}
