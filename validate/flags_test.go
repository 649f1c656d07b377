package validate

import (
	"strings"
	"testing"
)

// offlineRow is a corpus row of Llama-3.1-8B on one H100, offline, with the given tp, ep, dp, pp,
// max_num_seqs and engine_flags columns ("" for a blank).
func offlineRow(t *testing.T, tp, ep, dp, pp, mns, flags string) *Case {
	t.Helper()
	line := "t1,src,meta-llama/Llama-3.1-8B-Instruct,bf16,auto,h100-sxm,," + tp + "," + ep + "," + dp + "," + pp + ",vllm,0.10.0," + mns + ",,8192,none,0,\"" + flags +
		"\",offline-throughput,fixed,8,inf,1000,1000,100,100,100,1000,,100,100,10,10,1100,,,,1,,,10,,,1100,,40,40,0,,x"
	rows, err := ReadCSV(strings.NewReader(strings.Join(Columns(), ",")+"\n"+line+"\n"), "c.csv")
	if err != nil {
		t.Fatal(err)
	}
	return Map(rows, nil)[0]
}

// TestEngineFlagsReadAsServe: the engine_flags that are `vllm serve` flags or VLLM_ variables are
// read as `vllm serve` reads them. A value vLLM refuses is noted, never dropped silently (nor
// said to be a flag servesim does not know); a valid one is applied unless a column gives the
// setting (then the column's value is kept and the difference noted); an expert-parallel column
// vLLM cannot express is noted. The row's deployment is then checked as every path checks it
// (deploy.Resolve, sim.NewServer): pipeline stages beyond the layers are refused.
func TestEngineFlagsReadAsServe(t *testing.T) {
	garbage := []string{"enforce_eager=banana", "enable_prefix_caching=perhaps", "max_num_seqs=-5", "gpu_memory_utilization=7",
		"num_scheduler_steps=abc", "kv_cache_dtype=fp9", "block_size=x"}
	c := offlineRow(t, "1", "", "", "", "", strings.Join(garbage, ";"))
	if !c.Expressed() {
		t.Fatalf("row with garbage flags: %s", c.Reason)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, g := range garbage {
		if !strings.Contains(notes, `"`+g+`"`) {
			t.Errorf("engine flag %q: no note (notes:\n%s)", g, notes)
		}
	}
	if strings.Contains(notes, "no vLLM flag servesim simulates") {
		t.Errorf("a vLLM flag with a bad value noted as a flag servesim does not know:\n%s", notes)
	}
	if a := c.Args; a.EnforceEager != nil || a.PrefixCaching != nil || a.MaxNumSeqs != nil || a.GPUMemoryUtilization != nil || a.KVCacheDType != nil || a.BlockSize != nil {
		t.Errorf("a refused value was applied: %+v", a)
	}

	c = offlineRow(t, "1", "", "", "", "64", "enforce_eager;max_num_seqs=128;gpu_memory_utilization=0.8;VLLM_ALLOW_LONG_MAX_MODEL_LEN=1;tool_call_parser=kimi_k2")
	a := c.Args
	if a.EnforceEager == nil || !*a.EnforceEager || a.GPUMemoryUtilization == nil || *a.GPUMemoryUtilization != 0.8 || !a.AllowLongMaxModelLen {
		t.Errorf("valid flags not applied: %+v", a)
	}
	notes = strings.Join(c.Notes, "\n")
	if a.MaxNumSeqs == nil || *a.MaxNumSeqs != 64 || !strings.Contains(notes, `"max_num_seqs=128"`) {
		t.Errorf("max_num_seqs column 64 and flag 128: %v, notes:\n%s", intp(a.MaxNumSeqs), notes)
	}
	if !strings.Contains(notes, `"tool_call_parser=kimi_k2": no effect on the simulation`) {
		t.Errorf("a flag without effect not noted so:\n%s", notes)
	}

	c = offlineRow(t, "1", "4", "", "", "", "")
	if notes := strings.Join(c.Notes, "\n"); !strings.Contains(notes, "ep 4: model meta-llama/Llama-3.1-8B-Instruct has no experts") {
		t.Errorf("ep 4 on a dense model: not noted:\n%s", notes)
	}

	c = offlineRow(t, "1", "", "", "1000", "", "")
	if _, _, err := buildServer(c, nil); err == nil || !strings.Contains(err.Error(), "pipeline_parallel_size = 1000: more stages than the 32 layers") {
		t.Errorf("pp 1000 on a 32-layer model: %v", err)
	}
}
