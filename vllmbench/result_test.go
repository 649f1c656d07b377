package vllmbench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

const (
	detailedFile = "testdata/openai-4.0qps-GLM-5.3-Flash-NVFP4-20260914-101500.json"
	infFile      = "testdata/openai-infqps-concurrency16-GLM-5.3-Flash-NVFP4-20260914-103000.json"
	goodputFile  = "testdata/openai-2.0qps-GLM-5.3-Flash-NVFP4-20260914-104500.json"
)

func read(t *testing.T, p string) *Result {
	t.Helper()
	r, err := ReadResult(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestReadDetailed(t *testing.T) {
	r := read(t, detailedFile)
	if r.NumPrompts != 64 || r.RequestRate != 4 || r.Burstiness != 1 || r.MaxConcurrency != 0 || r.Completed != 64 || r.Failed != 0 {
		t.Errorf("traffic: %+v", r)
	}
	if !math.IsNaN(r.RequestGoodput) || r.Label != "" || r.ModelID != "nvidia/GLM-5.3-Flash-NVFP4" || r.EndpointType != "openai" || r.Date != "20260914-101500" {
		t.Errorf("goodput %v (want NaN for null), label %q, model %q", r.RequestGoodput, r.Label, r.ModelID)
	}
	if !r.HasDetail() || len(r.InputLens) != 64 || len(r.OutputLens) != 64 || len(r.TTFTsS) != 64 || len(r.ITLsS) != 64 || r.GeneratedTexts != 64 || len(r.Errors) != 64 {
		t.Fatalf("detail: %d %d %d %d %d %d", len(r.InputLens), len(r.OutputLens), len(r.TTFTsS), len(r.ITLsS), r.GeneratedTexts, len(r.Errors))
	}
	// The summaries are vLLM's functions of the detail: recompute a few.
	var in, out int64
	var ttft float64
	for i := range r.InputLens {
		in += int64(r.InputLens[i])
		out += int64(r.OutputLens[i])
		ttft += r.TTFTsS[i]
	}
	if in != r.TotalInputTokens || out != r.TotalOutputTokens || !near(ttft/64*1000, r.TTFT.Mean) {
		t.Errorf("totals %d/%d vs %d/%d; mean TTFT %v vs %v", in, out, r.TotalInputTokens, r.TotalOutputTokens, ttft/64*1000, r.TTFT.Mean)
	}
	if !near(r.RequestThroughput, 64/r.DurationS) || !near(r.OutputThroughput, float64(out)/r.DurationS) {
		t.Errorf("throughputs %v %v", r.RequestThroughput, r.OutputThroughput)
	}
	if p, ok := r.TTFT.At(99); !ok || !(p > r.TTFT.Median) || r.E2EL.Present() {
		t.Errorf("p99 TTFT %v %v; E2EL present %v (not in --percentile-metrics)", p, ok, r.E2EL.Present())
	}
}

func TestReadInfAndMetadata(t *testing.T) {
	r := read(t, infFile)
	if !math.IsInf(r.RequestRate, 1) || r.MaxConcurrency != 16 || r.HasDetail() || r.Label != "openai" {
		t.Errorf("rate %v, concurrency %d, detail %v", r.RequestRate, r.MaxConcurrency, r.HasDetail())
	}
	if got := strings.Join(r.Metadata, " "); got != "gpu=rtx-pro-6000x4 tp=4" {
		t.Errorf("metadata %q", got)
	}
	for _, l := range []*Latency{&r.TTFT, &r.TPOT, &r.ITL, &r.E2EL} {
		if len(l.Percentiles) != 3 || l.Percentiles[0].P != 50 || l.Percentiles[2].P != 99 || !near(l.Percentiles[0].MS, l.Median) {
			t.Errorf("percentiles %+v (median %v)", l.Percentiles, l.Median)
		}
	}
	g := read(t, goodputFile)
	if !(g.RequestGoodput > 0) || g.Burstiness != 0.5 {
		t.Errorf("goodput %v, burstiness %v", g.RequestGoodput, g.Burstiness)
	}
	if p, ok := g.TTFT.At(99.9); !ok || !(p > 0) {
		t.Errorf("p99.9: %v %v", p, ok)
	}
}

func TestParseResultErrors(t *testing.T) {
	base := `"duration": 10, "completed": 5, "total_input_tokens": 50, "total_output_tokens": 60, "request_throughput": 0.5, "output_throughput": 6`
	for _, c := range []struct{ in, want string }{
		{`[1, 2]`, "want a JSON object"},
		{`null`, "got null"},
		{"{\n\"duration\": 1,\n\"completed\": }", "x.json:3: not JSON"},
		{`{"completed": 5}`, "missing duration, total_input_tokens"},
		{`{` + base + `, "request_rate": "fast"}`, `field "request_rate": want a number of requests/s or the string "inf", got "fast"`},
		{`{` + base + `, "request_rate": -1}`, `field "request_rate"`},
		{`{` + base + `, "completed": 2.5}`, `field "completed": want a whole number`},
		{`{` + base + `, "max_concurrency": 0}`, `"max_concurrency"`},
		{`{` + base + `, "input_lens": [1, 2], "output_lens": [3]}`, "input_lens has 2 entries, output_lens 1"},
		{`{` + base + `, "input_lens": [1, -2], "output_lens": [3, 4]}`, "input_lens[1]"},
		{`{` + base + `, "itls": [[0.1], "x"]}`, `itls[1]`},
		{`{` + base + `, "mean_ttft_ms": "slow"}`, `"mean_ttft_ms": want a number`},
		{`{` + base + `, "p200_ttft_ms": 5}`, "percentile key"},
		{`{` + base + `, "duration": 0}`, "want a positive duration"},
		{`{` + base + `, "model_id": 7}`, `"model_id": want a string`},
	} {
		_, err := ParseResult([]byte(c.in), "x.json")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", c.in, err, c.want)
		}
	}
	// Python's json writes NaN for the statistics of an empty list: read as absent.
	r, err := ParseResult([]byte(`{`+base+`, "std_tpot_ms": NaN, "mean_tpot_ms": NaN, "note": "NaN stays text", "x": -Infinity}`), "x.json")
	if err != nil || !math.IsNaN(r.TPOT.Std) || r.TPOT.Present() || strings.Join(r.Metadata, " ") != "note=NaN stays text x=null" {
		t.Errorf("NaN: %v %+v %q", err, r, r.Metadata)
	}
	if !IsResult([]byte(" {\"request_throughput\": 1}")) || IsResult([]byte(`{"cells": []}`)) {
		t.Errorf("IsResult")
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, _ := os.Create(big)
	f.Truncate(MaxResultBytes + 1)
	f.Close()
	if _, err := ReadResult(big); err == nil || !strings.Contains(err.Error(), "larger than 256 MiB") {
		t.Errorf("size limit: %v", err)
	}
}

func TestRecover(t *testing.T) {
	// With --save-detailed: the recorded lengths, request by request; prompts + 1 special token.
	r := read(t, detailedFile)
	s, notes, err := r.Workload(RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := s.VLLM
	if s.Kind != workload.KindVLLMBench || b.Dataset != "list" || b.RequestRate != 4 || b.MaxConcurrency != 0 || len(b.Prompts()) != 64 {
		t.Fatalf("spec %+v", b)
	}
	if p := b.Prompts()[0]; p.Tokens != r.InputLens[0] || p.EngineTokens != r.InputLens[0]+1 || p.OutputTokens != r.OutputLens[0] {
		t.Errorf("prompt 0 %+v, recorded %d/%d", p, r.InputLens[0], r.OutputLens[0])
	}
	if got := strings.Join(notes, "\n"); !strings.Contains(got, "--seed 0") || !strings.Contains(got, "64 recorded input_lens") {
		t.Errorf("notes %s", got)
	}
	// Without detail: the means; rate inf and the semaphore from the file.
	r = read(t, infFile)
	s, notes, err = r.Workload(RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b = s.VLLM
	if b.Dataset != "random" || b.InputLen != 1024 || b.OutputLen != 128 || b.RangeRatio != 0 || b.RequestRate != 0 || b.MaxConcurrency != 16 || b.N() != 200 {
		t.Errorf("spec %+v", b)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "every request gets the means, 1023 input (+1 special) and 128 output") {
		t.Errorf("notes %q", notes)
	}
	// With the command: its dataset and prefix; the file's traffic wins, with a note.
	c, err := ParseLine("vllm bench serve --random-input-len 1024 --random-output-len 128 --random-prefix-len 64 --num-prompts 200 --max-concurrency 8 --seed 3")
	if err != nil {
		t.Fatal(err)
	}
	s, notes, err = r.Workload(RecoverOptions{Command: c})
	if err != nil {
		t.Fatal(err)
	}
	b = s.VLLM
	if b.PrefixLen != 64 || b.Seed != 3 || b.MaxConcurrency != 16 {
		t.Errorf("spec %+v", b)
	}
	if got := strings.Join(notes, "\n"); !strings.Contains(got, "max_concurrency: the file says 16, the command 8") {
		t.Errorf("notes %s", got)
	}
	g := read(t, goodputFile)
	s, _, err = g.Workload(RecoverOptions{})
	if err != nil || s.VLLM.Burstiness != 0.5 || s.VLLM.RequestRate != 2 {
		t.Errorf("goodput file: %v %+v", err, s.VLLM)
	}
}

func seedServer(t testing.TB) *sim.Server {
	t.Helper()
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestCompare(t *testing.T) {
	srv := seedServer(t)
	for _, f := range []string{detailedFile, infFile, goodputFile} {
		r := read(t, f)
		s, _, err := r.Workload(RecoverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.SLO = workload.SLO{TTFTms: 300, TPOTms: 20}
		m, err := workload.Run(srv, s, workload.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		c := Compare(m, r)
		keys := map[string]Row{}
		for _, row := range c.Rows {
			keys[row.Key] = row
		}
		// The recovered workload reproduces the file's counts exactly.
		for _, k := range []string{"completed", "failed", "total_input_tokens", "total_output_tokens"} {
			if row := keys[k]; row.Predicted != row.Measured {
				t.Errorf("%s: %s predicted %v, measured %v", f, k, row.Predicted, row.Measured)
			}
		}
		for _, k := range []string{"output_throughput", "mean_ttft_ms", "median_tpot_ms", "mean_itl_ms"} {
			row, ok := keys[k]
			if !ok || math.IsNaN(row.ErrPct()) {
				t.Errorf("%s: row %s missing or without an error: %+v", f, k, row)
			}
		}
		_, hasE2E := keys["median_e2el_ms"]
		if hasE2E != (f == infFile) {
			t.Errorf("%s: E2EL row %v", f, hasE2E)
		}
		_, hasGood := keys["request_goodput"]
		if hasGood != (f == goodputFile) {
			t.Errorf("%s: goodput row %v", f, hasGood)
		}
		var b strings.Builder
		c.WriteTable(&b)
		if !strings.Contains(b.String(), "output throughput (tok/s)") {
			t.Errorf("table:\n%s", b.String())
		}
	}
}

// TestCompareRowsFixed checks that the rows depend on the file only: parameters that break the
// server still give the same rows (the fit relies on it).
func TestCompareRowsFixed(t *testing.T) {
	r := read(t, goodputFile)
	a := Compare(&workload.Metrics{}, r)
	srv := seedServer(t)
	s, _, _ := r.Workload(RecoverOptions{})
	m, err := workload.Run(srv, s, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := Compare(m, r)
	if len(a.Rows) != len(b.Rows) {
		t.Fatalf("%d rows vs %d", len(a.Rows), len(b.Rows))
	}
	for i := range a.Rows {
		if a.Rows[i].Key != b.Rows[i].Key {
			t.Errorf("row %d: %s vs %s", i, a.Rows[i].Key, b.Rows[i].Key)
		}
	}
}

func FuzzParseResult(f *testing.F) {
	for _, p := range []string{infFile, goodputFile} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"duration": 1, "completed": 1, "total_input_tokens": 5, "total_output_tokens": 5, "request_throughput": 1, "output_throughput": 5, "input_lens": [5], "output_lens": [5], "itls": [[NaN]], "p99.9_itl_ms": Infinity}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		r, err := ParseResult(data, "fuzz.json")
		if err != nil {
			return
		}
		if r.Completed < 0 || len(r.InputLens) != len(r.OutputLens) {
			t.Fatalf("inconsistent result %+v", r)
		}
		// Recovery either works or says why; never an invalid workload.
		s, _, err := r.Workload(RecoverOptions{})
		if err == nil {
			if err := s.Validate(); err != nil {
				t.Fatalf("recovered an invalid workload: %v", err)
			}
		}
		Compare(&workload.Metrics{}, r)
	})
}
