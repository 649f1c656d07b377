package validate

import (
	"math"
	"reflect"
	"testing"
)

// TestStageSpecPromptPool: inference-perf's shared_prefix data is a fixed pool of groups x
// prompts-per-group prompts sent in turn, group by group; without a pool every prompt is new
// beyond its group's system prompt.
func TestStageSpecPromptPool(t *testing.T) {
	lengths := [3]int{600, 50, 100}
	for n := 0; n < 20; n++ {
		a, b := stageSpec(n, lengths, 2, 3), stageSpec(n%6, lengths, 2, 3)
		if a.PromptID != b.PromptID || a.PrefixID != b.PrefixID || a.PromptTokens != 600 || a.PrefixTokens != 100 || a.MaxTokens != 50 {
			t.Errorf("request %d: %+v, want the content of request %d %+v", n, a, n%6, b)
		}
		if g, want := a.PrefixID, stageSpec(n%6/3*3, lengths, 2, 3).PrefixID; g != want {
			t.Errorf("request %d: prefix %x, want group %d's %x", n, g, n%6/3, want)
		}
		u := stageSpec(n, lengths, 2, 0)
		if u.PromptID != stageSpec(n, lengths, 1, 0).PromptID || u.PrefixID != stageSpec(n%2, lengths, 2, 0).PrefixID {
			t.Errorf("request %d without a pool: %+v", n, u)
		}
		for m := 0; m < n; m++ {
			if stageSpec(m, lengths, 2, 0).PromptID == u.PromptID {
				t.Errorf("requests %d and %d share a prompt without a pool", m, n)
			}
		}
	}
	if a, b := stageSpec(0, lengths, 2, 3), stageSpec(3, lengths, 2, 3); a.PrefixID == b.PrefixID || a.PromptID == b.PromptID {
		t.Errorf("prompts 0 and 3 are of different groups: %+v %+v", a, b)
	}
}

// TestStagePromptPoolCaches: the mapped inference-perf rows carry the pool from the notes, and
// a run whose prompts repeat prefills only what the prefix cache lacks, so its first tokens come
// sooner than with every question new, and the decode steps, without prefill beside them, are no
// slower.
func TestStagePromptPoolCaches(t *testing.T) {
	cases := Map(smallExcerpt(t, 200), nil)
	var c *Case
	for _, x := range cases {
		if x.ID == "isim-llama2-7b-tp1-codegen-stage0" {
			c = x
		}
	}
	if c == nil || !c.Expressed() {
		t.Fatalf("codegen stage 0 not mapped: %+v", c)
	}
	if c.stageGroups != 10 || c.stagePerGroup != 10 {
		t.Fatalf("groups %d x %d, want 10 x 10 (results/config.yaml)", c.stageGroups, c.stagePerGroup)
	}
	srv, _, err := buildServer(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	stages := []Stage{{RatePerS: 10, Requests: 200}}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	var ttft, tpot [2]float64
	for i, pool := range []int{0, c.stagePerGroup} {
		st, err := runStages(srv, stages, c.stageLengths, c.stageGroups, pool, 1)
		if err != nil {
			t.Fatal(err)
		}
		if st[0].completed != 200 {
			t.Fatalf("pool %d: %d of 200 completed", pool, st[0].completed)
		}
		ttft[i], tpot[i] = mean(st[0].ttftMS), mean(st[0].tpotMS)
	}
	t.Logf("TTFT %.2f vs %.2f ms, TPOT %.3f vs %.3f ms", ttft[1], ttft[0], tpot[1], tpot[0])
	if !(ttft[1] < 0.9*ttft[0]) || !(tpot[1] <= tpot[0]) || math.IsNaN(tpot[1]) {
		t.Errorf("TTFT %.2f ms with the pool vs %.2f without, TPOT %.3f vs %.3f: want cached prompts faster", ttft[1], ttft[0], tpot[1], tpot[0])
	}
}

// TestShortenKeepsStagesLong: a cap scales a constant-rate experiment's stages alike but keeps
// each at least minStageS seconds at its rate (inference-sim's 8 and 20 req/s stages: 480 and
// 1,200 requests, not the cap's 57 and 143), and never more requests than the stage had.
func TestShortenKeepsStagesLong(t *testing.T) {
	c := &Case{Stages: []Stage{{RatePerS: 8, Requests: 4800}, {RatePerS: 20, Requests: 12000}, {RatePerS: 0.5, Requests: 10}}}
	j := &fitJob{job: job{cases: []*Case{c}, label: "x"}}
	if note := j.shorten(200); note == "" {
		t.Fatal("no note: the experiment was not shortened")
	}
	want := []int{480, 1200, 10}
	for i, s := range j.stages {
		if s.Requests != want[i] || s.RatePerS != c.Stages[i].RatePerS {
			t.Errorf("stage %d: %d requests at %g/s, want %d at %g/s", i, s.Requests, s.RatePerS, want[i], c.Stages[i].RatePerS)
		}
	}
	if j.shorten(0); !reflect.DeepEqual(j.stages, c.Stages) {
		t.Errorf("no cap: stages %v, want the measured %v", j.stages, c.Stages)
	}
}
