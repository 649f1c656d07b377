package planner

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/vllmcmd"
	"github.com/servesim/servesim/workload"
)

// Launch is how to run one row for real: the `vllm serve` command of one replica (the row's swept
// flags, and of the others those vLLM would not choose anyway, so that importing it back gives the
// row's engine), the `vllm bench serve` command that offers the question's workload, and remarks.
type Launch struct {
	Serve          string `json:"vllm_serve"`
	VLLMBenchServe string `json:"vllm_bench_serve,omitempty"`
	// Replicas is the number of copies of the server (data-parallel replicas behind a load
	// balancer, each on TP GPUs).
	Replicas int      `json:"replicas"`
	Notes    []string `json:"notes,omitempty"`
}

// ServeModel is what `vllm serve` is given: the question's ServeModel, else its model reference.
func (qi *QuestionInfo) serveModel() string {
	if qi.ServeModel != "" {
		return qi.ServeModel
	}
	return qi.Model
}

func (qi *QuestionInfo) gpu(name string) (*hardware.GPU, error) {
	for i := range qi.GPUs {
		if strings.EqualFold(qi.GPUs[i].Name, name) {
			return &qi.GPUs[i], nil
		}
	}
	return nil, fmt.Errorf("GPU %q is not among the plan's candidates", name)
}

// RowEngine is the engine configuration a row runs (per replica) and the flags given for it.
func (p *Plan) RowEngine(r *Result) (deploy.EngineConfig, deploy.EngineArgs, deploy.ModelGPU, error) {
	qi := &p.Question
	if r.Scope != "" {
		return deploy.EngineConfig{}, deploy.EngineArgs{}, deploy.ModelGPU{}, fmt.Errorf("row %d is a hardware layout that no flags load", r.Index)
	}
	if qi.ModelArch == nil {
		return deploy.EngineConfig{}, deploy.EngineArgs{}, deploy.ModelGPU{}, fmt.Errorf("the plan has no model description")
	}
	g, err := qi.gpu(r.Config.GPU)
	if err != nil {
		return deploy.EngineConfig{}, deploy.EngineArgs{}, deploy.ModelGPU{}, err
	}
	t := deploy.ModelGPU{Model: variant(qi.ModelArch, r.Config.Weights), GPU: g}
	args := qi.RowArgs(&r.Config)
	e, _, err := deploy.Resolve(args, t)
	return e, args, t, err
}

// Launch returns row r's launch commands.
func (p *Plan) Launch(r *Result) (*Launch, error) {
	_, args, t, err := p.RowEngine(r)
	if err != nil {
		return nil, err
	}
	min, err := launchArgs(args, t)
	if err != nil {
		return nil, err
	}
	qi := &p.Question
	model := qi.serveModel()
	l := &Launch{Serve: vllmcmd.Format(model, min), Replicas: r.Config.Replicas()}
	if l.Replicas > 1 {
		l.Notes = append(l.Notes, fmt.Sprintf("%d replicas, each this command on its own %d GPU(s) (CUDA_VISIBLE_DEVICES), behind a load balancer that spreads requests round-robin", l.Replicas, r.Config.TP))
	}
	if w := r.Config.Weights; w != "native" && min.Quantization != "fp8" {
		l.Notes = append(l.Notes, fmt.Sprintf("weights %s: a checkpoint of the model in %s is needed (vLLM cannot convert this one when loading); serve it instead of %s", w, strings.ToUpper(r.Config.WeightFormat), model))
	}
	if r.Config.SpecTokens > 0 && qi.Drafter == "" && !strings.EqualFold(r.Config.SpecMethod, "mtp") && !strings.EqualFold(r.Config.SpecMethod, "ngram") {
		l.Notes = append(l.Notes, "the speculative drafter has no reference; give --drafter")
	}
	served := model
	if min.ServedModel != "" {
		served = min.ServedModel
	}
	bench, note := benchCommand(qi.Workload, model, served, r.Config.MaxModelLen, qi.Seed)
	l.VLLMBenchServe = bench
	if note != "" {
		l.Notes = append(l.Notes, note)
	}
	return l, nil
}

// launchArgs are the flags a row's command gives: the swept ones, explicit even where they are
// vLLM's default so that the command launches the row on another vLLM version too (TP 1 and expert
// parallelism off aside), and of the others those vLLM would not choose anyway.
func launchArgs(args deploy.EngineArgs, t deploy.ModelGPU) (deploy.EngineArgs, error) {
	min, err := deploy.Minimize(args, t)
	if err != nil {
		return min, err
	}
	if *args.TensorParallel > 1 {
		min.TensorParallel = args.TensorParallel
	}
	if *args.ExpertParallel {
		min.ExpertParallel = args.ExpertParallel
	}
	min.MaxModelLen, min.GPUMemoryUtilization, min.KVCacheDType = args.MaxModelLen, args.GPUMemoryUtilization, args.KVCacheDType
	min.MaxNumBatchedTokens, min.MaxNumSeqs = args.MaxNumBatchedTokens, args.MaxNumSeqs
	// The row's weights variant: the target already is the variant (its Quantization is the
	// method), so the flag that makes it must not be minimized away.
	if args.Quantization != "" {
		min.Quantization = args.Quantization
	}
	return min, nil
}

// benchCommand is the `vllm bench serve` run that offers workload w (vLLM's random dataset for
// fixed or drawn lengths, closed loop with --max-concurrency or open loop with --request-rate and
// --burstiness), with a note when it only approximates w.
func benchCommand(w *workload.Spec, model, served string, maxModelLen int, seed uint64) (string, string) {
	if w == nil {
		return "", ""
	}
	words := []string{"vllm", "bench", "serve", "--backend", "vllm", "--model", model}
	if served != model {
		words = append(words, "--served-model-name", served)
	}
	words = append(words, "--dataset-name", "random")
	lens := func(l workload.Lengths) {
		words = append(words, "--random-input-len", strconv.Itoa(l.InputTokens), "--random-output-len", strconv.Itoa(l.OutputTokens))
		if l.RangeRatio > 0 {
			words = append(words, "--random-range-ratio", strconv.FormatFloat(l.RangeRatio, 'g', -1, 64))
		}
		if l.PrefixTokens > 0 {
			words = append(words, "--random-prefix-len", strconv.Itoa(l.PrefixTokens))
		}
	}
	var note string
	switch w.Kind {
	case workload.KindClosed:
		lens(w.Lengths)
		words = append(words, "--num-prompts", strconv.Itoa(w.Closed.Requests), "--max-concurrency", strconv.Itoa(w.Closed.Concurrency))
	case workload.KindOpen:
		lens(w.Lengths)
		o := w.Open
		n := o.Requests
		if n == 0 {
			n = int(o.RatePerS * o.DurationS)
		}
		words = append(words, "--num-prompts", strconv.Itoa(n), "--request-rate", strconv.FormatFloat(o.RatePerS, 'g', -1, 64))
		if o.Process == "gamma" && o.CV > 0 {
			words = append(words, "--burstiness", strconv.FormatFloat(1/(o.CV*o.CV), 'g', 6, 64))
		}
		if len(o.Ramp) > 0 {
			note = "vllm bench serve has no rate ramp: the command offers the first rate only"
		}
		if w.Lengths.PrefixGroups > 1 {
			note = "vllm bench serve's random dataset shares one prefix, not several groups"
		}
	case workload.KindLLMBenchCell:
		proto := w.Cell.Protocol()
		tokens, err := proto.FitContext(w.Cell.Context, maxModelLen)
		if err != nil {
			return "", ""
		}
		lens(workload.Lengths{InputTokens: tokens, OutputTokens: proto.MaxOutput})
		words = append(words, "--num-prompts", strconv.Itoa(w.Cell.Concurrency), "--max-concurrency", strconv.Itoa(w.Cell.Concurrency))
		note = fmt.Sprintf("the question is an llm-inference-bench cell (%s streams of one %s-token prompt, measured over %g s); the vllm bench serve command is its nearest equivalent",
			numfmt.Commas(strconv.Itoa(w.Cell.Concurrency)), numfmt.Commas(strconv.Itoa(tokens)), proto.DurationS)
	default:
		return "", "a trace replay has no vllm bench serve equivalent (use --dataset-name custom with the trace's prompts)"
	}
	words = append(words, "--ignore-eos", "--seed", strconv.FormatUint(seed, 10))
	return strings.Join(words, " "), note
}

// AddCommands fills every row's Launch (rows that are whole pruned layouts have none).
func (p *Plan) AddCommands() error {
	for i := range p.Results {
		r := &p.Results[i]
		if r.Scope != "" {
			continue
		}
		l, err := p.Launch(r)
		if err != nil {
			return fmt.Errorf("row %d: %w", r.Index, err)
		}
		r.Launch = l
	}
	return nil
}

// WriteRow prints one row for a person (plan --explain-row): its configuration, status and
// predictions, the engine settings vLLM chooses for it, and its launch commands.
func (p *Plan) WriteRow(w io.Writer, index int) error {
	var r *Result
	for i := range p.Results {
		if p.Results[i].Index == index {
			r = &p.Results[i]
		}
	}
	if r == nil {
		return fmt.Errorf("row %d: not in the plan (rows 0..%d; a shard has only its own)", index, p.Rows-1)
	}
	c := &r.Config
	fmt.Fprintf(w, "Row %d: %s, weights %s (%s)\n", r.Index, c.Label(), c.Weights, c.WeightFormat)
	status := r.Status
	if r.Rank > 0 {
		status = fmt.Sprintf("%s, rank %d", status, r.Rank)
	}
	if r.Stage != "" {
		status += fmt.Sprintf(" at stage %s: %s", r.Stage, r.Reason)
	}
	fmt.Fprintf(w, "Status       %s\n", status)
	if r.Scope != "" {
		return nil
	}
	fmt.Fprintf(w, "Flags        kv %s, spec %s, max-num-batched-tokens %d, max-num-seqs %d, gpu-memory-utilization %.2f, max-model-len %d\n",
		kvText(c.KVCacheDType), c.specLabel(), c.MaxNumBatchedTokens, c.MaxNumSeqs, c.GPUMemoryUtilization, c.MaxModelLen)
	if r.Note != "" {
		fmt.Fprintf(w, "Note         %s\n", r.Note)
	}
	fmt.Fprintf(w, "Cost         $%s/h", money(r.PriceHour))
	if r.CostPerMTok > 0 {
		fmt.Fprintf(w, ", $%s per million output tokens", money(r.CostPerMTok))
	}
	fmt.Fprintln(w)
	if r.KVTokens > 0 {
		fmt.Fprintf(w, "KV cache     %s tokens per replica\n", commas(int64(r.KVTokens)))
	}
	if pf := r.Perf; pf != nil {
		q := fmt.Sprintf("p%g", 100*pf.Quantile)
		fmt.Fprintf(w, "Predicted    %s output tok/s; TTFT p50 %s ms, %s %s ms; TPOT p50 %s ms, %s %s ms; %s tok/s per user; %s (%s parameters)\n",
			num(pf.OutputTokS), num(pf.TTFTp50), q, num(pf.TTFTq), num(pf.TPOTp50), q, num(pf.TPOTq), num(pf.UserTokS), pf.Status, r.Source)
		for _, c := range pf.Checks {
			fmt.Fprintf(w, "Objective    %s\n", c.Text())
		}
		if o := pf.Overload; o != nil {
			fmt.Fprintf(w, "Overloaded   %s binds: %s\n", o.Binds, o.Message)
		}
		if r.Screened && p.Search != nil {
			fmt.Fprintf(w, "Screened     these figures are from the first %d of %d requests (the fast search's screen); --exhaustive simulates every row in full\n", p.Search.ScreenRequests, p.Search.Requests)
		}
	}
	e, args, t, err := p.RowEngine(r)
	if err != nil {
		return err
	}
	la, err := launchArgs(args, t)
	if err != nil {
		return err
	}
	_, defs, _ := deploy.Resolve(la, t)
	fmt.Fprintf(w, "Engine       vLLM %s: async_scheduling %v, enable_prefix_caching %v, enable_chunked_prefill %v, max_cudagraph_capture_size %d, block_size %s\n",
		e.Version, e.AsyncScheduling, e.PrefixCaching, e.ChunkedPrefill, e.MaxCaptureSize, blockText(e.BlockSize))
	if len(defs) > 0 {
		fmt.Fprintln(w, "Left to vLLM (the command does not give them; vLLM chooses, for this GPU and model):")
		for _, d := range defs {
			fmt.Fprintf(w, "  %s = %s: %s (%s)\n", d.Key, d.Value, d.Rule, d.Source)
		}
	}
	l, err := p.Launch(r)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nLaunch (one replica):\n  %s\n", l.Serve)
	if l.VLLMBenchServe != "" {
		fmt.Fprintf(w, "Benchmark:\n  %s\n", l.VLLMBenchServe)
	}
	for _, n := range l.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
	fmt.Fprintf(w, "Check it: servesim import vllm --gpu %s --vllm-version %s -- %s\n", c.GPU, e.Version, l.Serve)
	return nil
}

func blockText(b int) string {
	if b == 0 {
		return "auto (the attention backend's)"
	}
	return strconv.Itoa(b)
}
