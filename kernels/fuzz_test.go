package kernels

import (
	"bytes"
	"math"
	"os"
	"testing"
	"testing/fstest"
)

// FuzzProfiles: any mlp.csv, all_reduce.csv and send_recv.csv load to rows whose values are
// positive, finite and within the reader's bounds, or to an error; the check predicts finite
// times for whatever loads. Seeded with the shipped profiles' files.
func FuzzProfiles(f *testing.F) {
	read := func(p string) string {
		b, err := os.ReadFile("testdata/vidur/" + p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4096 {
			// The header and the first rows: mutations of a short file reach the parser faster.
			b = b[:bytes.LastIndexByte(b[:4096], '\n')+1]
		}
		return string(b)
	}
	mlp := read("compute/h100/meta-llama/Llama-2-7b-hf/mlp.csv")
	ar := read("network/h100_dgx/all_reduce.csv")
	sr := read("network/h100_dgx/send_recv.csv")
	f.Add(mlp, ar, sr)
	f.Add(mlp, "", "")
	f.Add("n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers,time_stats.mlp_up_proj.median\n32,8,4096,NaN,128256,true,128,1,0.1\n", ar, "")
	f.Add("", "time_stats.all_reduce.median,num_workers,size,devices_per_node\n0.037,1e300,Inf,8\n", "")
	f.Fuzz(func(t *testing.T, mlp, allReduce, sendRecv string) {
		fsys := fstest.MapFS{}
		for name, text := range map[string]string{"compute/h100/org/m/mlp.csv": mlp, "network/h100_dgx/all_reduce.csv": allReduce,
			"network/h100_dgx/send_recv.csv": sendRecv} {
			if text != "" {
				fsys[name] = &fstest.MapFile{Data: []byte(text)}
			}
		}
		p, err := Load(fsys)
		if err != nil {
			return
		}
		ok := func(v, hi float64) bool { return v > 0 && v <= hi && !math.IsInf(v, 0) }
		for _, r := range p.Compute {
			s := r.Shape
			for _, n := range []int{s.Heads, s.KVHeads, s.Hidden, s.Intermediate, s.Vocab, r.Tokens, r.TP} {
				if !ok(float64(n), maxCount) {
					t.Fatalf("compute row %+v: count %d out of 1..%d", r, n, int64(maxCount))
				}
			}
			for op, sec := range r.Seconds {
				if !ok(sec, maxMS/1e3) {
					t.Fatalf("compute row %+v: %s %v s out of (0, %g]", r, op, sec, maxMS/1e3)
				}
			}
		}
		for _, r := range p.Network {
			if !ok(float64(r.Workers), maxCount) || !ok(float64(r.DevicesPerNode), maxCount) || !ok(r.Bytes, maxBytes) || !ok(r.Seconds, maxMS/1e3) {
				t.Fatalf("network row %+v out of bounds", r)
			}
		}
		pts, err := Check(p, Options{})
		if err != nil {
			return
		}
		for _, pt := range pts {
			if math.IsNaN(pt.Predicted) || math.IsInf(pt.Predicted, 0) || pt.Predicted < 0 {
				t.Fatalf("point %+v: predicted %v s", pt, pt.Predicted)
			}
		}
	})
}
