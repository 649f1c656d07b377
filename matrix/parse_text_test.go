package matrix

import (
	"errors"
	"strings"
	"testing"
)

func TestParseTextSeed(t *testing.T) {
	m := loadSeed(t)
	if got, want := len(m.Prefill), 9; got != want {
		t.Errorf("prefill rows: got %d, want %d", got, want)
	}
	if got, want := len(m.Decode), 64; got != want {
		t.Errorf("decode cells: got %d, want %d", got, want)
	}
	counts := map[Status]int{}
	ran := 0
	for _, c := range m.Decode {
		counts[c.Status]++
		if c.Status.Ran() {
			ran++
		}
	}
	// The page has 5 "Requests queued" cells: 8K x 64, 8K x 128, 16K x 64, 16K x 128, 32K x 64.
	for _, tt := range []struct {
		what      string
		got, want int
	}{
		{"ran", ran, 43},
		{"over capacity", counts[OverCapacity], 21},
		{"requests queued", counts[RequestsQueued], 5},
		{"valid", counts[Valid], 38},
	} {
		if tt.got != tt.want {
			t.Errorf("decode cells %s: got %d, want %d", tt.what, tt.got, tt.want)
		}
	}
	if got, want := m.DecodeContexts(), []string{"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1019K"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("decode contexts: got %v, want %v", got, want)
	}
	if got := m.Concurrencies(); len(got) != 8 || got[0] != 1 || got[7] != 128 {
		t.Errorf("concurrencies: got %v, want 1..128", got)
	}
}

func TestParseTextSeedCells(t *testing.T) {
	m := loadSeed(t)
	c, ok := m.Find(Key{Decode, "8K", 1})
	if !ok {
		t.Fatal("no decode 8K x 1")
	}
	want := Cell{Phase: Decode, Context: "8K", ContextTokens: 8192, Concurrency: 1, Status: Valid,
		TotalTokS: 179.7, PerRequestTokS: 184.7, TTFTms: 746, TBTms: 5.4, AvgActive: 1.0,
		Completed: 1, OutputTokens: 5391, MeasuredS: 30.0}
	if *c != want { // exact: every value is parsed from its decimal text
		t.Errorf("decode 8K x 1:\ngot  %+v\nwant %+v", *c, want)
	}
	tests := []struct {
		key                Key
		tokens             int
		status             Status
		totalTokS, ttftMS  float64
		outputTokens       int
		measuredS, avgActv float64
	}{
		{Key{Prefill, "8K", 1}, 8192, Valid, 12000, 682, -1, nan(), nan()},
		{Key{Prefill, "16K", 1}, 16384, Valid, 8174, 1985, -1, nan(), nan()},
		{Key{Prefill, "32K", 1}, 32768, Valid, 13200, 2442, -1, nan(), nan()},
		{Key{Prefill, "1019K", 1}, 1044416, Valid, 9641, 106315, -1, nan(), nan()},
		{Key{Prefill, "1024K", 1}, 1048511, Valid, 9596, 107335, -1, nan(), nan()},
		{Key{Decode, "8K", 64}, 8192, RequestsQueued, 1217.8, 4940, 36464, 29.9, 32},
		{Key{Decode, "32K", 128}, 32768, OverCapacity, nan(), nan(), -1, nan(), nan()},
		{Key{Decode, "512K", 2}, 524288, Valid, 240.9, 1798, 7223, 30, 1.9},
		{Key{Decode, "1019K", 2}, 1044416, Valid, 229.8, 4257, 6893, 30, 2.0},
	}
	for _, tt := range tests {
		c, ok := m.Find(tt.key)
		if !ok {
			t.Errorf("%s: missing", tt.key)
			continue
		}
		if c.ContextTokens != tt.tokens || c.Status != tt.status || !close(c.TotalTokS, tt.totalTokS, 0) ||
			!close(c.TTFTms, tt.ttftMS, 0) || c.OutputTokens != tt.outputTokens ||
			!close(c.MeasuredS, tt.measuredS, 0) || !close(c.AvgActive, tt.avgActv, 0) {
			t.Errorf("%s: got %+v, want tokens %d status %s total %v ttft %v output %d measured %v active %v",
				tt.key, *c, tt.tokens, tt.status, tt.totalTokS, tt.ttftMS, tt.outputTokens, tt.measuredS, tt.avgActv)
		}
	}
}

func TestParseTextSeedInfo(t *testing.T) {
	m := loadSeed(t)
	want := Info{Model: "nvidia/GLM-5.3-Flash-NVFP4", GPU: "RTX PRO 6000 Blackwell Server Edition", GPUCount: 4,
		Engine: "vllm", EngineVersion: "0.32.1rc1.dev96+g8c60cf07b", Quantization: "NVFP4",
		BenchTool: "llm-inference-bench v0.8.0", DurationS: 30, MaxOutput: 4096}
	got := m.Info
	got.LaunchCommand = ""
	if got != want {
		t.Errorf("Info:\ngot  %+v\nwant %+v", got, want)
	}
	cmd := m.Info.LaunchCommand
	if !strings.HasPrefix(cmd, "env VLLM_USE_V2_MODEL_RUNNER=1 ") ||
		!strings.HasSuffix(cmd, `"num_speculative_tokens":7,"kv_cache_dtype":"auto"}'`) {
		t.Errorf("LaunchCommand: got %q, want the env ... vllm serve ... line without the glued Prefill", cmd)
	}
	if got := LaunchMaxModelLen(cmd); got != 1048576 {
		t.Errorf("LaunchMaxModelLen: got %d, want 1048576", got)
	}
}

// page builds a small page in the seed's shape around table rows.
func page(rows ...string) string {
	return "Speed test matrix\nRun\n- Max output\n- 4,096 tokens\nLaunch command\n" +
		"vllm serve m --max-model-len 1048576Prefill\n" +
		"prompt tok/s by context length8K context12K682 ms TTFT\n" +
		"All measurements\n" +
		"Latencies are medians.| Phase | Context | Requests at once | Status | Total tok/s | Per request tok/s | TTFT | Time between tokens | Average active requests | Completed requests | Output tokens | Measured for |\n" +
		"|---|---|---|---|---|---|---|---|---|---|---|---|\n" +
		strings.Join(rows, "\n") + "\nRequests queued: ..."
}

const (
	rowPrefill = "| Prefill | 8K | 1 | Valid | 12K | — | 682 ms | — | — | 1 | — | — |"
	rowDecode  = "| Sustained decode | 8K | 1 | Valid | 179.7 | 184.7 | 746 ms | 5.4 ms | 1.0 | 1 | 5,391 | 30.0 s |"
)

func TestParseTextSmall(t *testing.T) {
	m, err := ParseText(strings.NewReader(page(rowPrefill, rowDecode, strings.Replace(rowDecode, "| 8K |", "| 1019K |", 1))), "p.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Prefill) != 1 || len(m.Decode) != 2 || m.Info.MaxOutput != 4096 || m.Info.LaunchCommand != "vllm serve m --max-model-len 1048576" {
		t.Fatalf("got %+v", m)
	}
	if got := m.Decode[1].ContextTokens; got != 1044416 {
		t.Errorf("1019K tokens: got %d, want 1044416", got)
	}
	// CRLF line ends and a launch command on its own line give the same result.
	crlf := strings.ReplaceAll(strings.Replace(page(rowPrefill), "1048576Prefill", "1048576\nPrefill", 1), "\n", "\r\n")
	m2, err := ParseText(strings.NewReader(crlf), "p.txt")
	if err != nil {
		t.Fatal(err)
	}
	if m2.Info.LaunchCommand != "vllm serve m --max-model-len 1048576" || len(m2.Prefill) != 1 {
		t.Errorf("CRLF page: got %+v", m2)
	}
}

func TestParseTextErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // substring of the error
	}{
		{"empty", "", "p.txt: no measurements table"},
		{"no rows", page(), "p.txt: an empty measurements table"},
		{"bad status", page(strings.Replace(rowDecode, "Valid", "Great", 1)), `p.txt:11:Status: unknown status "Great"`},
		{"bad phase", page(strings.Replace(rowDecode, "Sustained decode", "Cooldown", 1)), `p.txt:11:Phase: phase "Cooldown": want Prefill or Sustained decode`},
		{"bad context", page(strings.Replace(rowDecode, "| 8K |", "| big |", 1)), `p.txt:11:Context: context "big"`},
		{"bad concurrency", page(strings.Replace(rowDecode, "| 1 | Valid", "| 0 | Valid", 1)), `p.txt:11:Requests at once: concurrency "0": want a whole number >= 1`},
		{"bad ttft", page(strings.Replace(rowDecode, "746 ms", "746 fortnights", 1)), `p.txt:11:TTFT: duration "746 fortnights": want a duration such as 682 ms`},
		{"bad total", page(strings.Replace(rowDecode, "179.7", "lots", 1)), `p.txt:11:Total tok/s: number "lots"`},
		{"bad count", page(strings.Replace(rowDecode, "5,391", "5.5", 1)), `p.txt:11:Output tokens: count "5.5"`},
		{"short row", page("| Prefill | 8K | 1 |"), "p.txt:11: 3 cells: want 12 cells like the table header"},
		{"duplicate", page(rowDecode, rowDecode), "p.txt:12: second row for decode 8K x 1: want one row per cell (first at line 11)"},
		{"bad max output", strings.Replace(page(rowDecode), "4,096 tokens", "many tokens", 1), `p.txt:4:Max output: count "many"`},
		{"missing column", "| Phase | Context | Status |\n|---|---|---|\n| Prefill | 8K | Valid |", "p.txt:1: table header without a concurrency column"},
	}
	for _, tt := range tests {
		_, err := ParseText(strings.NewReader(tt.in), "p.txt")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want it to contain %q", tt.name, err, tt.want)
		}
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("%s: got %T, want a *ParseError", tt.name, err)
		}
	}
}

func TestParseTextLongLine(t *testing.T) {
	in := "Speed test matrix\n" + strings.Repeat("x", maxLineBytes+1) + "\n"
	_, err := ParseText(strings.NewReader(in), "p.txt")
	if err == nil || !strings.Contains(err.Error(), "p.txt:2: want lines shorter than") {
		t.Errorf("got %v, want a line-length error at line 2", err)
	}
}
