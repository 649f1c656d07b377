package planner

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// shardJSON is a minimal plan file: a header and pruned rows with the given indices.
func shardJSON(rows int, shard string, idx ...int) string {
	var rs []string
	for _, i := range idx {
		rs = append(rs, fmt.Sprintf(`{"index":%d,"status":"pruned","stage":"memory"}`, i))
	}
	sh := ""
	if shard != "" {
		sh = `,"shard":` + shard
	}
	return fmt.Sprintf(`{"servesim_plan":1,"fingerprint":"f","rows":%d%s,"results":[%s]}`, rows, sh, strings.Join(rs, ","))
}

// TestReadJSONRejectsBadShards: ReadJSON does not trust a plan file's shard header or row
// indices; each bad one is an error naming the file and the field, not a panic or a 16 TB
// allocation in Merge.
func TestReadJSONRejectsBadShards(t *testing.T) {
	cases := []struct {
		name, json, want string
	}{
		{"index past count", shardJSON(4, `{"index":5,"count":2}`), `bad.json: field "shard": shard 5/2`},
		{"count 0", shardJSON(4, `{"index":0,"count":0}`), `field "shard": shard 0/0`},
		{"count -1", shardJSON(4, `{"index":0,"count":-1}`), `field "shard": shard 0/-1`},
		{"count 1e12", shardJSON(4, `{"index":0,"count":1000000000000}`), "n <= 65536"},
		{"negative index", shardJSON(4, `{"index":-1,"count":2}`), `field "shard": shard -1/2`},
		{"row -1", shardJSON(4, `{"index":0,"count":2}`, 0, -1), `results[1]: field "index" = -1`},
		{"row twice", shardJSON(4, `{"index":0,"count":2}`, 2, 2), `results[1]: field "index" = 2: row given twice`},
		{"row of another shard", shardJSON(4, `{"index":0,"count":2}`, 1), `field "index" = 1 is not in shard 0/2`},
		{"row past rows", shardJSON(4, "", 4), `field "index" = 4: want 0 <= index < rows (4)`},
		{"negative rows", shardJSON(-3, ""), `field "rows" = -3`},
		{"more results than rows", shardJSON(1, "", 0, 1), `field "rows" = 1`},
	}
	for _, c := range cases {
		_, err := ReadJSON(strings.NewReader(c.json), "bad.json")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	// The good shards read and merge; a shard whose row count differs is refused.
	a, err := ReadJSON(strings.NewReader(shardJSON(4, `{"index":0,"count":2}`, 0, 2)), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadJSON(strings.NewReader(shardJSON(4, `{"index":1,"count":2}`, 1, 3)), "b.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge([]*Plan{a, b}, []string{"a.json", "b.json"}, false)
	if err != nil || len(m.Results) != 4 {
		t.Fatalf("merge of good shards: %v", err)
	}
	c, err := ReadJSON(strings.NewReader(shardJSON(6, `{"index":1,"count":2}`, 1, 3)), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge([]*Plan{a, c}, []string{"a.json", "c.json"}, false); err == nil || !strings.Contains(err.Error(), `c.json: field "rows" = 6`) {
		t.Errorf("merge of shards of different row counts: %v", err)
	}
	// Merge does not trust plans built in memory either.
	bad := &Plan{Format: FormatVersion, Rows: 4, Shard: &Shard{Index: 5, Count: 2}}
	if _, err := Merge([]*Plan{bad}, []string{"mem"}, true); err == nil || !strings.Contains(err.Error(), "mem: field \"shard\"") {
		t.Errorf("Merge of an in-memory bad shard: %v", err)
	}
}

// FuzzReadJSONMerge: a plan file (as merge reads it) never panics ReadJSON or a Merge of it
// with itself, and never makes Merge allocate by an untrusted count.
func FuzzReadJSONMerge(f *testing.F) {
	f.Add(shardJSON(4, `{"index":0,"count":2}`, 0, 2))
	f.Add(shardJSON(4, "", 0, 1, 2, 3))
	f.Add(shardJSON(4, `{"index":5,"count":2}`))
	f.Add(`{"servesim_plan":1,"rows":2,"results":[{"index":0,"status":"ok","same_as":1},{"index":1,"status":"ok","perf":{}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<14 {
			return
		}
		p, err := ReadJSON(strings.NewReader(s), "f.json")
		if err != nil {
			return
		}
		m, err := Merge([]*Plan{p}, []string{"f.json"}, true)
		if err != nil {
			return
		}
		_ = m.WriteTable(io.Discard, TableOptions{Top: 5})
		_ = m.WriteCSV(io.Discard)
		_ = m.WriteJSON(io.Discard)
	})
}

// FuzzSpaceNormalize: the sweep the plan's list flags give (--max-gpus, --gpu-counts, --tp,
// --max-num-seqs, --max-num-batched-tokens, --spec, --gpu-memory-utilization, --max-model-len)
// either normalizes into a checked sweep or is an error; never a panic, never a value outside its
// range after normalize.
func FuzzSpaceNormalize(f *testing.F) {
	f.Add(8, 4, 2, 32, 8192, 7, 0.92, 0)
	f.Add(0, 0, 0, 0, 0, 0, 0.0, 0)
	f.Add(4097, -1, 3, 1<<21, 8, 33, 1.5, -5)
	f.Fuzz(func(t *testing.T, maxGPUs, count, tp, mns, mbt, spec int, util float64, mml int) {
		s := Space{MaxGPUs: maxGPUs, MaxModelLen: mml}
		if count != 0 {
			s.Counts = []int{count, count}
		}
		if tp != 0 {
			s.TP = []int{tp}
		}
		if mns != 0 {
			s.MaxNumSeqs = []int{mns}
		}
		if mbt != 0 {
			s.MaxNumBatchedTokens = []int{mbt}
		}
		s.SpecTokens = []int{spec}
		if util != 0 {
			s.GPUMemoryUtilization = []float64{util}
		}
		if err := s.normalize(); err != nil {
			return
		}
		if s.MaxGPUs < 1 || s.MaxGPUs > 4096 || len(s.Counts) == 0 || s.MaxModelLen < 0 {
			t.Fatalf("normalized sweep %+v", s)
		}
		for _, c := range s.Counts {
			if c < 1 || c > s.MaxGPUs {
				t.Fatalf("count %d outside 1..%d", c, s.MaxGPUs)
			}
		}
		for _, u := range s.GPUMemoryUtilization {
			if !(u > 0 && u <= 1) {
				t.Fatalf("utilization %v", u)
			}
		}
	})
}
