package planner

import (
	"fmt"

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
