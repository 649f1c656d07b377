package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/protocol"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

// Options are the serve command's own flags: where to listen, the server's settings (Config)
// and the checks it can run instead of serving until stopped. Check's errors are usage errors
// naming the flag.
type Options struct {
	Host            string
	Port            int
	Speed           float64
	ServedModelName string
	CharsPerToken   float64
	EOSMeanTokens   int
	MaxBodyBytes    int64
	MaxConnections  int
	GraceS          float64
	// CheckCells (--check-cells), when given, are the benchmark cells to run over HTTP and
	// compare with the matrix simulated in process.
	CheckCells []string
	// CheckWorkload (--check-workload), when given, is the workload to send over HTTP and
	// compare with the workload simulated in process; Overrides change its rate and requests.
	CheckWorkload string
	Overrides     workload.Overrides
	CheckTol      float64
	CheckWarmups  bool
}

// Check validates the values; changed reports whether a flag was given.
func (o *Options) Check(changed func(string) bool) error {
	switch {
	case o.Port < 0 || o.Port > 65535:
		return usage.Errorf("--port %d: want 0 to 65535", o.Port)
	case !(o.Speed > 0 && o.Speed <= MaxSpeed):
		return usage.Errorf("--speed %v: want simulated seconds per second in (0, %g]", o.Speed, MaxSpeed)
	case !(o.CharsPerToken >= 0.5 && o.CharsPerToken <= 64):
		return usage.Errorf("--chars-per-token %v: want 0.5 to 64", o.CharsPerToken)
	case o.EOSMeanTokens < 0:
		return usage.Errorf("--eos-mean-tokens %d: want 0 (no EOS) or a mean length in tokens", o.EOSMeanTokens)
	case o.MaxBodyBytes < 1024:
		return usage.Errorf("--max-body-bytes %d: want at least 1024", o.MaxBodyBytes)
	case o.MaxConnections < 1:
		return usage.Errorf("--max-connections %d: want at least 1", o.MaxConnections)
	case !(o.GraceS >= 0 && o.GraceS <= 3600):
		return usage.Errorf("--shutdown-grace-s %v: want 0 to 3600 seconds", o.GraceS)
	case !(o.CheckTol > 0 && o.CheckTol < 10):
		return usage.Errorf("--check-tolerance %v: want a positive fraction such as 0.05", o.CheckTol)
	}
	cells := len(o.CheckCells) > 0
	if cells && o.CheckWorkload != "" {
		return usage.Errorf("--check-cells and --check-workload: give one check at a time")
	}
	if changed("check-tolerance") && !cells && o.CheckWorkload == "" {
		return usage.Errorf("--check-tolerance applies to a check (--check-cells or --check-workload)")
	}
	if changed("check-warmups") && !cells {
		return usage.Errorf("--check-warmups applies to the check of cells (--check-cells)")
	}
	for _, name := range []string{"rate", "requests"} {
		if changed(name) && o.CheckWorkload == "" {
			return usage.Errorf("--%s applies to the check of a workload (--check-workload)", name)
		}
	}
	return nil
}

// Addr is the address to listen on.
func (o *Options) Addr() string { return net.JoinHostPort(o.Host, strconv.Itoa(o.Port)) }

// ModelName is the name clients give: --served-model-name, else the first of names (the launch
// command's --served-model-name, its model, the model's name) that is not empty.
func (o *Options) ModelName(names ...string) string {
	if o.ServedModelName != "" {
		return o.ServedModelName
	}
	for _, n := range names {
		if n != "" {
			return n
		}
	}
	return ""
}

// Config is the server's configuration for srv with these options.
func (o *Options) Config(srv *sim.Server, seed uint64, modelName string, log io.Writer) Config {
	c := Config{Server: srv, Seed: seed, ModelName: modelName, Speed: o.Speed,
		CharsPerToken: o.CharsPerToken, EOSMeanTokens: o.EOSMeanTokens, MaxBodyBytes: o.MaxBodyBytes, MaxConnections: o.MaxConnections,
		Grace: time.Duration(o.GraceS * float64(time.Second)), VLLMVersion: srv.Deployment.Engine.Version, Log: log}
	if c.Grace == 0 {
		c.Grace = time.Nanosecond
	}
	return c
}

// CheckSpec is the workload of --check-workload with --rate and --requests applied (nil without
// the flag).
func (o *Options) CheckSpec(changed func(string) bool) (*workload.Spec, error) {
	if o.CheckWorkload == "" {
		return nil, nil
	}
	spec, err := workload.LoadArg("--check-workload", o.CheckWorkload)
	if err != nil {
		return nil, err
	}
	if err := o.Overrides.Apply(changed, spec); err != nil {
		return nil, err
	}
	if spec.Kind != workload.KindOpen && spec.Kind != workload.KindClosed {
		return nil, usage.Errorf("--check-workload %s: a %s workload; the check sends open or closed loops (presets chat, chat-bursty, chat-ramp, rag, 1k1k, 8k1k, 1k8k, poisson-100k)", o.CheckWorkload, spec.Kind)
	}
	return spec, nil
}

// RunCheckCells runs the protocol over HTTP against the server at url and compares it with the
// matrix simulated in process (and the measured one, meas, when given), writing the comparison
// to out and progress to info.
func (o *Options) RunCheckCells(ctx context.Context, out, info io.Writer, url string, srv *sim.Server, proto *protocol.Protocol, seed uint64, keys []matrix.Key, meas *matrix.Matrix) error {
	fmt.Fprintf(info, "servesim: simulating the matrix in process\n")
	want, err := llmbench.RunMatrix(srv, proto, llmbench.Options{Seed: seed})
	if err != nil {
		return err
	}
	c := NewClient(url, o.Speed)
	defer c.Close()
	b := &LLMBenchClient{C: c, Proto: proto, Progress: func(label string) {
		fmt.Fprintf(info, "servesim: over HTTP at %.0f s: %s\n", c.Now().Seconds(), label)
	}}
	start := time.Now()
	got, err := b.Run(ctx, keys, o.CheckWarmups)
	if err != nil {
		return err
	}
	fmt.Fprintf(info, "servesim: the protocol over HTTP took %.1f s (%.0f s simulated)\n", time.Since(start).Seconds(), c.Now().Seconds())
	return CompareCells(out, o.Speed, keys, got, want.Matrix, meas, o.CheckTol)
}

// RunCheckWorkload sends the workload over HTTP to the server at url and compares it with the
// workload simulated in process.
func (o *Options) RunCheckWorkload(ctx context.Context, out, info io.Writer, url string, srv *sim.Server, seed uint64, spec *workload.Spec) error {
	opts := workload.Options{Seed: seed}
	fmt.Fprintf(info, "servesim: simulating the workload in process\n")
	want, err := workload.Run(srv, spec, opts)
	if err != nil {
		return err
	}
	reqs, err := spec.Requests(spec.SeedFor(opts))
	if err != nil {
		return err
	}
	conc := 0
	if spec.Kind == workload.KindClosed {
		conc = spec.Closed.Concurrency
	}
	c := NewClient(url, o.Speed)
	defer c.Close()
	start := time.Now()
	shown := start
	got, err := c.RunWorkload(ctx, reqs, conc, func(done, total int) {
		if now := time.Now(); now.Sub(shown) >= 5*time.Second || done == total {
			shown = now
			fmt.Fprintf(info, "servesim: over HTTP: %d of %d requests done\n", done, total)
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(info, "servesim: the workload over HTTP took %.1f s (%.0f s simulated)\n", time.Since(start).Seconds(), got.DurationS)
	return CompareWorkload(out, o.Speed, spec.Name, got, want, o.CheckTol)
}
