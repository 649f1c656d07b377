package llmbench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/cost"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/sim"
)

// Explanation splits the steady decode step and a prefill chunk of one cell into cost terms.
type Explanation struct {
	Context     int // tokens of context per request
	Concurrency int // requested streams
	// Running is the streams the engine runs at once: min(C, max_num_seqs) and, under a
	// protocol (ExplainCell), at most MaxConcurrency.
	Running    int
	SpecTokens int
	// Label is the context as the matrix labels it ("1019K"); set by ExplainCell.
	Label string
	// OverCapacity: the benchmark's rule C x (context + max output) > kv_cache_size_tokens
	// refuses the cell (ExplainCell only). MaxConcurrency is the largest C the rule admits at
	// this context, MaxOutput the protocol's max output and KVTokens kv_cache_size_tokens.
	OverCapacity   bool
	MaxConcurrency int
	MaxOutput      int
	KVTokens       int
	// TokensPerStep is tau, the expected emitted tokens per decode step per request.
	TokensPerStep float64
	// SpecMethod is the speculative method ("" when off) and Acceptance its per-position rates
	// and where they come from (deploy.Deployment.Acceptance).
	SpecMethod string `json:",omitempty"`
	Acceptance string `json:",omitempty"`
	// Decode is the steady step: Running requests each verifying 1 + k tokens at Context.
	Decode       cost.StepCost
	DecodeTokens int // tokens scheduled in the decode step
	// PerRequestTokS and TotalTokS are the steady-state rates the decode step implies.
	PerRequestTokS float64
	TotalTokS      float64
	// Prefill is one chunk of a cold prompt of Context tokens, taken at the middle of the prompt,
	// alongside the decode batch of Running-1 other requests (a mixed step).
	Prefill          cost.StepCost
	PrefillChunk     int
	PrefillStart     int
	PrefillAloneTokS float64 // prefill tok/s of the same chunk on an idle server
}

// ContextTokens is the prompt of a context as the matrix runs it under protocol p: a label of
// one of p's rows ("1019K", the seed's trimmed 1024K) is that row's tokens; any other context is
// fitted by the protocol's rule (Protocol.FitContext), so "1024K" is trimmed to the room and a
// context that cannot fit is a *protocol.FitError.
func ContextTokens(p *protocol.Protocol, context string, maxModelLen int) (int, error) {
	if jobs, err := p.Plan(maxModelLen, 0); err == nil {
		for _, j := range jobs {
			if j.Phase == matrix.Decode && strings.EqualFold(j.Label, strings.TrimSpace(context)) {
				return j.Tokens, nil
			}
		}
	}
	return p.FitContext(context, maxModelLen)
}

// ExplainCell explains the matrix cell context x concurrency of protocol p: the context fitted
// as the matrix fits it (ContextTokens) and the matrix's capacity rule applied (ExplainAt).
func ExplainCell(srv *sim.Server, p *protocol.Protocol, context string, concurrency int) (*Explanation, error) {
	tokens, err := ContextTokens(p, context, srv.Deployment.Engine.MaxModelLen)
	if err != nil {
		return nil, err
	}
	return ExplainAt(srv, p, tokens, concurrency)
}

// ExplainAt is Explain under protocol p's capacity rule: a cell whose C x (context + max
// output) exceeds kv_cache_size_tokens is marked OverCapacity (the benchmark does not run it),
// and the steps are those of the streams the rule admits at once.
func ExplainAt(srv *sim.Server, p *protocol.Protocol, contextTokens, concurrency int) (*Explanation, error) {
	kv := srv.Layout.KVCacheSizeTokens
	maxC := max(p.MaxConcurrencyFor(contextTokens, kv), 1)
	x, err := explain(srv, contextTokens, concurrency, maxC)
	if err != nil {
		return nil, err
	}
	x.Label = matrix.Label(contextTokens)
	x.OverCapacity = p.OverCapacity(concurrency, contextTokens, kv)
	x.MaxConcurrency, x.MaxOutput, x.KVTokens = maxC, p.MaxOutput, kv
	return x, nil
}

// Explain computes the steady decode step and a representative prefill chunk for a cell, with
// min(C, max_num_seqs) streams at once and no benchmark capacity rule (ExplainAt applies one).
// Its cells send one prompt to every stream (same_prompt 1).
func Explain(srv *sim.Server, contextTokens, concurrency int) (*Explanation, error) {
	return explain(srv, contextTokens, concurrency, concurrency)
}

func explain(srv *sim.Server, contextTokens, concurrency, capacity int) (*Explanation, error) {
	srv, err := WithSamePrompt(srv, 1)
	if err != nil {
		return nil, err
	}
	d := srv.Deployment
	if contextTokens <= 0 || contextTokens >= d.Engine.MaxModelLen {
		return nil, fmt.Errorf("context %d tokens: must be in 1..%d (max_model_len)", contextTokens, d.Engine.MaxModelLen-1)
	}
	if concurrency <= 0 {
		return nil, fmt.Errorf("concurrency %d: must be positive", concurrency)
	}
	k := d.Engine.SpecTokens()
	x := &Explanation{Context: contextTokens, Concurrency: concurrency, Running: min(concurrency, d.Engine.MaxNumSeqs, capacity), SpecTokens: k}
	acc := d.Acceptance(&srv.Params)
	x.TokensPerStep = 1
	if k > 0 {
		x.TokensPerStep = acc.Mean()
		x.SpecMethod, x.Acceptance = d.Engine.Speculative.Method, acc.String()
	}
	var s cost.StepShape
	for i := 0; i < x.Running; i++ {
		s.Add(cost.SeqWork{Start: contextTokens, Tokens: 1 + k, Decode: true, Emits: true})
	}
	x.Decode = srv.Cost.Step(&s)
	x.DecodeTokens = s.Tokens
	x.PerRequestTokS = x.TokensPerStep / x.Decode.TotalSeconds
	x.TotalTokS = x.PerRequestTokS * float64(x.Running)

	budget := d.Engine.MaxNumBatchedTokens
	others := x.Running - 1
	chunk := budget - others*(1+k)
	if chunk <= 0 {
		chunk = 1
	}
	if srv.Layout.Hybrid && d.Engine.PrefixCaching && chunk > srv.Layout.BlockSize {
		chunk = chunk / srv.Layout.BlockSize * srv.Layout.BlockSize
	}
	chunk = min(chunk, contextTokens)
	start := max(0, contextTokens/2-chunk/2)
	x.PrefillChunk, x.PrefillStart = chunk, start
	s.Reset()
	for i := 0; i < others; i++ {
		s.Add(cost.SeqWork{Start: contextTokens, Tokens: 1 + k, Decode: true, Emits: true})
	}
	s.Add(cost.SeqWork{Start: start, Tokens: chunk})
	x.Prefill = srv.Cost.Step(&s)
	s.Reset()
	s.Add(cost.SeqWork{Start: start, Tokens: chunk})
	alone := srv.Cost.Step(&s)
	x.PrefillAloneTokS = float64(chunk) / alone.TotalSeconds
	return x, nil
}

// Write prints the explanation as a table of terms.
func (x *Explanation) Write(w io.Writer) error {
	ctx := fmt.Sprintf("%d tokens", x.Context)
	if x.Label != "" {
		ctx = fmt.Sprintf("%s (%d tokens)", x.Label, x.Context)
	}
	fmt.Fprintf(w, "Cell: context %s, %d streams requested, %d run at once", ctx, x.Concurrency, x.Running)
	if x.SpecTokens > 0 {
		fmt.Fprintf(w, ", speculative %s k = %d (tau = %.2f emitted tokens per step)", x.SpecMethod, x.SpecTokens, x.TokensPerStep)
	}
	fmt.Fprintln(w)
	if x.Acceptance != "" {
		fmt.Fprintf(w, "Acceptance: %s; the drafter term is the %s drafting\n", x.Acceptance, x.SpecMethod)
	}
	if x.OverCapacity {
		fmt.Fprintf(w, "Over capacity: the benchmark does not run this cell: %d x (%d + %d output) tokens > kv_cache_size_tokens %d;\n",
			x.Concurrency, x.Context, x.MaxOutput, x.KVTokens)
		fmt.Fprintf(w, "  the KV cache holds %d such streams, and the steps below are for %d.\n", x.MaxConcurrency, x.Running)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "term\tdecode step ms\tshare\tprefill step ms\tshare\t\n")
	for t := cost.Term(0); t < cost.NumTerms; t++ {
		fmt.Fprintf(tw, "%s\t%.3f\t%.1f%%\t%.3f\t%.1f%%\t\n", t, x.Decode.Seconds[t]*1e3, pct(x.Decode.Seconds[t], x.Decode.TotalSeconds),
			x.Prefill.Seconds[t]*1e3, pct(x.Prefill.Seconds[t], x.Prefill.TotalSeconds))
	}
	fmt.Fprintf(tw, "total (wall)\t%.3f\t\t%.3f\t\t\n", x.Decode.TotalSeconds*1e3, x.Prefill.TotalSeconds*1e3)
	fmt.Fprintf(tw, "  GPU / CPU\t%.3f / %.3f\t\t%.3f / %.3f\t\t\n", x.Decode.GPUSeconds*1e3, x.Decode.CPUSeconds*1e3, x.Prefill.GPUSeconds*1e3, x.Prefill.CPUSeconds*1e3)
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Decode step: %d requests x %d tokens = %d tokens per step; binds on %s.\n", x.Running, 1+x.SpecTokens, x.DecodeTokens, x.Decode.Binding())
	fmt.Fprintf(w, "  per request: %.1f tok/s (%.2f ms between tokens); total: %.1f tok/s\n", x.PerRequestTokS, 1e3/x.PerRequestTokS, x.TotalTokS)
	fmt.Fprintf(w, "Prefill step: a %d-token chunk at position %d", x.PrefillChunk, x.PrefillStart)
	if x.Running > 1 {
		fmt.Fprintf(w, " beside %d decoding requests", x.Running-1)
	}
	fmt.Fprintf(w, "; binds on %s.\n", x.Prefill.Binding())
	fmt.Fprintf(w, "  prefill alone: %.0f tok/s\n", x.PrefillAloneTokS)
	return nil
}

func pct(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return 100 * a / b
}
