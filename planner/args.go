package planner

import (
	"fmt"
	"io"
	"strings"

	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/workload"
)

// Args are the plan command's question, sweep and output flags. What --input-tokens, --context,
// --users and --output-tokens mean, and every check of the flags' values, are here; the checks'
// errors are usage errors naming the flag. changed reports whether a flag was given.
type Args struct {
	Model, Drafter                   string
	Context, InputTokens, OutputText string
	Users                            int
	Workload                         string
	Overrides                        workload.Overrides
	SLO                              workload.SLOArgs
	Space                            SpaceText
	GPUKinds                         []string
	Shard                            string
	Workers, Top, ExplainRow         int
	Wide, Exhaustive, All, ShowCmds  bool
	Plot, From                       string
	outputTokens                     int
}

// fromFlags are the flags --from takes: they print the saved plan, not change its question.
func fromFlags() map[string]bool {
	return map[string]bool{"from": true, "explain-row": true, "format": true, "top": true, "wide": true, "all": true, "show-commands": true, "out": true, "plot": true, "quiet": true}
}

// CheckFrom refuses, with --from, the flags given (given) that would change the question.
func (a *Args) CheckFrom(given []string, changed func(string) bool) error {
	var bad []string
	for _, n := range given {
		if !fromFlags()[n] {
			bad = append(bad, "--"+n)
		}
	}
	if len(bad) > 0 {
		return usage.Errorf("--from prints the saved plan's answer to its own question: %s would change the question (sweep again without --from)", strings.Join(bad, ", "))
	}
	return a.checkExplainRow(changed)
}

func (a *Args) checkExplainRow(changed func(string) bool) error {
	if changed("explain-row") && a.ExplainRow < 0 {
		return usage.Errorf("--explain-row %d: want a row index >= 0 (leave the flag out for no row)", a.ExplainRow)
	}
	return nil
}

// Check validates the sweep's and the output's numbers.
func (a *Args) Check(changed func(string) bool) error {
	for _, c := range []struct {
		name      string
		v, lo, hi int
		want      string
	}{
		{"max-gpus", a.Space.MaxGPUs, 1, 4096, "a number of GPUs in 1..4096"},
		{"workers", a.Workers, 0, 1 << 16, "a positive number of simulations at once (or 0: the number of CPUs)"},
		{"top", a.Top, 1, 1 << 30, "a positive number of layouts"},
		{"max-model-len", a.Space.MaxModelLen, 0, 1 << 30, "a positive number of tokens (or 0: the scenario's)"},
	} {
		if c.v < c.lo || c.v > c.hi {
			return usage.Errorf("--%s %d: want %s", c.name, c.v, c.want)
		}
	}
	return nil
}

// Question is the workload the flags ask about before the scenario is known: that of
// --vllm-bench (bench, nil when not given), --workload, or --input-tokens; nil for a --context
// question, whose workload comes from the scenario's protocol (BenchQuestion). A default output
// length is said on stderr.
func (a *Args) Question(changed func(string) bool, bench func() (*workload.Spec, error), benchGiven, benchUsed bool, stderr io.Writer) (*workload.Spec, error) {
	if err := a.checkExplainRow(changed); err != nil {
		return nil, err
	}
	if changed("output-tokens") {
		n, err := matrix.ParseContext(a.OutputText)
		if err != nil || n < 1 {
			return nil, usage.Errorf("--output-tokens %q: want a positive token count such as 500 or 1K", a.OutputText)
		}
		a.outputTokens = n
	}
	lengths := a.Context != "" || a.InputTokens != "" || changed("users") || changed("output-tokens")
	switch {
	case benchGiven && (a.Workload != "" || lengths):
		return nil, usage.Errorf("--vllm-bench, --workload and --context/--input-tokens/--users/--output-tokens are exclusive")
	case benchGiven:
		s, err := bench()
		if err != nil {
			return nil, err
		}
		return s, a.SLO.Apply(changed, &workload.SLO{})
	case benchUsed:
		return nil, usage.Errorf("--special-tokens and --chars-per-token apply to --vllm-bench")
	case a.Workload != "" && lengths:
		return nil, usage.Errorf("--workload and --context/--input-tokens/--users/--output-tokens are exclusive")
	case a.Workload != "":
		s, err := workload.LoadArg("--workload", a.Workload)
		if err != nil {
			return nil, err
		}
		return s, a.SLO.Apply(changed, &workload.SLO{})
	case a.Overrides.Used(changed):
		return nil, usage.Errorf("--rate and --requests change a --workload (file or preset)")
	}
	s, err := LengthQuestion{Context: a.Context, InputTokens: a.InputTokens, Users: a.Users, OutputTokens: a.outputTokens}.Workload()
	if err != nil {
		return nil, usage.Wrap(err)
	}
	if s != nil && !changed("output-tokens") {
		fmt.Fprintf(stderr, "servesim: %d output tokens per request (the default; --output-tokens to change)\n", s.Lengths.OutputTokens)
	}
	return s, a.SLO.Apply(changed, &workload.SLO{})
}

// Finish completes the question's workload: a --context question's from the scenario's protocol
// (spec nil), then the objectives and overrides the flags give, checked.
func (a *Args) Finish(changed func(string) bool, spec *workload.Spec, proto protocol.Protocol) (*workload.Spec, error) {
	if spec == nil {
		if a.outputTokens > 0 {
			proto.MaxOutput = a.outputTokens
		}
		spec = BenchWorkload(&proto, a.Context, a.Users)
	}
	if err := a.SLO.Apply(changed, &spec.SLO); err != nil {
		return nil, err
	}
	if err := a.Overrides.Apply(changed, spec); err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, usage.Errorf("workload: %v", err)
	}
	return spec, nil
}

// Sweep is the sweep's space and shard.
func (a *Args) Sweep() (Space, Shard, error) {
	sp, err := a.Space.Space()
	if err != nil {
		return sp, Shard{}, usage.Wrap(err)
	}
	var sh Shard
	if a.Shard != "" {
		if sh, err = ParseShard(a.Shard); err != nil {
			return sp, sh, usage.Wrap(err)
		}
	}
	return sp, sh, nil
}

// Candidates are the GPUs of --gpu-kinds in the catalog (the whole catalog without the flag).
func (a *Args) Candidates(cat *hardware.Catalog) ([]hardware.GPU, error) {
	if len(a.GPUKinds) == 0 {
		return cat.GPUs, nil
	}
	var out []hardware.GPU
	for _, n := range a.GPUKinds {
		g, err := cat.Find(n)
		if err != nil {
			return nil, usage.Errorf("--gpu-kinds: %v", err)
		}
		out = append(out, g)
	}
	return out, nil
}

// Table is how the table is cut.
func (a *Args) Table() TableOptions {
	return TableOptions{Top: a.Top, All: a.All, Commands: a.ShowCmds, Wide: a.Wide}
}

// StageText names the stage in a progress line.
func (g Progress) StageText() string {
	switch g.Stage {
	case "screen":
		return "screens"
	case "full":
		return "full simulations"
	}
	return "simulations"
}

// SearchText is a plan's closing account of its simulations.
func (p *Plan) SearchText() string {
	if d := p.Search.Describe(); d != "" {
		return d
	}
	return fmt.Sprintf("%s simulations", numfmt.Commas(fmt.Sprint(p.Counts.Simulated)))
}
