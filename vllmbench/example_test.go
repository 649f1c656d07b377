package vllmbench_test

import (
	"fmt"

	"github.com/servesim/servesim/vllmbench"
)

func ExampleParseLine() {
	c, err := vllmbench.ParseLine(`vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --dataset-name random \
  --random-input-len 1024 --random-output-len 128 --random-range-ratio 0.1 --num-prompts 200 \
  --request-rate 4 --max-concurrency 32 --save-result --port 8000`)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _, err := c.Spec(vllmbench.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Describe())
	fmt.Println(c.Accepted)
	// Output:
	// vllm bench serve: 200 prompts, random dataset, input 920..1126 + 1 special, output 115..141 tokens; rate 4 req/s (Poisson); max concurrency 32; ready check + 0 warm-ups; --seed 0
	// [--model meta-llama/Llama-3.1-8B-Instruct --save-result --port 8000]
}

func ExampleReadResult() {
	r, err := vllmbench.ReadResult("testdata/openai-infqps-concurrency16-GLM-5.3-Flash-NVFP4-20260914-103000.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, notes, err := r.Workload(vllmbench.RecoverOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Summary())
	fmt.Println(s.Describe())
	fmt.Println(notes[1])
	// Output:
	// nvidia/GLM-5.3-Flash-NVFP4, 200 prompts, rate inf, max concurrency 16, 200 completed in 33.8 s
	// vllm bench serve: 200 prompts, random dataset, input 1023 + 1 special, output 128 tokens; rate inf (all at t = 0); max concurrency 16; ready check + 0 warm-ups; --seed 0
	// lengths: not recorded (no --save-detailed): every request gets the means, 1023 input (+1 special) and 128 output tokens; the spread of the real lengths is lost
}
