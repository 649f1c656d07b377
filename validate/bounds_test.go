package validate

import (
	"errors"
	"strings"
	"testing"

	"github.com/servesim/servesim/workload"
)

// TestRequestCountsBounded: num_requests is bounded however it is written (an integer past int64's
// range, 1e12 as digits or in exponent form), and a row within the reader's bound but above the
// simulator's request limit is refused by the mapping before anything is allocated: offline,
// Poisson and constant-rate rows, and a constant-rate experiment whose stages together exceed it.
func TestRequestCountsBounded(t *testing.T) {
	rows, err := ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	text.WriteString(strings.Join(Columns(), ",") + "\n")
	for _, bad := range []string{"9223372036854775807", "99999999999999999999", "1000000000001", "1e13", "-1"} {
		row := make([]string, len(Columns()))
		for i := range row {
			row[i] = "1"
		}
		row[0], row[11], row[19] = "x", "vllm", "offline-throughput"
		row[27] = bad
		_, err := ReadCSV(strings.NewReader(text.String()+strings.Join(row, ",")+"\n"), "c.csv")
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Column != "num_requests" || pe.Line != 2 {
			t.Errorf("num_requests %s: %v, want an error at c.csv:2 column num_requests", bad, err)
		}
	}

	over := workload.MaxRequests + 1
	kinds := map[string]bool{}
	var big []Row
	for _, r := range rows {
		if kinds[r.WorkloadKind] {
			continue
		}
		kinds[r.WorkloadKind] = true
		r.NumRequests = 1_000_000_000 // 1e9: 32 GB of prompts if allocated
		big = append(big, r)
	}
	for _, k := range []string{"offline-throughput", "poisson-rate", "constant-rate"} {
		if !kinds[k] {
			t.Errorf("the excerpt has no %s row", k)
		}
	}
	for _, c := range Map(big, nil) {
		if c.Expressed() || !strings.Contains(c.Reason, "at most") {
			t.Errorf("%s (%s) with 1e9 requests: expressed=%v reason %q, want refused", c.ID, c.Row.WorkloadKind, c.Expressed(), c.Reason)
		}
	}

	// Two stages of one experiment, each under the limit, together over it.
	var stages []Row
	for _, r := range rows {
		if strings.HasPrefix(r.CaseID, "isim-llama2-7b-tp1-codegen-stage") {
			r.NumRequests = over/2 + 1
			stages = append(stages, r)
		}
	}
	if len(stages) != 2 {
		t.Fatalf("%d stage rows", len(stages))
	}
	for _, c := range Map(stages, nil) {
		if c.Expressed() || !strings.Contains(c.Reason, "together") {
			t.Errorf("%s: stages of %d requests each: reason %q, want refused", c.ID, over/2+1, c.Reason)
		}
	}
}
