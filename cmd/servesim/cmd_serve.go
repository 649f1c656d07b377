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

	"github.com/servesim/servesim/llmbench"
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
		Long: `Serves vLLM's OpenAI-compatible HTTP API in front of the simulated engine of the scenario (the seed
by default; --config, --vllm-cmd "vllm serve ...", --gpu as for simulate). Every request enters the
simulated engine when it arrives; its tokens stream when the engine emits them (several per chunk
under speculative decoding, as vLLM streams them), the engine's clock paced to the wall clock, or
--speed times faster. Binds 127.0.0.1:8000 unless told otherwise.

Endpoints: POST /v1/completions and /v1/chat/completions (streaming or not; stream_options
include_usage and continuous_usage_stats; max_tokens or max_completion_tokens, min_tokens,
ignore_eos; n = 1; the prompt as text, a list of one text, token ids or a list of one list of
token ids), GET /v1/models, /health, /version (the simulated vLLM version) and /metrics
(Prometheus text: vLLM's metric names and labels model_name and engine: vllm:num_requests_running,
vllm:num_requests_waiting, vllm:kv_cache_usage_perc, vllm:prefix_cache_queries_total and _hits_total,
vllm:prompt_tokens_total, vllm:generation_tokens_total, vllm:request_success_total, vllm:num_preemptions_total,
the TTFT, inter-token latency, end-to-end, queue, prefill, decode and per-request TPOT histograms with
vLLM's buckets, the speculative-decoding draft and accepted counters, vllm:cache_config_info with
kv_cache_size_tokens; then servesim:simulated_time_seconds, servesim:speed and the server's lag
behind the simulated clock, servesim:clock_lag_seconds and servesim:stream_lag_seconds). Times in
/metrics are simulated seconds. Errors are vLLM's: status code and {"error": {"message", "type",
"param", "code"}} (400 for a prompt longer than max_model_len, bad JSON or parameters, 404 for an
unknown model, 413 for a body over --max-body-bytes), {"detail": ...} for an unknown path (404) or
method (405).

What is simulated and what is not:
  - Timing, queueing, chunked prefill, preemption, the prefix cache and speculative decoding are the
    engine's (the same engine as 'servesim simulate'). With data_parallel_size > 1 of a dense model,
    each replica is an engine (label engine="i"); a request goes to the one with the fewest in flight.
  - Prompt length: token ids count exactly; text counts ceil(characters / --chars-per-token) tokens
    (no tokenizer: about 4 characters per token of English text). A chat request is rendered as
    "<|role|>\n" + content + "\n" per message and "<|assistant|>\n", then counted the same way.
  - The prefix cache sees the prompts' contents: prompts sharing leading text or token ids share
    blocks (an identical prompt hits entirely; two levels of sharing, such as a common system prompt,
    are tracked; a prompt extending one that itself extended another shares only the first level).
  - Output: synthetic, deterministic words (the same prompt gets the same reply, as with greedy
    decoding). Its length: max_tokens (16 by default for completions; for chat, up to max_model_len)
    with "ignore_eos": true, else the output-length model: EOS after a geometric number of tokens of
    mean --eos-mean-tokens (the same prompt always gets the same length), at least min_tokens, at
    most max_tokens (finish_reason "stop" when EOS came first, else "length").
  - MoE routing: the share of the running batch whose prompt was seen before sets the workload
    parameter same_prompt step by step, so a benchmark's identical prompts cost what they cost in
    'servesim matrix' and distinct prompts what they cost in vllm bench workloads.
  - n > 1, best_of, echo, logprobs and non-text chat content are refused with a 400.

Safety: bodies up to --max-body-bytes, at most --max-connections connections, a 10 s limit on
request headers, 60 s on reading a body, 120 s on an idle kept-alive connection; a client that
stops reading its stream is cut off after 30 to 60 s (the request is then cancelled). SIGINT or SIGTERM: new requests get 503, the running ones get
--shutdown-grace-s to finish, then their streams end with an error event and [DONE]; a second
signal cancels them at once.

Check (--check-cells): the server starts (on --port, 0 for any free one), a client runs servesim's
benchmark protocol (readiness gate on /metrics, window, statuses) over HTTP against it, on a clock
scaled by --speed, and the result is compared with the same cells simulated in process ('servesim
matrix'); exit 1 when a status differs or a
TTFT or tok/s differs by more than --check-tolerance. At --speed 20 and more the client's and
server's wall-clock jitter (about 0.1-1 ms) is scaled by the speed; see docs/serve.md.

Check (--check-workload): the server starts, a client sends the workload (an open loop's requests
at their arrival times, or a closed loop's clients each sending its next request when the last
ends; --rate and --requests as for simulate) as streamed completions, and what it measured
(completed requests, output tokens, output tok/s, TTFT, TPOT and end-to-end p50/p90/p99) is
compared with the same workload simulated in process ('servesim simulate'); exit 1 when a count
differs or a figure by more than --check-tolerance and, for latencies, by more than 2 ms x --speed
(the wall-clock timing noise). p99s are checked from 1,000 requests (fewer: shown only; the
tail of a few requests moves with the engine's random draws).

Example:
  servesim serve
  servesim serve --vllm-cmd "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2" --gpu H100 --port 8001
  curl -N http://127.0.0.1:8000/v1/completions -H 'Content-Type: application/json' \
    -d '{"model": "glm-5.3-flash", "prompt": "Hello", "max_tokens": 64, "stream": true}'
  servesim serve --port 0 --speed 50 --check-cells 8K:1,8K:32,8K:64,32K:128
  servesim serve --port 0 --check-workload chat --requests 100 --rate 4`,
		Setup: func(fs *pflag.FlagSet, e *env) func([]string) error {
			var sf scenarioFlags
			sf.register(fs)
			var f serveFlags
			f.register(fs)
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				return runServe(fs, e, &sf, &f)
			}
		},
	}
}

func (f *serveFlags) check(fs *pflag.FlagSet) error {
	switch {
	case f.port < 0 || f.port > 65535:
		return usagef("--port %d: want 0 to 65535", f.port)
	case !(f.speed > 0 && f.speed <= server.MaxSpeed):
		return usagef("--speed %v: want simulated seconds per second in (0, %g]", f.speed, server.MaxSpeed)
	case !(f.charsPerToken >= 0.5 && f.charsPerToken <= 64):
		return usagef("--chars-per-token %v: want 0.5 to 64", f.charsPerToken)
	case f.eosMean < 0:
		return usagef("--eos-mean-tokens %d: want 0 (no EOS) or a mean length in tokens", f.eosMean)
	case f.maxBody < 1024:
		return usagef("--max-body-bytes %d: want at least 1024", f.maxBody)
	case f.maxConns < 1:
		return usagef("--max-connections %d: want at least 1", f.maxConns)
	case !(f.graceS >= 0 && f.graceS <= 3600):
		return usagef("--shutdown-grace-s %v: want 0 to 3600 seconds", f.graceS)
	case !(f.checkTol > 0 && f.checkTol < 10):
		return usagef("--check-tolerance %v: want a positive fraction such as 0.05", f.checkTol)
	}
	if f.checkCells != "" && f.checkWorkload != "" {
		return usagef("--check-cells and --check-workload: give one check at a time")
	}
	if fs.Changed("check-tolerance") && f.checkCells == "" && f.checkWorkload == "" {
		return usagef("--check-tolerance applies to a check (--check-cells or --check-workload)")
	}
	if fs.Changed("check-warmups") && f.checkCells == "" {
		return usagef("--check-warmups applies to the check of cells (--check-cells)")
	}
	for _, name := range []string{"rate", "requests"} {
		if fs.Changed(name) && f.checkWorkload == "" {
			return usagef("--%s applies to the check of a workload (--check-workload)", name)
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
			return usagef("--check-cells %v", err)
		}
	}
	var spec *workload.Spec
	if f.checkWorkload != "" {
		if spec, err = loadWorkloadFlag("--check-workload", f.checkWorkload); err != nil {
			return err
		}
		if err := spec.Override(f.rate, fs.Changed("rate"), f.requests, fs.Changed("requests")); err != nil {
			return usageError{err}
		}
		if spec.Kind != workload.KindOpen && spec.Kind != workload.KindClosed {
			return usagef("--check-workload %s: a %s workload; the check sends open or closed loops (presets chat, chat-bursty, chat-ramp, rag, 1k1k, 8k1k, 1k8k, poisson-100k)", f.checkWorkload, spec.Kind)
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
