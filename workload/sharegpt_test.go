package workload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharegptFile is a small ShareGPT file in the public layout (id, conversations with from/value),
// with the cases vLLM's sampler treats specially.
const sharegptFile = `[
 {"id": "a", "conversations": [{"from": "human", "value": "What is the capital of France? Answer in one word."}, {"from": "gpt", "value": "Paris. It has been the capital since the tenth century, with short interruptions."}]},
 {"id": "one-turn", "conversations": [{"from": "human", "value": "hello"}]},
 {"id": "no-conversations"},
 {"id": "short", "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "Hello! How can I help you today?"}]},
 {"id": "short-reply", "conversations": [{"from": "human", "value": "Say OK and nothing else, please."}, {"from": "gpt", "value": "OK"}]},
 {"id": "counted", "conversations": [{"from": "human", "value": "x", "num_tokens": 900}, {"from": "gpt", "value": "y", "num_tokens": 1200}]},
 {"id": "three", "conversations": [{"from": "system", "value": "Be brief; answer the user's question in a sentence."}, {"from": "human", "value": "Why is the sky blue? Explain it briefly, please."}, {"from": "gpt", "value": "no"}]},
 {"id": "ünï", "conversations": [{"from": "human", "value": "ééééééééééééééééé"}, {"from": "gpt", "value": "ñññññññññññññññññññ"}]}
]`

func TestParseShareGPT(t *testing.T) {
	pairs, err := ParseShareGPT(strings.NewReader(sharegptFile), "sg.json", ShareGPTOptions{SpecialTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Entries with fewer than two turns are dropped; the first two turns are taken whoever speaks
	// them; tokens = ceil(code points / 4) + 1 special token, or num_tokens when given.
	want := []ShareGPTPair{
		{PromptTokens: 14, ReplyTokens: 22, Estimated: true}, // 51 and 83 characters
		{PromptTokens: 2, ReplyTokens: 9, Estimated: true},
		{PromptTokens: 9, ReplyTokens: 2, Estimated: true},
		{PromptTokens: 900, ReplyTokens: 1200},
		{PromptTokens: 14, ReplyTokens: 13, Estimated: true},
		{PromptTokens: 6, ReplyTokens: 6, Estimated: true}, // 17 and 19 code points, not bytes
	}
	if fmt.Sprint(pairs) != fmt.Sprint(want) {
		t.Errorf("pairs\n got %v\nwant %v", pairs, want)
	}
	for _, c := range []struct{ in, want string }{
		{``, "empty file"},
		{`{"conversations": []}`, "want a JSON list"},
		{`[{"conversations": [{"from": "human"}, {"value": "x"}]}]`, `entry 0, turn 0: no "value"`},
		{`[{"conversations": "abc"}]`, "entry 0"},
		{`[{"conversations": [{"value": "a"}, {"value": "b", "num_tokens": -3}]}]`, "num_tokens -3"},
		{`[{"conversations": [{"value": "a"}]}]`, "no conversation with at least two turns"},
		{`[] []`, "data after the list"},
		{`[{"conversations": [{"value": "a"}, {"value": "b"}]}`, "end of the list"},
	} {
		if _, err := ParseShareGPT(strings.NewReader(c.in), "f.json", ShareGPTOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error mentioning %q", c.in, err, c.want)
		}
	}
	// Size limit: refused with a clear error, whatever the content.
	_, err = ParseShareGPT(strings.NewReader(sharegptFile), "big.json", ShareGPTOptions{MaxBytes: 100})
	if !errors.Is(err, ErrTooLarge) && (err == nil || !strings.Contains(err.Error(), "larger than 100 bytes")) {
		t.Errorf("size limit: %v", err)
	}
}

func TestSampleShareGPT(t *testing.T) {
	pairs, err := ParseShareGPT(strings.NewReader(sharegptFile), "sg.json", ShareGPTOptions{SpecialTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	// vLLM's filters: prompt 4..1024 tokens, prompt + output <= 2048, output >= 4 unless fixed.
	// Kept: a (14/22), three (14/13), ünï (6/6); short (prompt 2), short-reply (output 2) and
	// counted (2,100 in all) are dropped.
	got, notes, err := SampleShareGPT(pairs, ShareGPTSample{N: 3, DisableShuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[{14 0 22 1} {14 0 13 5} {6 0 6 6}]"; fmt.Sprint(got) != want {
		t.Errorf("kept %v, want %s", got, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "estimated from characters") {
		t.Errorf("notes %q", notes)
	}
	// A fixed output length lifts the output filter (short-reply passes, and counted: 900 + 1,100
	// = 2,000 <= 2,048) but not the total (1,200 would put counted at 2,100).
	got, _, _ = SampleShareGPT(pairs, ShareGPTSample{N: 10, DisableShuffle: true, OutputLen: 1100, NoOversample: true})
	if want := "[{14 0 1100 1} {9 0 1100 3} {900 0 1100 4} {14 0 1100 5} {6 0 1100 6}]"; fmt.Sprint(got) != want {
		t.Errorf("fixed output: kept %v, want %s", got, want)
	}
	got, _, _ = SampleShareGPT(pairs, ShareGPTSample{N: 10, DisableShuffle: true, OutputLen: 1200, NoOversample: true})
	if want := "[{14 0 1200 1} {9 0 1200 3} {14 0 1200 5} {6 0 1200 6}]"; fmt.Sprint(got) != want {
		t.Errorf("fixed output: kept %v, want %s", got, want)
	}
	// Top-up: duplicates of kept prompts (same group: prefix-cache hits), seeded.
	got, notes, _ = SampleShareGPT(pairs, ShareGPTSample{N: 50, Seed: 3})
	if len(got) != 50 || !strings.Contains(strings.Join(notes, "\n"), "topped up to 50") {
		t.Fatalf("top-up: %d prompts, notes %q", len(got), notes)
	}
	groups := map[int]bool{}
	for _, p := range got {
		groups[p.Group] = true
	}
	if len(groups) != 3 {
		t.Errorf("top-up: %d distinct prompts, want the 3 kept", len(groups))
	}
	again, _, _ := SampleShareGPT(pairs, ShareGPTSample{N: 50, Seed: 3})
	if fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("the same seed samples differently")
	}
	if _, _, err := SampleShareGPT(pairs[1:2], ShareGPTSample{N: 5}); err == nil || !strings.Contains(err.Error(), "passes vLLM's filters") {
		t.Errorf("nothing passes: %v", err)
	}
}

func TestShareGPTWorkload(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sg.json"), []byte(sharegptFile), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := filepath.Join(dir, "w.toml")
	os.WriteFile(wl, []byte("kind = \"vllm-bench\"\n[vllm_bench]\ndataset = \"sharegpt\"\ndataset_path = \"sg.json\"\nnum_prompts = 12\nrequest_rate = 2.0\n"), 0o644)
	s, err := Load(wl)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := s.DatasetNotes()
	if err != nil || len(notes) != 2 {
		t.Errorf("notes %q, %v: want the estimate and the top-up", notes, err)
	}
	if got := s.MaxRequestTokens(); got != 36 {
		t.Errorf("MaxRequestTokens %d, want 36 (prompt a: 14 + 22)", got)
	}
	srv, _ := seedServer(t)
	m, err := Run(srv, s, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.Completed != 12 || m.Kind != KindVLLMBench {
		t.Errorf("%d completed (%s)", m.Completed, m.Kind)
	}
}

func FuzzParseShareGPT(f *testing.F) {
	f.Add([]byte(sharegptFile))
	f.Add([]byte(`[{"conversations": [{"value": "a", "num_tokens": 5}, {"value": "b"}]}]`))
	f.Add([]byte(`[1, "x", null, {"conversations": null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		pairs, err := ParseShareGPT(strings.NewReader(string(data)), "fuzz.json", ShareGPTOptions{MaxBytes: 1 << 12})
		if err != nil {
			return
		}
		if len(pairs) == 0 {
			t.Fatalf("no pairs and no error")
		}
		for _, p := range pairs {
			if p.PromptTokens < 0 || p.ReplyTokens < 0 || p.PromptTokens > maxTokens+1 || p.ReplyTokens > maxTokens+1 {
				t.Fatalf("bad counts %+v", p)
			}
		}
		got, _, err := SampleShareGPT(pairs, ShareGPTSample{N: 7, Seed: 1})
		if err == nil && len(got) != 7 {
			t.Fatalf("sampled %d, want 7", len(got))
		}
	})
}
