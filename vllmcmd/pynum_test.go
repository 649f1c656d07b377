package vllmcmd

import (
	"math"
	"strings"
	"testing"
)

// TestPythonNumbers: numbers read as Python's int() and float() read them (vLLM's flags are
// argparse type=int / type=float): underscores between digits, a sign and surrounding whitespace
// taken; hexadecimal, Go-only literal forms and misplaced underscores refused (and non-ASCII
// digits, which Python takes).
func TestPythonNumbers(t *testing.T) {
	ints := map[string]int{"1_000": 1000, " 42 ": 42, "+7": 7, "007": 7, "-3": -3, "1_2_3": 123}
	for s, want := range ints {
		if n, ok := pyInt(s); !ok || n != want {
			t.Errorf("int(%q) = %d, %v; want %d", s, n, ok, want)
		}
	}
	for _, s := range []string{"0x10", "0b1", "0o7", "1__0", "_1", "1_", "1.0", "1e3", "", " ", "9223372036854775808", "1 000"} {
		if n, ok := pyInt(s); ok {
			t.Errorf("int(%q) = %d; Python refuses it", s, n)
		}
	}
	floats := map[string]float64{"0.5": 0.5, "1e-1": 0.1, "1_000.5": 1000.5, ".5": 0.5, "5.": 5, "1e1_0": 1e10, " 2 ": 2, "+1E+2": 100,
		"inf": math.Inf(1), "-Infinity": math.Inf(-1), "1e400": math.Inf(1), "1e-400": 0}
	for s, want := range floats {
		if f, ok := pyFloat(s); !ok || f != want {
			t.Errorf("float(%q) = %v, %v; want %v", s, f, ok, want)
		}
	}
	if f, ok := pyFloat("NaN"); !ok || !math.IsNaN(f) {
		t.Errorf("float(\"NaN\") = %v, %v", f, ok)
	}
	for _, s := range []string{"0x1p-1", "0x10", "1__0", "1_.5", "1._5", "_1", ".", "e5", "1e", "1.5f", "∞", "infinit", "1e_5", "", "1,5"} {
		if f, ok := pyFloat(s); ok {
			t.Errorf("float(%q) = %v; Python refuses it", s, f)
		}
	}
}

// TestFlagsAsVLLMReadsThem: the flags' values are read as vLLM reads them, and the flags that
// change memory are simulated or refused, never ignored.
func TestFlagsAsVLLMReadsThem(t *testing.T) {
	ok := []struct {
		line  string
		check func(r *Result) bool
	}{
		{"vllm serve m --max-num-seqs 1_000", func(r *Result) bool { return *r.Args.MaxNumSeqs == 1000 }},
		{"vllm serve m --gpu-memory-utilization 9_0e-2", func(r *Result) bool { return *r.Args.GPUMemoryUtilization == 0.9 }},
		{"vllm serve m --gpu-memory-utilization .5", func(r *Result) bool { return *r.Args.GPUMemoryUtilization == 0.5 }},
		{"vllm serve m --max-num-batched-tokens 16k", func(r *Result) bool { return *r.Args.MaxNumBatchedTokens == 16000 }},
		{"vllm serve m --max-model-len 1_024", func(r *Result) bool { return *r.Args.MaxModelLen == 1024 }},
		{"vllm serve m --dtype half", func(r *Result) bool { return strings.Contains(strings.Join(r.Notes, " "), "16-bit") }},
	}
	for _, c := range ok {
		r, err := Parse(mustSplit(t, c.line))
		if err != nil || !c.check(r) {
			t.Errorf("%s: %v, args %s", c.line, err, comparable(r.Args))
		}
	}
	bad := map[string]string{
		"vllm serve m --gpu-memory-utilization 0x1p-1": `"0x1p-1": want a number in (0, 1]`,
		"vllm serve m --gpu-memory-utilization nan":    `"nan": want a number in (0, 1]`,
		"vllm serve m --gpu-memory-utilization inf":    "inf: want a number in (0, 1]",
		"vllm serve m --max-num-seqs 0x10":             `"0x10": want a positive integer`,
		"vllm serve m --max-num-seqs 1__0":             `"1__0": want a positive integer`,
		"vllm serve m --max-num-batched-tokens 8e3":    `"8e3": want a positive integer`,
		"vllm serve m --dtype float32":                 "32-bit weights and activations are not simulated",
		"vllm serve m --dtype=float":                   "32-bit weights and activations are not simulated",
		"vllm serve m --dtype fp8":                     `--dtype "fp8": want auto, half, float16, bfloat16, float or float32`,
		"vllm serve m --hf-config-path /x":             "--hf-config-path /x: vLLM would read the model's configuration from there",
	}
	for line, want := range bad {
		_, err := Parse(mustSplit(t, line))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}

// TestKVCacheMemoryBytesFlag: --kv-cache-memory-bytes is read (human_readable_int, as vLLM reads
// it) into the flags, and written back by Format.
func TestKVCacheMemoryBytesFlag(t *testing.T) {
	for line, want := range map[string]int{"vllm serve m --kv-cache-memory-bytes 4G": 4 << 30, "vllm serve m --kv_cache_memory_bytes=8_000_000_000": 8e9, "vllm serve m --kv-cache-memory-bytes 2.5g": 25e8} {
		r, err := Parse(mustSplit(t, line))
		if err != nil || r.Args.KVCacheMemoryBytes == nil || *r.Args.KVCacheMemoryBytes != want {
			t.Errorf("%s: %v, args %s", line, err, comparable(r.Args))
			continue
		}
		back, err := Parse(mustSplit(t, Format("m", r.Args)))
		if err != nil || comparable(back.Args) != comparable(r.Args) {
			t.Errorf("%s: Format then Parse gives %v, %s", line, err, comparable(back.Args))
		}
	}
	for _, v := range []string{"0", "-1", "1e9", "0x10", "inf"} {
		if _, err := Parse([]string{"serve", "m", "--kv-cache-memory-bytes", v}); err == nil {
			t.Errorf("--kv-cache-memory-bytes %s accepted", v)
		}
	}
}
