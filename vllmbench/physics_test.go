package vllmbench

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy"
)

// TestCheckPhysics: a result file whose values one GPU could not give (Llama-3.1-8B in bf16 on an
// H100: a forward pass reads 15 GB at 3,350 GB/s, at least 4.48 ms) is refused, naming the field;
// a realistic run passes. Negative per-request times are refused when the file is read.
func TestCheckPhysics(t *testing.T) {
	c := deploy.Ceiling{ForwardS: 4.48e-3, TokensPerStep: 1, OutputTokS: 57000, Why: "15 GB per token"}
	base := `{"num_prompts":20,"duration":12.0,"completed":20,"failed":0,"total_input_tokens":20000,"total_output_tokens":2000,"request_throughput":1.67,"output_throughput":166,"total_token_throughput":1833,"max_output_tokens_per_s":300,"mean_ttft_ms":301.2,"median_ttft_ms":300.3,"p1_ttft_ms":40,"mean_tpot_ms":16.9,"median_tpot_ms":16.8,"mean_itl_ms":16.9,"median_itl_ms":16.8}`
	r, err := ParseResult([]byte(base), "r.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckPhysics(c); err != nil {
		t.Fatalf("realistic run: %v", err)
	}
	for field, bad := range map[string][2]string{
		// 0.5 ms: below half a forward pass (2.24 ms); 3 ms would pass (within the margin).
		"mean_ttft_ms":            {`"mean_ttft_ms":301.2`, `"mean_ttft_ms":0.5`},
		"p1_ttft_ms":              {`"p1_ttft_ms":40`, `"p1_ttft_ms":1`},
		"median_tpot_ms":          {`"median_tpot_ms":16.8`, `"median_tpot_ms":1`},
		"mean_itl_ms":             {`"mean_itl_ms":16.9`, `"mean_itl_ms":2`},
		"max_output_tokens_per_s": {`"max_output_tokens_per_s":300`, `"max_output_tokens_per_s":200000`},
	} {
		r, err := ParseResult([]byte(strings.Replace(base, bad[0], bad[1], 1)), "r.json")
		if err != nil {
			t.Fatalf("%s: %v", bad[1], err)
		}
		if err := r.CheckPhysics(c); err == nil || !strings.Contains(err.Error(), field+" ") || !strings.Contains(err.Error(), "implausible") {
			t.Errorf("%s: %v, want an error naming %s as implausible", bad[1], err, field)
		}
	}
	// Output tok/s over the limit: a file whose own totals agree (1e6 tok/s for 12 s).
	big := strings.NewReplacer(`"total_output_tokens":2000`, `"total_output_tokens":12000000`, `"output_throughput":166`, `"output_throughput":1e6`,
		`"total_token_throughput":1833`, `"total_token_throughput":1001700`).Replace(base)
	r, err = ParseResult([]byte(big), "r.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckPhysics(c); err == nil || !strings.Contains(err.Error(), "output_throughput ") {
		t.Errorf("1e6 output tok/s: %v, want output_throughput implausible", err)
	}
	// Within the margin: 3 ms TTFT, 1.5 ms TPOT with 3 speculative tokens per step.
	ok := strings.NewReplacer(`"mean_ttft_ms":301.2`, `"mean_ttft_ms":3`, `"median_tpot_ms":16.8`, `"median_tpot_ms":1.5`).Replace(base)
	r, _ = ParseResult([]byte(ok), "r.json")
	if err := r.CheckPhysics(deploy.Ceiling{ForwardS: 4.48e-3, TokensPerStep: 4, OutputTokS: 57000}); err != nil {
		t.Errorf("values within the margin: %v", err)
	}
	// No request had two tokens: vLLM writes 0 for the TPOT statistics.
	zero := strings.NewReplacer(`"mean_tpot_ms":16.9`, `"mean_tpot_ms":0`, `"median_tpot_ms":16.8`, `"median_tpot_ms":0`).Replace(base)
	r, _ = ParseResult([]byte(zero), "r.json")
	if err := r.CheckPhysics(c); err != nil {
		t.Errorf("TPOT 0 (no sample): %v", err)
	}
	for _, detail := range []string{`,"input_lens":[10],"output_lens":[5],"ttfts":[-0.5]}`, `,"input_lens":[10],"output_lens":[5],"ttfts":[0.5],"itls":[[0.1,-1]]}`} {
		if _, err := ParseResult([]byte(strings.TrimSuffix(base, "}")+detail), "r.json"); err == nil || !strings.Contains(err.Error(), "implausible") {
			t.Errorf("%s: %v, want negative seconds refused", detail, err)
		}
	}
	detail := strings.TrimSuffix(base, "}") + `,"input_lens":[10,10],"output_lens":[5,5],"ttfts":[0.3,0.0001],"errors":["",""]}`
	r, err = ParseResult([]byte(detail), "r.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckPhysics(c); err == nil || !strings.Contains(err.Error(), "ttfts[1] ") {
		t.Errorf("a 0.1 ms TTFT: %v, want ttfts[1] implausible", err)
	}
}
