package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/servesim/servesim/internal/usage"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/server"
)

// registerServe adds serve's own flags.
func registerServe(fs *pflag.FlagSet, f *server.Options) {
	fs.StringVar(&f.Host, "host", "127.0.0.1", "the `address` to listen on (vLLM's --host; 0.0.0.0 serves every interface)")
	fs.IntVar(&f.Port, "port", 8000, "the TCP `port` (vLLM's --port; 0: any free port, printed at start)")
	fs.Float64Var(&f.Speed, "speed", 1, "simulated seconds per wall-clock `second`: 1 paces the simulated engine to real time, 10 runs it ten times faster (up to 10000)")
	fs.StringVar(&f.ServedModelName, "served-model-name", "", "the model `name` clients give (default: the vllm command's --served-model-name, else its model)")
	fs.Float64Var(&f.CharsPerToken, "chars-per-token", 4, "the tokenizer stand-in: a text prompt of c characters is ceil(c / `N`) tokens")
	fs.IntVar(&f.EOSMeanTokens, "eos-mean-tokens", 256, "output-length model of requests without ignore_eos: EOS after a geometric number of tokens of this `mean` (at most max_tokens, at least min_tokens); 0: no EOS, every reply runs to max_tokens")
	fs.Int64Var(&f.MaxBodyBytes, "max-body-bytes", 64<<20, "largest request body in `bytes` (413 beyond)")
	fs.IntVar(&f.MaxConnections, "max-connections", 4096, "most client connections open at once (more wait to be accepted)")
	fs.Float64Var(&f.GraceS, "shutdown-grace-s", 30, "on SIGINT or SIGTERM, `seconds` the running requests get to finish before they are cancelled (a second signal cancels them at once)")
	fs.StringSliceVar(&f.CheckCells, "check-cells", nil, "instead of serving until stopped: run the benchmark protocol over HTTP for these `cells` (CTX:C for a decode cell, CTX:prefill for a prefill row, comma-separated, e.g. 8K:1,8K:32,8K:64,32K:128), compare with 'servesim matrix', and exit")
	fs.StringVar(&f.CheckWorkload, "check-workload", "", "instead of serving until stopped: send this `workload` (a preset such as chat or 1k1k, or a TOML file; an open or closed loop) over HTTP as a client, compare throughput, TTFT, TPOT and end-to-end latency with 'servesim simulate', and exit")
	registerOverrides(fs, &f.Overrides, "--check-workload")
	fs.Float64Var(&f.CheckTol, "check-tolerance", 0.05, "with --check-*: the largest relative `difference` of TTFT and tok/s accepted (exit 1 beyond, or on a different status)")
	fs.BoolVar(&f.CheckWarmups, "check-warmups", true, "with --check-cells: run the benchmark's hidden warm-ups first, as 'servesim matrix' does")
}

func serveCmd() *command {
	return &command{
		Name:   "serve",
		NoArgs: true,
		Short:  "run a simulated vLLM server that real clients (curl, the OpenAI SDKs, benchmarks) can talk to",
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var f server.Options
			registerServe(fs, &f)
			return func(args []string) error {
				return runServe(fs, e, &sf, &f)
			}
		},
	}
}

func runServe(fs *pflag.FlagSet, e *env, sf *scenarioFlags, f *server.Options) error {
	if err := f.Check(fs.Changed); err != nil {
		return err
	}
	start := time.Now()
	var keys []matrix.Key
	r, srv, err := sf.loadServer(e.stderr, e.info())
	if err != nil {
		return err
	}
	if len(f.CheckCells) > 0 {
		if keys, err = r.Scenario.Protocol.ParseCells(strings.Join(f.CheckCells, ","), srv.Deployment.Engine.MaxModelLen); err != nil {
			return usage.Errorf("--check-cells %v", err)
		}
	}
	spec, err := f.CheckSpec(fs.Changed)
	if err != nil {
		return err
	}
	d := srv.Deployment
	cfg := f.Config(srv, r.Scenario.Seed, f.ModelName(d.Engine.ServedModel, r.Scenario.Model.Name, d.Model.Name), e.info())
	s, err := server.New(cfg)
	if err != nil {
		return err
	}
	addr := f.Addr()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s is in use by another program: give another --port (0 for any free one)", addr)
		}
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(e.info(), "servesim: serving %q on %s: simulated vLLM %s, %s on %d x %s, max_model_len %d, KV cache %d tokens, speed %gx; ready in %d ms\n",
		cfg.ModelName, url, d.Engine.Version, d.Model.Name, d.Hardware.Count, d.Hardware.GPU.Name, d.Engine.MaxModelLen,
		srv.Layout.KVCacheSizeTokens, f.Speed, time.Since(start).Milliseconds())

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
				fmt.Fprintf(e.stderr, "\nservesim: %v: no new requests; running ones have %gs to finish (again to cancel them now)\n", sg, f.GraceS)
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
		checkErr = f.RunCheckWorkload(ctx, e.stdout, e.info(), url, srv, r.Scenario.Seed, spec)
	} else {
		meas, _, _ := r.LoadMeasured("", sf.isSeed())
		checkErr = f.RunCheckCells(ctx, e.stdout, e.info(), url, srv, &r.Scenario.Protocol, r.Scenario.Seed, keys, meas)
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
