package scenario

import (
	"fmt"
	"strings"

	"github.com/servesim/servesim/model/arch"
	"github.com/servesim/servesim/vllmcmd"
)

// ApplyVLLM parses a `vllm serve ...` launch command, given as words, into the scenario: its
// flags replace the engine section, a built-in model it names replaces the scenario's model, and
// hardware.count follows the GPUs it uses. The returned lines say what changed and what was not
// simulated (ignored and unrecognised flags, notes), for the user to read.
func (s *Scenario) ApplyVLLM(words []string) ([]string, error) {
	res, err := vllmcmd.Parse(words, s.Engine)
	if err != nil {
		return nil, fmt.Errorf("vllm command: %w", err)
	}
	var notes []string
	s.Engine = res.Engine
	if res.Model != "" {
		if _, err := arch.Builtin(res.Model); err == nil {
			s.Model.Name = res.Model
			s.Model.File = ""
		} else {
			notes = append(notes, fmt.Sprintf("note: model %q is not a built-in description; keeping the scenario's model (%s)", res.Model, s.Model.Name))
		}
	}
	if n := s.Engine.GPUs(); n != s.Hardware.Count {
		notes = append(notes, fmt.Sprintf("note: the command uses %d GPUs (TP %d x DP %d); hardware.count %d -> %d", n, s.Engine.TensorParallel, s.Engine.DataParallel, s.Hardware.Count, n))
		s.Hardware.Count = n
	}
	if len(res.Ignored) > 0 {
		notes = append(notes, "ignored (no effect on the simulation): "+strings.Join(res.Ignored, " "))
	}
	if len(res.Unknown) > 0 {
		notes = append(notes, "unrecognised (not simulated): "+strings.Join(res.Unknown, " "))
	}
	for _, n := range res.Notes {
		notes = append(notes, "note: "+n)
	}
	return notes, nil
}
