package planner

import (
	"strings"
	"testing"
)

// TestLengthQuestion: --input-tokens with --users is a closed loop of fixed lengths (output
// DefaultOutputTokens unless given); --context with --users leaves the workload to the protocol;
// a missing, malformed or contradictory flag is refused naming it.
func TestLengthQuestion(t *testing.T) {
	w, err := LengthQuestion{InputTokens: "2K", Users: 8}.Workload()
	if err != nil || w == nil || w.Lengths.InputTokens != 2048 || w.Lengths.OutputTokens != DefaultOutputTokens || w.Closed.Concurrency != 8 || w.Closed.Requests != 100 {
		t.Fatalf("--input-tokens 2K --users 8: %+v, %v", w, err)
	}
	if w, err := (LengthQuestion{InputTokens: "1000", Users: 32, OutputTokens: 500}).Workload(); err != nil || w.Lengths.OutputTokens != 500 || w.Closed.Requests != 320 {
		t.Fatalf("--output-tokens 500 --users 32: %+v, %v", w, err)
	}
	if w, err := (LengthQuestion{Context: "128K", Users: 16}).Workload(); w != nil || err != nil {
		t.Fatalf("--context 128K --users 16: %+v, %v (want the protocol's cell: no workload here)", w, err)
	}
	for _, c := range []struct {
		q    LengthQuestion
		want string
	}{
		{LengthQuestion{InputTokens: "1000"}, "--input-tokens needs --users"},
		{LengthQuestion{InputTokens: "x", Users: 2}, "--input-tokens \"x\""},
		{LengthQuestion{Context: "8K", InputTokens: "1000", Users: 2}, "exclusive"},
		{LengthQuestion{Context: "9Q", Users: 2}, "--context"},
		{LengthQuestion{Context: "8K", Users: -1}, "--users -1"},
		{LengthQuestion{Context: "8K"}, "give --context and --users"},
	} {
		if _, err := c.q.Workload(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.q, err, c.want)
		}
	}
}
