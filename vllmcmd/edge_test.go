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
