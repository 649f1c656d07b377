package planner

import (
	"fmt"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/workload"
)

// DefaultOutputTokens is the output length per request of a fixed-length question when none is
// given: a long chat or coding answer (vllm bench serve's random dataset defaults to 128,
// llm-inference-bench to 4,096).
const DefaultOutputTokens = 1024

// FixedLengthWorkload is the question "users at a time send in-token prompts and read out-token
// answers" (plan --input-tokens): a closed loop of 10 x users requests (at least 100), as `vllm
// bench serve --dataset-name random --max-concurrency users` offers it.
func FixedLengthWorkload(in, out, users int) *workload.Spec {
	n := max(10*users, 100)
	return &workload.Spec{Name: fmt.Sprintf("%d in / %d out x %d users", in, out, users), Kind: workload.KindClosed,
		Closed: workload.Closed{Requests: n, Concurrency: users}, Lengths: workload.Lengths{InputTokens: in, OutputTokens: out}}
}

// LengthQuestion is a question by lengths as the command line gives it: --input-tokens N
// --users U [--output-tokens M] (a fixed-length closed loop), or --context C --users U (the
// llm-inference-bench cell, whose workload comes from the scenario's protocol).
type LengthQuestion struct {
	Context, InputTokens string
	Users                int
	OutputTokens         int // 0: DefaultOutputTokens for --input-tokens, the protocol's for --context
}

// Workload is the fixed-length workload of an --input-tokens question (nil for a --context one,
// checked); an error names the flag and what is wanted.
func (q LengthQuestion) Workload() (*workload.Spec, error) {
	switch {
	case q.Context != "" && q.InputTokens != "":
		return nil, fmt.Errorf("--context (the llm-inference-bench question) and --input-tokens (a fixed prompt length) are exclusive")
	case q.InputTokens != "":
		in, err := matrix.ParseContext(q.InputTokens)
		if err != nil || in < 1 {
			return nil, fmt.Errorf("--input-tokens %q: want a token count such as 1000 or 8K", q.InputTokens)
		}
		if q.Users < 1 {
			return nil, fmt.Errorf("--input-tokens needs --users (the concurrency)")
		}
		out := q.OutputTokens
		if out == 0 {
			out = DefaultOutputTokens
		}
		return FixedLengthWorkload(in, out, q.Users), nil
	case q.Context == "" || q.Users == 0:
		return nil, fmt.Errorf("give --context and --users (e.g. --context 128K --users 16), --input-tokens and --users (e.g. --input-tokens 2000 --output-tokens 500 --users 32), --workload or --vllm-bench")
	}
	if _, err := matrix.ParseContext(q.Context); err != nil {
		return nil, fmt.Errorf("--context: %v", err)
	}
	if q.Users < 1 {
		return nil, fmt.Errorf("--users %d: must be a positive integer", q.Users)
	}
	return nil, nil
}
