package scheduler

import (
	"fmt"

	"github.com/servesim/servesim/kvcache"
)

// RequestID identifies a request for its whole life.
type RequestID int64

// State is where a request is in the engine.
type State uint8

const (
	Waiting State = iota
	Running
	Finished
)

func (s State) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Running:
		return "running"
	}
	return "finished"
}

// FinishReason says why a request left the engine.
type FinishReason uint8

const (
	NotFinished       FinishReason = iota
	FinishedLength                 // reached max_tokens
	FinishedCancelled              // aborted by the client
	FinishedModelLen               // reached max_model_len
)

// Request is one generation request inside the engine. The fields the scheduler reads at every
// visit of a running request come first, so a visit touches one or two cache lines of it: in a
// fleet, a replica's requests are evicted from the caches between two of its steps.
type Request struct {
	// lz is the lazy mode's state, while running (lazy.go).
	lz    *lazyState
	table *kvcache.Table
	// order is the admission sequence number (running order).
	order int64
	// Computed counts tokens whose KV is in the cache.
	Computed int
	// Output counts generated tokens.
	Output    int
	MaxTokens int
	State     State
	Reason    FinishReason
	// Drafts is the number of draft tokens waiting to be verified in the next step.
	Drafts int

	ID      RequestID
	Content kvcache.Content
	// Admitted counts admissions (1 + preemptions).
	Admitted int
	// Preemptions counts recompute preemptions.
	Preemptions int
	// CachedTokens is the prefix-cache hit at the last admission.
	CachedTokens int
	// PrefilledTokens counts prompt-or-recomputed tokens computed in prefill chunks (including
	// recomputation after a preemption).
	PrefilledTokens int
	// OwedPrefill is what the admissions asked for: the sum over admissions of (known tokens -
	// prefix-cache hit). A request that completes its prefills has PrefilledTokens == OwedPrefill.
	OwedPrefill int

	// Owner is the caller's handle for the request (sim keeps its Record here), so outputs lead
	// back to it without a map lookup.
	Owner any
}

// PromptTokens is the prompt length.
func (r *Request) PromptTokens() int { return r.Content.PromptTokens }

// NumTokens is prompt plus generated tokens.
func (r *Request) NumTokens() int { return r.Content.PromptTokens + r.Output }

// Prefilling reports whether the request still has known tokens to compute beyond the last one.
func (r *Request) Prefilling() bool { return r.Computed < r.NumTokens()-1 || r.Output == 0 }

func (r *Request) String() string {
	return fmt.Sprintf("req %d [%s computed=%d/%d out=%d/%d]", r.ID, r.State, r.Computed, r.NumTokens(), r.Output, r.MaxTokens)
}
