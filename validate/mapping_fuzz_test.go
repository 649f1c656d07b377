package validate

import (
	"os"
	"strings"
	"testing"

	"github.com/servesim/servesim/workload"
)

// FuzzMapRow: any corpus row that reads maps to a case that is refused with a reason, or to a
// workload that validates and asks for at most workload.MaxRequests requests (constant-rate
// stages together), whose server builds or is refused with an error; nothing panics. Seeded with
// the excerpt's rows and rows past the bounds (a huge num_requests, pp 1000, a garbage flag).
func FuzzMapRow(f *testing.F) {
	data, err := os.ReadFile(excerpt)
	if err != nil {
		f.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	header := lines[0]
	for _, l := range lines[1:] {
		f.Add(l)
	}
	const offline = "t1,src,meta-llama/Llama-3.1-8B-Instruct,bf16,auto,h100-sxm,1,1,1,1,1,vllm,0.10.0,,,8192,none,0,,offline-throughput,fixed,8,inf,1000,1000,100,100,%s,1000,,100,100,10,10,1100,,,,1,,,10,,,1100,,40,40,0,,x"
	for _, n := range []string{"9223372036854775807", "1e9", "10000"} {
		f.Add(strings.Replace(offline, "%s", n, 1))
	}
	f.Add(strings.Replace(strings.Replace(offline, "%s", "100", 1), ",1,1,1,1,1,vllm,", ",1000,1,1,1,1000,vllm,", 1))
	f.Add(strings.Replace(strings.Replace(offline, "%s", "100", 1), ",none,0,,", ",none,0,--dtype float32 --max-num-seqs 0x1p-1,", 1))
	f.Fuzz(func(t *testing.T, line string) {
		rows, err := ReadCSV(strings.NewReader(header+"\n"+line+"\n"), "fuzz.csv")
		if err != nil || len(rows) == 0 || rows[0].NumRequests > 20_000 {
			// Larger runs map as these do, only slower (their bound: TestRequestCountsBounded);
			// the fuzzer's time goes to the other cells.
			return
		}
		for _, c := range Map(rows, nil) {
			if !c.Expressed() {
				if c.ReasonClass == "" {
					t.Fatalf("case %s refused without a class: %s", c.ID, c.Reason)
				}
				continue
			}
			if c.Spec == nil && len(c.Stages) == 0 {
				t.Fatalf("case %s: expressed without a workload", c.ID)
			}
			if c.Spec != nil {
				if err := c.Spec.Validate(); err != nil {
					t.Fatalf("case %s: workload %s does not validate: %v", c.ID, c.Workload, err)
				}
			}
			total := 0
			for _, s := range c.Stages {
				if s.Requests < 0 || !(s.RatePerS > 0) {
					t.Fatalf("case %s: stage %+v", c.ID, s)
				}
				total += s.Requests
			}
			if total > workload.MaxRequests {
				t.Fatalf("case %s: stages of %d requests, above %d", c.ID, total, workload.MaxRequests)
			}
			if srv, _, err := buildServer(c, nil); err == nil && srv == nil {
				t.Fatalf("case %s: no server and no error", c.ID)
			}
		}
	})
}
