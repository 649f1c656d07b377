package matrix

import (
	"math"
	"testing"
)

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in      string
		want    float64 // NaN for absent
		wantErr bool
	}{
		{"179.7", 179.7, false},
		{"8,174.0", 8174, false},
		{"1,335.7", 1335.7, false},
		{"12K", 12000, false},
		{"13.2K", 13200, false}, // exact: the suffix shifts the point in the text
		{"13.25K", 13250, false},
		{"9.5555K", 9555.5, false},
		{"1.5M", 1.5e6, false},
		{"1,234,567.25", 1234567.25, false},
		{" 42 ", 42, false},
		{"-3.5", -3.5, false},
		{"0", 0, false},
		{"—", math.NaN(), false},
		{"", math.NaN(), false},
		{"-", math.NaN(), false},
		{"12,34", 0, true},
		{"1,2345", 0, true},
		{"1234,567", 0, true},
		{"1.", 0, true},
		{".5", 0, true},
		{"K", 0, true},
		{"1e3", 0, true},
		{"NaN", 0, true},
		{"Inf", 0, true},
		{"0x10", 0, true},
		{"12 ms", 0, true},
		{"1.2.3", 0, true},
		{"--1", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseNumber(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseNumber(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && !close(got, tt.want, 0) { // exact: decimal text parses to the nearest float
			t.Errorf("ParseNumber(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseDurations(t *testing.T) {
	tests := []struct {
		in       string
		wantMS   float64
		wantS    float64
		wantErrs bool
	}{
		{"682 ms", 682, 0.682, false},
		{"5.4 ms", 5.4, 0.0054, false},
		{"1,985 ms", 1985, 1.985, false},
		{"106,315 ms", 106315, 106.315, false},
		{"30.0 s", 30000, 30, false},
		{"29.9 s", 29900, 29.9, false},
		{"682ms", 682, 0.682, false},
		{"—", math.NaN(), math.NaN(), false},
		{"682 min", 0, 0, true},
		{"fast", 0, 0, true},
		{"ms", 0, 0, true},
	}
	for _, tt := range tests {
		ms, errMS := ParseMillis(tt.in)
		s, errS := ParseSeconds(tt.in)
		if (errMS != nil) != tt.wantErrs || (errS != nil) != tt.wantErrs {
			t.Errorf("%q: errors %v, %v, want errors %v", tt.in, errMS, errS, tt.wantErrs)
			continue
		}
		if tt.wantErrs {
			continue
		}
		// Converting units divides or multiplies by 1000: allow a few ulps.
		if !close(ms, tt.wantMS, 1e-9*math.Abs(tt.wantMS)) || !close(s, tt.wantS, 1e-12*math.Max(1, tt.wantS)) {
			t.Errorf("%q: got %v ms, %v s, want %v ms, %v s", tt.in, ms, s, tt.wantMS, tt.wantS)
		}
	}
	// Same unit: no conversion, so exact.
	if got, _ := ParseSeconds("29.9 s"); got != 29.9 {
		t.Errorf("ParseSeconds(29.9 s) = %v, want exactly 29.9", got)
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"1", 1, false},
		{"5,391", 5391, false},
		{"40,011", 40011, false},
		{"12K", 12000, false},
		{"—", -1, false},
		{"1.5", 0, true},
		{"-2", 0, true},
		{"99999999999999999999", 0, true},
	}
	for _, tt := range tests {
		got, err := parseCount(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("parseCount(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestLabelTokens(t *testing.T) {
	const mml, out = 1048576, 4096
	tests := []struct {
		label       string
		phase       Phase
		maxModelLen int
		maxOutput   int
		want        int
	}{
		{"8K", Decode, mml, out, 8192},
		{"512K", Decode, mml, out, 524288},
		{"1019K", Decode, mml, out, 1044416},  // room = 1,048,576 - 4,096 - 64
		{"1019K", Prefill, mml, out, 1044416}, // the scout of the 1019K decode row
		{"1024K", Prefill, mml, out, 1048511}, // prefill-only: 1,048,576 - 1 - 64
		{"1024K", Decode, mml, out, 1044416},  // trimmed to room
		{"1019K", Decode, 0, 0, 1043456},      // no max_model_len: nominal
		{"1024K", Prefill, 0, out, 1048576},
		{"16K", Decode, 20000, 4096, 15840}, // 20,000 - 4,096 - 64: "15K" would name it, but 16K was asked
		{"8192", Decode, mml, out, 8192},
	}
	for _, tt := range tests {
		got, err := LabelTokens(tt.label, tt.phase, tt.maxModelLen, tt.maxOutput)
		if err != nil || got != tt.want {
			t.Errorf("LabelTokens(%q, %s, %d, %d) = %d, %v; want %d", tt.label, tt.phase, tt.maxModelLen, tt.maxOutput, got, err, tt.want)
		}
	}
	if _, err := LabelTokens("big", Decode, mml, out); err == nil {
		t.Errorf("LabelTokens(big): want an error")
	}
}

func TestLaunchMaxModelLen(t *testing.T) {
	tests := []struct {
		cmd  string
		want int
	}{
		{"vllm serve m --max-model-len 1048576 --port 8000", 1048576},
		{"vllm serve m --max-model-len=32768", 32768},
		{"vllm serve m --max_model_len 4096", 4096},
		{"vllm serve m --max-model-len 1M", 1048576},
		{"vllm serve m --max-model-len 32k", 32000},
		{"vllm serve m --max-model-len auto", 0},
		{"vllm serve m --max-model-len", 0},
		{"vllm serve m", 0},
	}
	for _, tt := range tests {
		if got := LaunchMaxModelLen(tt.cmd); got != tt.want {
			t.Errorf("LaunchMaxModelLen(%q) = %d, want %d", tt.cmd, got, tt.want)
		}
	}
}
