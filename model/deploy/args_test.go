package deploy

import (
	"reflect"
	"testing"
)

// TestFill: Fill gives an empty EngineArgs every setting of a complete one (every field kind is
// handled), keeps what is given, and names each setting given both ways with different values.
func TestFill(t *testing.T) {
	e := EngineConfig{Name: "vllm", Version: "0.10.0", TensorParallel: 2, DataParallel: 1, PipelineParallel: 1, MaxModelLen: 8192,
		GPUMemoryUtilization: 0.9, KVCacheDType: "fp8", MaxNumBatchedTokens: 8192, MaxNumSeqs: 64, ChunkedPrefill: true,
		AllowLongMaxModelLen: true, Quantization: "fp8", AttentionBackend: "FLASHINFER"}
	full := ArgsOf(e)
	var a EngineArgs
	if c := a.Fill(full); len(c) != 0 {
		t.Fatalf("conflicts filling an empty EngineArgs: %v", c)
	}
	want := full.Clone()
	want.Name = ""
	if !reflect.DeepEqual(a, want) {
		t.Errorf("filled %+v, want %+v", a, want)
	}
	b := EngineArgs{MaxNumSeqs: Ptr(128), Quantization: "awq"}
	c := b.Fill(full)
	if *b.MaxNumSeqs != 128 || b.Quantization != "awq" || *b.TensorParallel != 2 {
		t.Errorf("given settings replaced: %+v", b)
	}
	if !reflect.DeepEqual(c, []string{"max_num_seqs", "quantization"}) {
		t.Errorf("conflicts %v, want max_num_seqs and quantization", c)
	}
	*full.TensorParallel = 8
	if *a.TensorParallel != 2 {
		t.Errorf("Fill shares pointers with its argument")
	}
}
