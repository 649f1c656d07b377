package workload

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/servesim/servesim/vtime"
)

// TraceStats summarises a stream of requests as replayed: rates over its span and the token
// counts per request. Percentiles are nearest-rank (the k-th smallest, k = ceil(p/100 x n)), the
// convention trace statistics are usually published in.
type TraceStats struct {
	Requests int     `json:"requests"`
	SpanS    float64 `json:"span_s"` // last arrival - first arrival
	// MeanReqS is Requests / SpanS; P99Window60ReqS the p99 of arrivals counted in consecutive
	// 60 s windows from the first arrival (empty windows count), per second.
	MeanReqS        float64  `json:"mean_req_s"`
	P99Window60ReqS float64  `json:"p99_rate_60s_req_s"`
	PeakWindow1ReqS float64  `json:"peak_rate_1s_req_s"`
	Input           IntStats `json:"input_tokens"`
	Output          IntStats `json:"output_tokens"`
	// With prefix-block ids: the input tokens an unbounded cache that keeps every block ever seen
	// would reuse (a request reuses its longest run of leading ids seen before), as a fraction.
	BlockRequests    int     `json:"block_requests,omitempty"`
	PrefixReuseShare float64 `json:"prefix_reuse_share,omitempty"`
	Sessions         int     `json:"sessions,omitempty"`
}

// IntStats is a count's distribution: mean, nearest-rank median and p99, min and max.
type IntStats struct {
	Mean   float64 `json:"mean"`
	Median int     `json:"median"`
	P99    int     `json:"p99"`
	Min    int     `json:"min"`
	Max    int     `json:"max"`
}

// countHist keeps exact counts of integer values: memory follows the distinct values, not the
// requests.
type countHist map[int]int

func (h countHist) stats(n int) IntStats {
	keys := make([]int, 0, len(h))
	var sum float64
	for k, c := range h {
		keys = append(keys, k)
		sum += float64(k) * float64(c)
	}
	slices.Sort(keys)
	rank := func(p float64) int {
		r := max(1, int(math.Ceil(p/100*float64(n))))
		acc := 0
		for _, k := range keys {
			acc += h[k]
			if acc >= r {
				return k
			}
		}
		return keys[len(keys)-1]
	}
	if n == 0 {
		return IntStats{}
	}
	return IntStats{Mean: sum / float64(n), Median: rank(50), P99: rank(99), Min: keys[0], Max: keys[len(keys)-1]}
}

// Stream is a source of requests in arrival order.
type Stream interface {
	// Next returns the next request; false at the end or on an error.
	Next() (Request, bool)
	// Err is the error that ended the stream (nil: its end).
	Err() error
}

// StreamStats reads a stream to its end and summarises it.
func StreamStats(s Stream) (*TraceStats, error) {
	in, out := countHist{}, countHist{}
	w60 := map[int64]int{}
	w1 := map[int64]int{}
	seen := map[uint64]struct{}{}
	sessions := map[uint64]struct{}{}
	st := &TraceStats{}
	var first, last vtime.Time
	var reused, blockInput float64
	for {
		q, ok := s.Next()
		if !ok {
			break
		}
		if st.Requests == 0 {
			first = q.At
		}
		last = q.At
		st.Requests++
		in[q.InputTokens]++
		out[q.OutputTokens]++
		off := int64(q.At - first)
		w60[off/int64(60*vtime.Second)]++
		w1[off/int64(vtime.Second)]++
		if q.Session != 0 {
			sessions[q.Session] = struct{}{}
		}
		if len(q.Blocks) > 0 {
			st.BlockRequests++
			k := 0
			for k < len(q.Blocks) {
				if _, ok := seen[q.Blocks[k]]; !ok {
					break
				}
				k++
			}
			reused += float64(min(k*q.BlockSpan, q.InputTokens))
			blockInput += float64(q.InputTokens)
			for _, id := range q.Blocks {
				seen[id] = struct{}{}
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if st.Requests == 0 {
		return nil, fmt.Errorf("no request to summarise")
	}
	st.SpanS = last.Sub(first).Seconds()
	if st.SpanS > 0 {
		st.MeanReqS = float64(st.Requests) / st.SpanS
	}
	windows := int(int64(last-first)/int64(60*vtime.Second)) + 1
	rates := countHist{}
	for i := range windows {
		rates[w60[int64(i)]]++
	}
	st.P99Window60ReqS = float64(rates.stats(windows).P99) / 60
	for _, c := range w1 {
		st.PeakWindow1ReqS = math.Max(st.PeakWindow1ReqS, float64(c))
	}
	st.Input, st.Output = in.stats(st.Requests), out.stats(st.Requests)
	if blockInput > 0 {
		st.PrefixReuseShare = reused / blockInput
	}
	st.Sessions = len(sessions)
	return st, nil
}

// WriteText prints the statistics, one quantity a line.
func (t *TraceStats) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, `requests             %s
span                 %.1f min (%.1f s)
mean rate            %.4g req/s
p99 rate, 60 s       %.4g req/s
peak rate, 1 s       %.4g req/s
input tokens         mean %.1f  median %d  p99 %d  (min %d, max %d)
output tokens        mean %.1f  median %d  p99 %d  (min %d, max %d)
`, commas(int64(t.Requests)), t.SpanS/60, t.SpanS, t.MeanReqS, t.P99Window60ReqS, t.PeakWindow1ReqS,
		t.Input.Mean, t.Input.Median, t.Input.P99, t.Input.Min, t.Input.Max,
		t.Output.Mean, t.Output.Median, t.Output.P99, t.Output.Min, t.Output.Max)
	if err == nil && t.BlockRequests > 0 {
		_, err = fmt.Fprintf(w, "prefix reuse         %.1f %% of input tokens (an unbounded cache; %s requests with block ids)\n", 100*t.PrefixReuseShare, commas(int64(t.BlockRequests)))
	}
	if err == nil && t.Sessions > 0 {
		_, err = fmt.Fprintf(w, "sessions             %s\n", commas(int64(t.Sessions)))
	}
	return err
}
