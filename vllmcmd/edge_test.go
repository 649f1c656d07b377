package vllmcmd

import (
	"strings"
	"testing"
)

// TestParseRefusesInvalidUTF8: a word that is not UTF-8 is an error naming it; it used to be read
// and then written back by Format as U+FFFD (in --speculative-config's JSON), another model name
// (found by FuzzParse).
func TestParseRefusesInvalidUTF8(t *testing.T) {
	_, err := Parse([]string{"vllm", "serve", "m", "--speculative-model", "\xf90"})
	if err == nil || !strings.Contains(err.Error(), `argument 5 "\xf90": not valid UTF-8`) {
		t.Errorf("err = %v", err)
	}
	if _, err := Parse([]string{"vllm", "serve", "m", "--served-model-name", "modèle"}); err != nil {
		t.Errorf("valid UTF-8 refused: %v", err)
	}
}

// TestFormatFlagLikeModel: a model named like a flag ("--", "-x", given as --model=NAME) is
// written as --model=NAME, so that Format reads back to it (it was written "--model --", which
// Parse refuses, and "vllm serve -x", a flag; found by FuzzParse).
func TestFormatFlagLikeModel(t *testing.T) {
	for _, m := range []string{"--", "-x", "--model"} {
		r, err := Parse([]string{"vllm", "serve", "--model=" + m})
		if err != nil {
			t.Fatalf("--model=%s: %v", m, err)
		}
		back, err := Parse(strings.Fields(Format(r.Model, r.Args)))
		if err != nil || back.Model != m {
			t.Errorf("model %q: Format %q reads back as %v, %v", m, Format(r.Model, r.Args), back, err)
		}
	}
}

// TestUnknownFlagsRefused: a flag vllm serve does not take is refused, as vLLM refuses
// unrecognized arguments, naming the flag a near miss spells; a command without one passes.
func TestUnknownFlagsRefused(t *testing.T) {
	for _, c := range []struct{ cmd, want string }{
		{"vllm serve m --tensor-paralel-size 2", "--tensor-paralel-size 2 (did you mean --tensor-parallel-size?)"},
		{"vllm serve m --max_num_seq 8", "did you mean --max-num-seqs?"},
		{"vllm serve m --enable-prefix-cachng", "did you mean --enable-prefix-caching?"},
		{"vllm serve m --no-enable-prefix-cachng", "did you mean --no-enable-prefix-caching?"},
		{"vllm serve m --gpu-memory-utilisation=0.9", "did you mean --gpu-memory-utilization?"},
		{"vllm serve m --enable-lora", "unrecognized arguments: --enable-lora: vllm serve refuses them; servesim knows"},
		{"vllm serve m extra-word", "unrecognized arguments: extra-word"},
	} {
		words, err := Split(c.cmd)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Parse(words)
		if err != nil {
			t.Fatalf("%s: %v", c.cmd, err)
		}
		if err := r.UnknownError(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.cmd, err, c.want)
		}
	}
	r, err := Parse([]string{"vllm", "serve", "m", "--tensor-parallel-size", "2", "--host", "0.0.0.0"})
	if err != nil || r.UnknownError() != nil {
		t.Errorf("a command of known flags: %v, %v", err, r.UnknownError())
	}
	if s := Suggest("--frobnicate"); s != "" {
		t.Errorf("Suggest(--frobnicate) = %q, want none", s)
	}
}
