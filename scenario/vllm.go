package scenario

import (
	"fmt"
	"strings"

	"github.com/servesim/servesim/vllmcmd"
)

// ApplyVLLM reads a `vllm serve ...` launch command, given as words, into the scenario. The
// command is the whole launch: its flags become the engine section, and every flag it does not
// give takes vLLM's default when the scenario resolves (not the scenario's earlier value). The
// engine version is kept (a command does not carry it). The model it serves replaces the
// scenario's (a model file the scenario gives for the same name is kept), and hardware.count
// follows the GPUs it uses. The returned lines say what changed and what is not simulated
// (ignored and unrecognised flags, notes), for the user to read.
func (s *Scenario) ApplyVLLM(words []string) ([]string, error) {
	res, err := vllmcmd.Parse(words)
	if err != nil {
		return nil, fmt.Errorf("vllm command: %w", err)
	}
	if err := res.UnknownError(); err != nil {
		// vLLM refuses a flag it does not know; simulating the rest would answer for another
		// server (a misspelt --tensor-parallel-size runs TP 1).
		return nil, fmt.Errorf("vllm command: %w", err)
	}
	var notes []string
	args := res.Args
	args.Version = s.Engine.Version
	s.Engine = args
	if res.Model == "" {
		return nil, fmt.Errorf("vllm command: no model: want `vllm serve MODEL` (a Hugging Face id or a path)")
	}
	if res.Model != s.Model.Name {
		s.Model = ModelSpec{Name: res.Model}
	}
	s.Model.Revision = res.Revision
	if s.Hardware.Count != 0 && s.Hardware.Count != args.GPUs() {
		notes = append(notes, fmt.Sprintf("note: the command uses %d GPUs (TP x PP x DP); hardware.count %d -> %d", args.GPUs(), s.Hardware.Count, args.GPUs()))
	}
	s.Hardware.Count = 0
	if len(res.Ignored) > 0 {
		notes = append(notes, "ignored (no effect on the simulation): "+strings.Join(res.Ignored, " "))
	}
	for _, n := range res.Notes {
		notes = append(notes, "note: "+n)
	}
	return notes, nil
}
