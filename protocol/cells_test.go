package protocol

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/matrix"
)

// TestParseCells: decode and prefill cells the protocol runs are read in the order given; a cell
// it does not run, a missing concurrency and a bad one are refused naming the part.
func TestParseCells(t *testing.T) {
	p := Seed()
	keys, err := p.ParseCells("8K:32, 8K:prefill", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := []matrix.Key{{Phase: matrix.Decode, Context: "8K", Concurrency: 32}, {Phase: matrix.Prefill, Context: "8K", Concurrency: 1}}
	if len(keys) != 2 || keys[0] != want[0] || keys[1] != want[1] {
		t.Errorf("got %v, want %v", keys, want)
	}
	for arg, msg := range map[string]string{"9K:3": "not a cell", "8K": "want CTX:C", "8K:0": "positive integer", "8K:x": "positive integer"} {
		if _, err := p.ParseCells(arg, 1<<20); err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), arg) {
			t.Errorf("%s: %v, want an error naming it with %q", arg, err, msg)
		}
	}
}
