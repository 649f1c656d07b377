package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/fsutil"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmcmd"
)

// scenarioFlags are the flags every simulating command shares.
type scenarioFlags struct {
	config       string
	params       string
	uncalibrated bool
	vllmCmd      string
	seed         int64
	// readyTimeoutS >= 0 replaces the protocol's ready_timeout_s (0: the tool's default by context).
	readyTimeoutS float64
	// vllmWords, when set, is a launch command already split into words (import's positional
	// arguments); it takes the place of --vllm-cmd.
	vllmWords []string
}

func (f *scenarioFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "scenario TOML `file` (default: the embedded seed scenario; see 'servesim config')")
	fs.StringVar(&f.params, "params", "", "parameter `file` from 'servesim fit --out' (default: the built-in calibration that matches, else priors)")
	fs.BoolVar(&f.uncalibrated, "uncalibrated", false, "use the physical priors, ignoring every calibration")
	fs.StringVar(&f.vllmCmd, "vllm-cmd", "", "a `vllm serve ...` launch command whose flags replace the scenario's engine section")
	fs.Int64Var(&f.seed, "seed", -1, "random seed for speculative acceptance (default: the scenario's)")
	fs.Float64Var(&f.readyTimeoutS, "ready-timeout-s", -1, "the benchmark's readiness timeout in `seconds` for every context; 0: the tool's default by context (60 s below 64K, 120 s below 128K, 180 s from 128K) (default: the scenario's protocol.ready_timeout_s)")
}

// isSeed reports whether the run uses the embedded seed scenario unchanged.
func (f *scenarioFlags) isSeed() bool { return f.config == "" && f.vllmCmd == "" && f.vllmWords == nil }

// load resolves the scenario, printing notes (ignored vLLM flags) to stderr. Every command that
// reads a scenario goes through it.
func (f *scenarioFlags) load(stderr io.Writer) (*scenario.Resolved, error) {
	if f.params != "" && f.uncalibrated {
		return nil, usagef("--params and --uncalibrated contradict each other")
	}
	var s *scenario.Scenario
	if f.config != "" {
		var err error
		if s, err = scenario.Load(f.config); err != nil {
			return nil, err
		}
	} else {
		s = scenario.Default()
	}
	words := f.vllmWords
	if f.vllmCmd != "" {
		var err error
		if words, err = vllmcmd.Split(f.vllmCmd); err != nil {
			return nil, fmt.Errorf("--vllm-cmd: %w", err)
		}
	}
	if words != nil {
		notes, err := s.ApplyVLLM(words)
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			fmt.Fprintln(stderr, n)
		}
	}
	if f.seed >= 0 {
		s.Seed = uint64(f.seed)
	}
	if f.readyTimeoutS >= 0 {
		s.Protocol.ReadyTimeoutS = f.readyTimeoutS
		if err := s.Protocol.Validate(); err != nil {
			return nil, usagef("--ready-timeout-s: %v", err)
		}
	}
	return s.Resolve(scenario.ResolveOptions{ParamsFile: f.params, Uncalibrated: f.uncalibrated})
}

// loadServer resolves the scenario and builds its simulated server.
func (f *scenarioFlags) loadServer(stderr io.Writer) (*scenario.Resolved, *sim.Server, error) {
	r, err := f.load(stderr)
	if err != nil {
		return nil, nil, err
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		return nil, nil, err
	}
	return r, srv, nil
}

// outFlag handles --out: stdout when empty, else an atomically written file checked up front.
type outFlag struct{ path string }

func (o *outFlag) register(fs *pflag.FlagSet, what string) {
	fs.StringVarP(&o.path, "out", "o", "", "write "+what+" to `file` (atomically) instead of stdout")
}

// check fails before long work when the destination cannot be written.
func (o *outFlag) check() error {
	if o.path == "" {
		return nil
	}
	return fsutil.CheckWritable(o.path)
}

func (o *outFlag) write(stdout io.Writer, buf *bytes.Buffer) error {
	if o.path == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return outputs.WriteFile(o.path, buf.Bytes())
}

// loadMeasured reads --measured, or the embedded seed for the seed scenario, and checks that its
// cells are ones r's protocol runs. Nil without an error: nothing to compare with. The name says
// where the matrix came from.
func loadMeasured(path string, seedScenario bool, r *scenario.Resolved) (*matrix.Matrix, string, error) {
	var m *matrix.Matrix
	var err error
	name := path
	switch {
	case path == "none":
	case path != "":
		m, err = matrix.Load(path)
	case seedScenario:
		name = scenario.SeedMeasuredName
		m, err = matrix.LoadBytes(scenario.SeedMeasured(), name)
	}
	if err == nil && m != nil {
		err = r.Scenario.Protocol.CheckMeasured(m, r.Deployment.Engine.MaxModelLen)
	}
	if err != nil {
		return nil, "", fmt.Errorf("--measured: %w", err)
	}
	if m == nil {
		name = ""
	}
	return m, name, nil
}
