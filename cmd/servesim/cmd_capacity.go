package main

import (
	"bytes"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/llmbench"
)

func capacityCmd() *command {
	return &command{
		Name:  "capacity",
		Short: "show the per-GPU memory budget, KV-cache layout, kv_cache_size_tokens and max concurrency per context",
		Long: `Follows vLLM's start-up accounting: weights per GPU (experts split by EP, the rest by TP),
activation peak of the profile run, non-torch memory and the CUDA-graph estimate are subtracted
from total x gpu_memory_utilization; the rest is cut into blocks of the unified page size
(hybrid models raise the attention block until a page holds a recurrent-state page). The
reported kv_cache_size_tokens is what the benchmark's Over-capacity rule uses.

Example:
  servesim capacity
  servesim capacity --vllm-cmd "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768" --gpu H100
  servesim capacity --config llama.toml --gpu B200-custom --gpu-catalog my-gpus.toml`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			sf := scenarioFlags{matrix: true}
			sf.register(fs)
			var out outFlag
			out.register(fs, "the report")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if err := out.check(); err != nil {
					return err
				}
				r, srv, err := sf.loadServer(e.stderr, e.info())
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := llmbench.WriteCapacity(&buf, srv, &r.Scenario.Protocol); err != nil {
					return err
				}
				return out.write(e.stdout, &buf)
			}
		},
	}
}
