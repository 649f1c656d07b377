package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/bench"
	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/server"
	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/workload"
)

// serveFlags are serve's own flags.
type serveFlags struct {
	host          string
	port          int
	speed         float64
	served        string
	charsPerToken float64
	eosMean       int
	maxBody       int64
	maxConns      int
	graceS        float64
	checkCells    string
	checkTol      float64
	checkWarmups  bool
	checkWorkload string
	rate          float64
	requests      int
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.host, "host", "127.0.0.1", "the `address` to listen on (vLLM's --host; 0.0.0.0 serves every interface)")
	fs.IntVar(&f.port, "port", 8000, "the TCP `port` (vLLM's --port; 0: any free port, printed at start)")
	fs.Float64Var(&f.speed, "speed", 1, "simulated seconds per wall-clock `second`: 1 paces the simulated engine to real time, 10 runs it ten times faster (up to 10000)")
	fs.StringVar(&f.served, "served-model-name", "", "the model `name` clients give (default: the vllm command's --served-model-name, else its model)")
	fs.Float64Var(&f.charsPerToken, "chars-per-token", 4, "the tokenizer stand-in: a text prompt of c characters is ceil(c / `N`) tokens")
	fs.IntVar(&f.eosMean, "eos-mean-tokens", 256, "output-length model of requests without ignore_eos: EOS after a geometric number of tokens of this `mean` (at most max_tokens, at least min_tokens); 0: no EOS, every reply runs to max_tokens")
	fs.Int64Var(&f.maxBody, "max-body-bytes", 64<<20, "largest request body in `bytes` (413 beyond)")
	fs.IntVar(&f.maxConns, "max-connections", 4096, "most client connections open at once (more wait to be accepted)")
	fs.Float64Var(&f.graceS, "shutdown-grace-s", 30, "on SIGINT or SIGTERM, `seconds` the running requests get to finish before they are cancelled (a second signal cancels them at once)")
	fs.StringVar(&f.checkCells, "check-cells", "", "instead of serving until stopped: run the benchmark protocol over HTTP for these `cells` (CTX:C for a decode cell, CTX:prefill for a prefill row, comma-separated, e.g. 8K:1,8K:32,8K:64,32K:128), compare with 'servesim matrix', and exit")
	fs.StringVar(&f.checkWorkload, "check-workload", "", "instead of serving until stopped: send this `workload` (a preset such as chat or 1k1k, or a TOML file; an open or closed loop) over HTTP as a client, compare throughput, TTFT, TPOT and end-to-end latency with 'servesim simulate', and exit")
	fs.Float64Var(&f.rate, "rate", 0, "with --check-workload: an open loop's constant arrival rate instead of its own, `requests/s`")
	fs.IntVar(&f.requests, "requests", 0, "with --check-workload: the number of requests of an open or closed loop instead of its own (`N`)")
	fs.Float64Var(&f.checkTol, "check-tolerance", 0.05, "with --check-*: the largest relative `difference` of TTFT and tok/s accepted (exit 1 beyond, or on a different status)")
	fs.BoolVar(&f.checkWarmups, "check-warmups", true, "with --check-cells: run the benchmark's hidden warm-ups first, as 'servesim matrix' does")
}

func serveCmd() *command {
	return &command{
		Name:  "serve",
		Short: "run a simulated vLLM server that real clients (curl, the OpenAI SDKs, benchmarks) can talk to",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var f serveFlags
			f.register(fs)
			return func(args []string) error {
				if len(args) > 0 {
					return usage.Errorf("unexpected argument %q", args[0])
				}
				return runServe(fs, e, &sf, &f)
			}
		},
	}
}

func (f *serveFlags) check(fs *pflag.FlagSet) error {
	switch {
	case f.port < 0 || f.port > 65535:
		return usage.Errorf("--port %d: want 0 to 65535", f.port)
	case !(f.speed > 0 && f.speed <= server.MaxSpeed):
		return usage.Errorf("--speed %v: want simulated seconds per second in (0, %g]", f.speed, server.MaxSpeed)
	case !(f.charsPerToken >= 0.5 && f.charsPerToken <= 64):
		return usage.Errorf("--chars-per-token %v: want 0.5 to 64", f.charsPerToken)
	case f.eosMean < 0:
		return usage.Errorf("--eos-mean-tokens %d: want 0 (no EOS) or a mean length in tokens", f.eosMean)
	case f.maxBody < 1024:
		return usage.Errorf("--max-body-bytes %d: want at least 1024", f.maxBody)
	case f.maxConns < 1:
		return usage.Errorf("--max-connections %d: want at least 1", f.maxConns)
	case !(f.graceS >= 0 && f.graceS <= 3600):
		return usage.Errorf("--shutdown-grace-s %v: want 0 to 3600 seconds", f.graceS)
	case !(f.checkTol > 0 && f.checkTol < 10):
		return usage.Errorf("--check-tolerance %v: want a positive fraction such as 0.05", f.checkTol)
	}
	if f.checkCells != "" && f.checkWorkload != "" {
		return usage.Errorf("--check-cells and --check-workload: give one check at a time")
	}
	if fs.Changed("check-tolerance") && f.checkCells == "" && f.checkWorkload == "" {
		return usage.Errorf("--check-tolerance applies to a check (--check-cells or --check-workload)")
	}
	if fs.Changed("check-warmups") && f.checkCells == "" {
		return usage.Errorf("--check-warmups applies to the check of cells (--check-cells)")
	}
	for _, name := range []string{"rate", "requests"} {
		if fs.Changed(name) && f.checkWorkload == "" {
			return usage.Errorf("--%s applies to the check of a workload (--check-workload)", name)
		}
	}
	return nil
}

// addr is the address to listen on.
func (f *serveFlags) addr() string { return net.JoinHostPort(f.host, strconv.Itoa(f.port)) }

// servedName is the name clients give: the flag, else the launch command's
// --served-model-name, else its model, else the model's name.
func servedName(f *serveFlags, r *scenario.Resolved) string {
	switch {
	case f.served != "":
		return f.served
	case r.Deployment.Engine.ServedModel != "":
		return r.Deployment.Engine.ServedModel
	case r.Scenario.Model.Name != "":
		return r.Scenario.Model.Name
	}
	return r.Deployment.Model.Name
}

func runServe(fs *pflag.FlagSet, e *env, sf *scenarioFlags, f *serveFlags) error {
	if err := f.check(fs); err != nil {
		return err
	}
	start := time.Now()
	var keys []matrix.Key
	r, srv, err := sf.loadServer(e.stderr, e.info())
	if err != nil {
		return err
	}
	if f.checkCells != "" {
		if keys, err = r.Scenario.Protocol.ParseCells(f.checkCells, srv.Deployment.Engine.MaxModelLen); err != nil {
			return usage.Errorf("--check-cells %v", err)
		}
	}
	var spec *workload.Spec
	if f.checkWorkload != "" {
		if spec, err = workload.LoadArg("--check-workload", f.checkWorkload); err != nil {
			return err
		}
		if err := spec.Override(f.rate, fs.Changed("rate"), f.requests, fs.Changed("requests")); err != nil {
			return usage.Wrap(err)
		}
		if spec.Kind != workload.KindOpen && spec.Kind != workload.KindClosed {
			return usage.Errorf("--check-workload %s: a %s workload; the check sends open or closed loops (presets chat, chat-bursty, chat-ramp, rag, 1k1k, 8k1k, 1k8k, poisson-100k)", f.checkWorkload, spec.Kind)
		}
	}
	cfg := server.Config{Server: srv, Seed: r.Scenario.Seed, ModelName: servedName(f, r), Speed: f.speed,
		CharsPerToken: f.charsPerToken, EOSMeanTokens: f.eosMean, MaxBodyBytes: f.maxBody, MaxConnections: f.maxConns,
		Grace: time.Duration(f.graceS * float64(time.Second)), VLLMVersion: srv.Deployment.Engine.Version, Log: e.info()}
	if cfg.Grace == 0 {
		cfg.Grace = time.Nanosecond
	}
	s, err := server.New(cfg)
	if err != nil {
		return err
	}
	addr := f.addr()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s is in use by another program: give another --port (0 for any free one)", addr)
		}
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	url := "http://" + ln.Addr().String()
	d := srv.Deployment
	fmt.Fprintf(e.info(), "servesim: serving %q on %s: simulated vLLM %s, %s on %d x %s, max_model_len %d, KV cache %d tokens, speed %gx; ready in %d ms\n",
		cfg.ModelName, url, d.Engine.Version, d.Model.Name, d.Hardware.Count, d.Hardware.GPU.Name, d.Engine.MaxModelLen,
		srv.Layout.KVCacheSizeTokens, f.speed, time.Since(start).Milliseconds())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// This command handles SIGINT and SIGTERM itself (the program's default is to exit at once):
	// the first drains, the second cancels the running requests, a third exits.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	checking := keys != nil || spec != nil
	go func() {
		select {
		case sg := <-sig:
			if checking {
				fmt.Fprintf(e.stderr, "\nservesim: %v: stopping the check\n", sg)
			} else {
				fmt.Fprintf(e.stderr, "\nservesim: %v: no new requests; running ones have %gs to finish (again to cancel them now)\n", sg, f.graceS)
			}
			cancel()
		case <-ctx.Done():
			return
		}
		select {
		case <-sig:
			fmt.Fprintln(e.stderr, "servesim: cancelling the running requests")
			s.Abort()
			signal.Stop(sig)
		case <-ctx.Done():
		}
	}()

	if !checking {
		if err := s.Run(ctx, ln); err != nil {
			return err
		}
		s.WriteLag(e.info())
		return nil
	}
	served := make(chan error, 1)
	sctx, stopServer := context.WithCancel(context.Background())
	go func() { served <- s.Run(sctx, ln) }()
	var checkErr error
	if spec != nil {
		checkErr = checkWorkload(ctx, e, url, f, r, srv, spec)
	} else {
		checkErr = checkCells(ctx, e, url, f, r, srv, keys, sf.isSeed())
	}
	s.Abort()
	stopServer()
	if err := <-served; err != nil && checkErr == nil {
		checkErr = err
	}
	s.WriteLag(e.info())
	if ctx.Err() != nil && checkErr != nil {
		return fmt.Errorf("interrupted: %w", checkErr)
	}
	return checkErr
}

// checkCells runs the protocol over HTTP and compares with the simulated matrix.
func checkCells(ctx context.Context, e *env, url string, f *serveFlags, r *scenario.Resolved, srv *sim.Server, keys []matrix.Key, seed bool) error {
	fmt.Fprintf(e.info(), "servesim: simulating the matrix in process\n")
	want, err := llmbench.RunMatrix(srv, &r.Scenario.Protocol, llmbench.Options{Seed: r.Scenario.Seed})
	if err != nil {
		return err
	}
	c := server.NewClient(url, f.speed)
	defer c.Close()
	b := &server.LLMBenchClient{C: c, Proto: &r.Scenario.Protocol, Progress: func(label string) {
		fmt.Fprintf(e.info(), "servesim: over HTTP at %.0f s: %s\n", c.Now().Seconds(), label)
	}}
	start := time.Now()
	got, err := b.Run(ctx, keys, f.checkWarmups)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.info(), "servesim: the protocol over HTTP took %.1f s (%.0f s simulated)\n", time.Since(start).Seconds(), c.Now().Seconds())
	var meas *matrix.Matrix
	if m, _, err := loadMeasured("", seed, r); err == nil {
		meas = m
	}
	return server.CompareCells(e.stdout, f.speed, keys, got, want.Matrix, meas, f.checkTol)
}

// checkWorkload sends the workload over HTTP and compares it with the workload simulated in
// process.
func checkWorkload(ctx context.Context, e *env, url string, f *serveFlags, r *scenario.Resolved, srv *sim.Server, spec *workload.Spec) error {
	opts := workload.Options{Seed: r.Scenario.Seed}
	fmt.Fprintf(e.info(), "servesim: simulating the workload in process\n")
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
	c := server.NewClient(url, f.speed)
	defer c.Close()
	start := time.Now()
	shown := start
	got, err := c.RunWorkload(ctx, reqs, conc, func(done, total int) {
		if now := time.Now(); now.Sub(shown) >= 5*time.Second || done == total {
			shown = now
			fmt.Fprintf(e.info(), "servesim: over HTTP: %d of %d requests done\n", done, total)
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.info(), "servesim: the workload over HTTP took %.1f s (%.0f s simulated)\n", time.Since(start).Seconds(), got.DurationS)
	return server.CompareWorkload(e.stdout, f.speed, spec.Name, got, want, f.checkTol)
}
