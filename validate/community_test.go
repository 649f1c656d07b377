package validate

import (
	"math"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/validate/corpus"
	"github.com/servesim/servesim/workload"
)

// TestCommunityRows maps the RTX PRO 6000 community file (the corpus README, section 1.6): at least 90 % of its rows
// are expressed, the rest with a reason; its MTP rows run the checkpoint's own MTP layer, its
// DFlash rows the built-in drafter, its DCP rows decode context parallel, its card variants their
// own GPUs, and its server facts are read from the notes.
func TestCommunityRows(t *testing.T) {
	rows := rtxRows(t)
	cs := Map(rows, nil)
	by := map[string]*Case{}
	n := 0
	for _, c := range cs {
		by[c.ID] = c
		if c.Expressed() {
			n++
		} else if c.Reason == "" || c.ReasonClass == "" {
			t.Errorf("%s: not expressed without a reason", c.ID)
		}
	}
	if n*10 < len(cs)*9 {
		t.Errorf("%d of %d rows expressed, want at least 90 %%", n, len(cs))
	}
	mtp := by["rtx6kpro-glm53f-r21-mtp3-tp4dcp4-ctx0-c8"]
	if mtp == nil || !mtp.Expressed() || mtp.Args.Speculative == nil || mtp.Args.Speculative.Method != "mtp" || mtp.Args.Speculative.NumTokens != 3 ||
		mtp.Args.DecodeContextParallel == nil || *mtp.Args.DecodeContextParallel != 4 || mtp.Model.MTPLayers != 1 {
		t.Fatalf("mtp dcp4 row: %+v", mtp)
	}
	if mtp.Spec.Kind != workload.KindLLMBenchCell || mtp.Spec.Cell.Concurrency != 8 || mtp.Spec.Cell.Context != "78" || mtp.Args.Series != communitySeries {
		t.Errorf("mtp row workload %+v, series %q", mtp.Spec.Cell, mtp.Args.Series)
	}
	df := by["rtx6kpro-glm53f-r21-dflash7-tp4dcp1-ctx0-c1"]
	if df == nil || !df.Expressed() || df.Drafter == nil || df.Args.Speculative.Method != "dflash" || df.Args.Speculative.NumTokens != 7 {
		t.Fatalf("dflash row: %+v", df)
	}
	if math.Abs(df.facts.Steps-103.3) > 0.1 || math.Abs(df.facts.Accept*df.facts.Steps-df.Row.Measured.OutputTokS) > 1e-6 {
		t.Errorf("dflash row facts %+v (verifier_steps_s in the notes)", df.facts)
	}
	// The builds group a separate drafter's KV-cache layers by the target's layer count; the MTP
	// layer is the target's own and vLLM's rule stands.
	if !df.Args.KVGroupsByTarget || mtp.Args.KVGroupsByTarget {
		t.Errorf("KV groups by the target's layers: dflash %v, mtp %v; want true, false", df.Args.KVGroupsByTarget, mtp.Args.KVGroupsByTarget)
	}
	f := by["rtx6kpro-glm53f-r21-mtp3-tp4dcp1-facts"]
	if f == nil || !f.Expressed() || f.facts.KVTokens != 3840000 || f.facts.AcceptC1 != 2.55 || f.facts.AcceptC8 != 2.44 || len(f.factRuns) != 2 {
		t.Errorf("facts row: %+v, runs %v", f.facts, f.factRuns)
	}
	oc := by["rtx6kpro-glm53f-r7-dflash7-tp4dcp1-vram6000-ctx0-c1"]
	if oc == nil || !strings.Contains(oc.GPU.Name, "+mem6000") || math.Abs(oc.GPU.BandwidthGBps-1792*34.0/28) > 1e-9 {
		t.Errorf("+6000 row GPU %s %.0f GB/s", oc.GPU.Name, oc.GPU.BandwidthGBps)
	}
	for _, c := range cs {
		if c.Row.GPU == "rtx-pro-6000-maxq-vram6000" && c.Expressed() && !strings.HasPrefix(c.GPU.Name, "RTX-PRO-6000-Max-Q") {
			t.Errorf("%s: Max-Q row on %s", c.ID, c.GPU.Name)
		}
		if strings.HasPrefix(c.Row.KVDType, "nvfp4") && c.Expressed() && (c.Args.KVCacheDType == nil || *c.Args.KVCacheDType != "nvfp4") {
			t.Errorf("%s: kv_dtype %q not mapped to nvfp4", c.ID, c.Row.KVDType)
		}
	}
	if wf, err := weightFormat("nvfp4 (modelopt_mixed; routed experts W4A4)"); err != nil || wf != arch.NVFP4 {
		t.Errorf("free-text weight format: %v %v", wf, err)
	}
}

// TestCommunityFitSources: the community rows are sources of a multi-source fit, server facts
// (no workload of their own) and decode windows (one prompt: the same-prompt routing) included.
func TestCommunityFitSources(t *testing.T) {
	rows := rtxRows(t)
	facts := func(c *Case) bool {
		return c.Row.WorkloadKind == "server-facts" || c.Row.WorkloadKind == "decode-window"
	}
	srcs := FitSources(rows, facts, FitOptions{MaxJobs: 12, MaxRequests: 50})
	if len(srcs) != 1 || len(srcs[0].Jobs) != 12 {
		t.Fatalf("sources %v", srcs)
	}
	byID := map[string]*Case{}
	kvRows := 0
	for _, c := range Map(rows, nil) {
		if !facts(c) {
			continue
		}
		byID[c.ID] = c
		if c.Expressed() && (usable(c.facts.KVTokens) || usable(c.facts.KVLogicalTokens)) {
			kvRows++
		}
	}
	kvJobs := 0
	for _, j := range srcs[0].Jobs {
		if j.KVCapacity {
			kvJobs++
		}
		if c := byID[j.Label]; c != nil && c.Row.WorkloadKind == "server-facts" && len(c.factRuns) == 0 {
			// KV capacity alone: a layout, no decode cell.
			continue
		}
		if !j.SamePrompt {
			t.Errorf("%s: a decode cell's job without the same-prompt routing", j.Label)
		}
	}
	// The cap keeps every row that publishes KV capacity (the only ones that pin the memory
	// reserves).
	if kvRows == 0 || kvJobs != kvRows {
		t.Errorf("%d jobs scored on KV capacity, want every one of the %d rows that publish it", kvJobs, kvRows)
	}
}

// rtxRows reads the shipped corpus's RTX PRO 6000 community file.
func rtxRows(t *testing.T) []Row {
	t.Helper()
	f, err := corpus.Open("rtx6kpro-glm53flash.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ReadCSV(f, "corpus/rtx6kpro-glm53flash.csv")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// A row that states its KV cache in bytes ("explicit FP8 KV 33,554,432,000 bytes (31.25 GiB) per
// GPU") runs with that kv_cache_memory_bytes.
func TestExplicitKVBytes(t *testing.T) {
	rows, err := ReadFile("corpus/rtx6kpro-glm53flash.csv")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range Map(rows, nil) {
		if !strings.Contains(c.Row.EngineFlags, "explicit FP8 KV") {
			if c.Args.KVCacheMemoryBytes != nil {
				t.Errorf("%s: kv_cache_memory_bytes %d without an explicit size", c.ID, *c.Args.KVCacheMemoryBytes)
			}
			continue
		}
		n++
		if b := c.Args.KVCacheMemoryBytes; b == nil || *b != 33554432000 {
			t.Errorf("%s: kv_cache_memory_bytes %v, want 33554432000", c.ID, b)
		}
	}
	if n == 0 {
		t.Fatal("no row states its KV bytes")
	}
}
