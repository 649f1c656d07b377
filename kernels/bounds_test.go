package kernels

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestProfileValuesBounded: NaN, infinite, negative, zero and overflowing profile values are
// refused with the file, line, column number and column; none reaches a row (or a fit).
func TestProfileValuesBounded(t *testing.T) {
	const mlpHead = "n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers,time_stats.mlp_up_proj.median\n"
	const netHead = "time_stats.all_reduce.median,num_workers,size,devices_per_node\n"
	cases := []struct {
		file, text, want string
	}{
		{"compute/h100/org/m/mlp.csv", mlpHead + "32,8,4096,NaN,128256,true,128,1,0.1\n", "compute/h100/org/m/mlp.csv:2:4: column n_expanded_embd"},
		{"compute/h100/org/m/mlp.csv", mlpHead + "32,8,4096,14336,128256,true,128,1,NaN\n", "mlp.csv:2:9: column time_stats.mlp_up_proj.median"},
		{"compute/h100/org/m/mlp.csv", mlpHead + "32,8,4096,14336,128256,true,128,1,-0.1\n", "mlp.csv:2:9:"},
		{"compute/h100/org/m/mlp.csv", mlpHead + "32,8,4096,14336,128256,true,1e300,1,0.1\n", "mlp.csv:2:7: column num_tokens"},
		{"compute/h100/org/m/mlp.csv", mlpHead + "32,8,4096,14336,128256,true,128,1,Inf\n", "mlp.csv:2:9:"},
		{"network/h100_dgx/all_reduce.csv", netHead + "0.037,1e300,1024,8\n", "all_reduce.csv:2:2: column num_workers"},
		{"network/h100_dgx/all_reduce.csv", netHead + "0.037,2,Inf,8\n", "all_reduce.csv:2:3: column size"},
		{"network/h100_dgx/all_reduce.csv", netHead + "NaN,2,1024,8\n", "all_reduce.csv:2:1: column time_stats.all_reduce.median"},
		{"network/h100_dgx/all_reduce.csv", netHead + "0.037,2,1024,-9223372036854775808\n", "all_reduce.csv:2:4: column devices_per_node"},
	}
	for _, c := range cases {
		_, err := Load(fstest.MapFS{c.file: {Data: []byte(c.text)}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.text, err, c.want)
		}
	}
	// The same files with sane values load.
	p, err := Load(fstest.MapFS{
		"compute/h100/org/m/mlp.csv":      {Data: []byte(mlpHead + "32,8,4096,14336,128256,true,128,1,0.1\n")},
		"network/h100_dgx/all_reduce.csv": {Data: []byte(netHead + "0.037,2,1024,8\n")},
	})
	if err != nil || len(p.Compute) != 1 || len(p.Network) != 1 {
		t.Fatalf("sane profiles: %v", err)
	}
}
