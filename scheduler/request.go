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

// Request is one generation request inside the engine.
type Request struct {
	ID        RequestID
	Content   kvcache.Content
	MaxTokens int

	State  State
	Reason FinishReason
	// Computed counts tokens whose KV is in the cache.
	Computed int
	// Output counts generated tokens.
	Output int
	// Drafts is the number of draft tokens waiting to be verified in the next step.
	Drafts int
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

	table *kvcache.Table
	// order is the admission sequence number (running order).
	order int64
	lz    *lazyState // lazy mode, while running (lazy.go)
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
