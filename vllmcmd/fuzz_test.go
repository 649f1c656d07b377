package vllmcmd

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// shellQuote quotes a word so that Split reads it back unchanged.
func shellQuote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

func addSeeds(f *testing.F) {
	b, err := os.ReadFile("testdata/seed_cmd.txt")
	if err != nil {
		f.Fatal(err)
	}
	seed := string(b)
	for _, s := range []string{
		seed,
		strings.ReplaceAll(seed, " --", " \\\n  --"),
		strings.ReplaceAll(seed, "'", `"`),
		seed + " 2>&1 | tee log &",
		"python3 -m vllm.entrypoints.openai.api_server --model m -tp=2 --max_model_len=128K --no-enable-prefix-caching",
		`vllm serve m --compilation-config '{"cudagraph_capture_sizes":[1,2,4]}' --speculative-model [ngram] --num-speculative-tokens 3`,
		`A=1 env -u B vllm serve m --served-model-name a b --enable-chunked-prefill=false --gpu-memory-utilization 0.5 ${X} "$HOME"`,
		`vllm serve m --speculative-config '{"method":"dflash",}'`,
		"vllm serve m --max-model-len 25.6k --max-num-seqs",
	} {
		f.Add(s)
	}
}

// FuzzParse checks that no input makes Split or Parse panic, that a line without quotes,
// backslashes, comments or $ splits at blanks, and that Split reads back the quoted form of its
// own output.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, line string) {
		words, err := Split(line)
		if err != nil {
			return
		}
		if !strings.ContainsAny(line, `'"\\#$`) {
			plain := strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t\n\r", r) })
			if len(plain) == 0 {
				plain = nil
			}
			if !slices.Equal(words, plain) {
				t.Fatalf("Split(%q) = %q, want the blank-separated fields %q", line, words, plain)
			}
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = shellQuote(w)
		}
		again, err := Split(strings.Join(quoted, " "))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("Split of the quoted words = %q, %v; want %q", again, err, words)
		}
		r, err := Parse(words)
		if err == nil && r.Args.Name != "vllm" {
			t.Fatalf("Args.Name = %q, want vllm", r.Args.Name)
		}
		if err == nil && r.Model != "" {
			// Format writes what Parse reads back.
			back, err := Parse(mustSplit(t, Format(r.Model, r.Args)))
			if err != nil {
				t.Fatalf("Parse(Format(%q)): %v", line, err)
			}
			if got, want := comparable(back.Args), comparable(r.Args); got != want {
				t.Fatalf("Format round trip of %q:\n got %s\nwant %s", line, got, want)
			}
		}
	})
}
