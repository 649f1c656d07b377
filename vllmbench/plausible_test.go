package vllmbench

import (
	"strings"
	"testing"
)

// TestMeasuredValuesPlausible: a rate above the file's own totals over its duration, or a latency
// longer than the run, is refused naming the field; the same file with sane values reads.
func TestMeasuredValuesPlausible(t *testing.T) {
	base := `{"num_prompts":20,"duration":12.0,"completed":20,"failed":0,"total_input_tokens":20000,"total_output_tokens":2000,"request_throughput":1.67,"output_throughput":166,"total_token_throughput":1833,"mean_ttft_ms":301.2,"median_ttft_ms":300.3,"mean_tpot_ms":16.9,"median_tpot_ms":16.8}`
	if _, err := ParseResult([]byte(base), "r.json"); err != nil {
		t.Fatalf("sane file: %v", err)
	}
	for field, bad := range map[string][2]string{
		"output_throughput":      {`"output_throughput":166`, `"output_throughput":1e308`},
		"request_throughput":     {`"request_throughput":1.67`, `"request_throughput":50`},
		"total_token_throughput": {`"total_token_throughput":1833`, `"total_token_throughput":1e9`},
		"mean_tpot_ms":           {`"mean_tpot_ms":16.9`, `"mean_tpot_ms":1e308`},
		"median_ttft_ms":         {`"median_ttft_ms":300.3`, `"median_ttft_ms":13000`},
	} {
		_, err := ParseResult([]byte(strings.Replace(base, bad[0], bad[1], 1)), "r.json")
		if err == nil || !strings.Contains(err.Error(), field+" ") || !strings.Contains(err.Error(), "implausible") {
			t.Errorf("%s: %v, want an error naming the field as implausible", bad[1], err)
		}
	}
}
