package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSimulateIntervals: simulate's JSON carries the provenance and the 80 % intervals; the seed
// is calibrated, Llama on an H100 with vLLM's defaults rests on priors and its intervals are
// wider; the text output shows both lines; matrix CSV ends with the interval columns.
func TestSimulateIntervals(t *testing.T) {
	type out struct {
		Provenance struct {
			Class string `json:"class"`
		} `json:"provenance"`
		Intervals []struct {
			Name  string  `json:"name"`
			Value float64 `json:"value"`
			Lo    float64 `json:"lo"`
			Hi    float64 `json:"hi"`
			Sigma float64 `json:"sigma"`
		} `json:"intervals_80"`
	}
	run := func(args ...string) out {
		t.Helper()
		code, stdout, errs := runCLI(append([]string{"simulate", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("simulate %v: exit %d: %s", args, code, errs)
		}
		var o out
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	seed := run("--workload", "bench-8Kx2")
	llama := run("--workload", "bench-8Kx2", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100-SXM")
	if seed.Provenance.Class != "calibrated" || llama.Provenance.Class != "prior" {
		t.Fatalf("provenance: seed %s, Llama on H100 %s", seed.Provenance.Class, llama.Provenance.Class)
	}
	if len(seed.Intervals) == 0 || len(seed.Intervals) != len(llama.Intervals) {
		t.Fatalf("intervals: seed %+v, llama %+v", seed.Intervals, llama.Intervals)
	}
	for i, s := range seed.Intervals {
		l := llama.Intervals[i]
		if !(s.Lo < s.Value && s.Value < s.Hi) || !(l.Sigma > s.Sigma) || l.Hi/l.Lo <= s.Hi/s.Lo {
			t.Errorf("%s: seed %+v, Llama on H100 %+v: want the prior interval wider", s.Name, s, l)
		}
	}
	code, text, errs := runCLI("simulate", "--workload", "bench-8Kx2", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100-SXM")
	if code != 0 || !strings.Contains(text, "Provenance   prior: gpu compute") || !strings.Contains(text, "80% interval output_tok_s") {
		t.Errorf("simulate text: exit %d %s\n%s", code, errs, text)
	}
	code, csv, errs := runCLI("matrix", "--format", "csv", "--measured", "none")
	if first, _, _ := strings.Cut(csv, "\n"); code != 0 || !strings.HasSuffix(first, ",ttft_ms_lo80,ttft_ms_hi80,tbt_ms_lo80,tbt_ms_hi80,param_source") {
		t.Errorf("matrix csv header: exit %d %s\n%s", code, errs, first)
	}
}

// TestOpenLoopThroughputNoInterval: an open loop the server keeps up with has its throughput set
// by the arrivals, so simulate gives it no interval; a closed loop's throughput has one.
func TestOpenLoopThroughputNoInterval(t *testing.T) {
	for _, c := range []struct {
		workload string
		want     bool
	}{{"chat", false}, {"1k1k", true}} {
		code, out, errs := runCLI("simulate", "-q", "--workload", c.workload, "--requests", "64", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100-SXM")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.workload, code, errs)
		}
		if got := strings.Contains(out, "80% interval output_tok_s"); got != c.want || !strings.Contains(out, "tpot_ms_p50") {
			t.Errorf("%s: throughput interval shown %v, want %v:\n%s", c.workload, got, c.want, out)
		}
	}
}
