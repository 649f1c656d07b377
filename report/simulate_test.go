package report

import (
	"strings"
	"testing"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

// TestSimulate: the figure pipeline explains the default cells, the given ones or none, and names
// a cell it cannot explain.
func TestSimulate(t *testing.T) {
	s := scenario.Default()
	s.Protocol.Contexts = []string{"8K", "64K"}
	s.Protocol.PrefillOnly = nil
	s.Protocol.Concurrency = []int{1, 8}
	r, err := s.Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	in, err := Simulate(r, srv, nil, "ignored without a matrix", SimulateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(in.Predicted.Decode), 4; got != want {
		t.Errorf("%d decode cells, want %d", got, want)
	}
	if len(in.Explain) == 0 || in.Capacity == "" || in.MeasuredName != "" {
		t.Errorf("defaults: %d explained cells, capacity %d bytes, measured name %q", len(in.Explain), len(in.Capacity), in.MeasuredName)
	}
	if f := in.Figures(); f.Predicted != in.Predicted || len(f.Explain) != len(in.Explain) {
		t.Errorf("Figures() does not carry the simulation")
	}
	in, err = Simulate(r, srv, nil, "", SimulateOptions{Explain: []Cell{{"64K", 8}}})
	if err != nil || len(in.Explain) != 1 || in.Explain[0].Concurrency != 8 {
		t.Errorf("one cell: %v, %d explained", err, len(in.Explain))
	}
	in, err = Simulate(r, srv, nil, "", SimulateOptions{NoExplain: true})
	if err != nil || len(in.Explain) != 0 {
		t.Errorf("no cells: %v, %d explained", err, len(in.Explain))
	}
	_, err = Simulate(r, srv, nil, "", SimulateOptions{Explain: []Cell{{"8Q", 1}}})
	if err == nil || !strings.Contains(err.Error(), "--explain 8Q:1") {
		t.Errorf("an unreadable context: err = %v, want one naming the cell", err)
	}
}
