// Package planner answers a buyer's question: for this model, this traffic and these objectives,
// which GPUs, how many, and which vLLM flags, at what cost.
//
// Reading order: question.go (Question, Space, Config, the parameter chooser and the Uncertainty
// hook), enumerate.go (the sweep, each row's flags, layout-level pruning), evaluate.go (building a
// server, capacity pruning, simulating the workload), plan.go (Run, ranking, the capacity
// frontier, shards and Merge, the JSON form), render.go (table and CSV), commands.go (each row's
// launch commands, --explain-row).
//
// # Each row's engine
//
// A row's flags are the question's flags (Question.Engine: the scenario's flags as given when the
// model is the scenario's, else none but the engine version) with the row's layout (TP, EP; DP
// replicas are separate servers), its swept flags and max_model_len set; every other flag takes
// vLLM's default for the row's GPU and weights (deploy.Resolve), exactly as `vllm serve` with those
// flags would. The scenario's attention and MoE backends apply to rows on its GPU only.
// max_model_len is --max-model-len, else the scenario's, else what vLLM derives from the model's
// config; a question whose max_model_len or longest request exceeds the model's limit is refused
// (unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is among the flags), as vLLM refuses it.
//
// # Launch commands
//
// Plan.Launch gives a row's `vllm serve` command (one replica: the swept flags, explicit, and of the
// others those vLLM would not choose anyway) and the `vllm bench serve` command that offers the
// question's workload (exact for fixed or drawn lengths, closed or open loop; the nearest run for an
// llm-inference-bench cell; none for a trace). Imported back (`servesim import vllm --gpu GPU
// --vllm-version V -- COMMAND`) the command gives the row's engine, model and drafter
// (TestLaunchCommandsRoundTrip). The fp8 or bf16 variant of a checkpoint that is not 16-bit has no
// flag (another checkpoint is needed) and says so; the fp8 variant of a 16-bit checkpoint is
// --quantization fp8.
//
// # The sweep
//
// Rows are enumerated in a fixed order: GPU kind (catalog order) x weights variant x GPU count x
// TP (largest first; the rest of the count is data parallel) x expert parallel x KV-cache
// dtype x speculative setting x max-num-batched-tokens x max-num-seqs x
// gpu-memory-utilization. The speculative settings (Question.specOptions) are off and, for each
// k > 0 of the space, every method the model supports: the question's own (DFlash, EAGLE, a draft
// model) when its drafter is described, mtp when the checkpoint has MTP layers
// (num_nextn_predict_layers; k at most n_predict or a multiple of it), and ngram always (prompt
// lookup needs nothing but the target). A row's launch command carries its --speculative-config.
// Data parallel without expert parallel is DP independent replicas of a TP engine behind a load
// balancer; with expert parallel (MoE models) it is one engine with data-parallel attention and
// the experts spread over all TP x DP GPUs (vLLM --data-parallel-size DP --enable-expert-parallel,
// "wide EP", labelled "TP4 DP2 EP8"), the ranks stepping together as deploy.DPLockstep simulates
// them; max-num-seqs is per rank there, as vLLM's is.
// A hardware layout that no flag combination can load is one row, pruned
// with its reason:
//
//	format    the GPU has no tensor cores for a weight format (NVFP4 on H100): servesim does
//	          not invent an emulated speed. With weights "auto" the planner tries the fp8
//	          (or bf16) variant of the checkpoint on such GPUs instead, and says so.
//	parallel  TP does not divide the attention heads, or EP the experts
//	memory    weights and reserves exceed total x utilization even at the most favourable flags
//
// Every other row builds its server (sim.NewServer: per-GPU memory, KV layout, cost model); it
// may still be pruned at stage memory (one max_model_len request does not fit: the planner first
// retries with the workload's own length, rounded up to 1,024 tokens, and notes it), capacity
// (the benchmark's rule: C x (context + output) > kv_cache_size_tokens, per replica) or
// simulation (the streams never all run at once: the KV cache thrashes). The rest is simulated:
// the workload (a benchmark cell for --context/--users, else any workload.Spec) runs on one
// engine per distinct replica load (data-parallel replicas split it round-robin).
//
// Rows that differ only in a max-num-seqs the workload never reaches (>= its concurrency per
// replica) simulate identically: they share one simulation (Result.SameAs names the lowest row of
// the class), which is what keeps the default sweep within seconds.
//
// # Ranking and costs
//
// Each simulated row gets a status, in ranking order: ok (meets every objective with probability
// P(meet) >= ConfidentP, 0.9: the limits lie outside its predictions' 80 % intervals), marginal
// (the prediction meets them, with a lower probability), missed (misses one), queues (serves
// fewer of the question's simultaneous users at once than there are: max-num-seqs, per
// data-parallel rank of a wide-EP engine, or the requests its KV cache holds at the workload's
// mean request length, below the users per server; the others wait for whole answers, which no
// objective on TPOT alone would show), then pruned rows. P(meet) is the product over the
// objectives of Phi(ln(limit / prediction) / sigma) (per-user rates: ln(prediction / limit)),
// sigma the log-scale width of the metric for the row's provenance (param.WidthTable.Sigma).
// Within each status: price per hour (GPUs x catalog price) ascending, then P(meet) descending
// (rows that meet, surely or marginally), then dollars per million output tokens (price /
// simulated output tok/s), then the smallest objective headroom descending, then the row index.
// Headroom is (limit - value) / limit at the objectives' quantile (for per-user tok/s, (value -
// limit) / limit). The capacity frontier of the best layouts is computed from their KV capacity
// alone: the most streams per context and the longest context per stream count that the
// benchmark's admission rule allows.
//
// # Sources and intervals
//
// Each row says where its parameters come from (PolicyParams chooses as scenario.Resolve does):
// calibrated (a calibration fitted on this GPU, engine version and model family), transferred
// (fitted on another GPU or version of the family; dimensionless efficiencies carry over and the
// hardware facts are the new GPU's; a non-native weights variant is at best transferred) or
// prior. Question.Provenance gives each row its parameters' provenance by group, and its
// intervals from it (param.Summary.Interval80: wider as more groups rest on priors, and wider
// still for a GPU family no measured data supports, the rows marked PRIORS ONLY);
// Question.Uncertainty serves rows known only by their source tag. Without either, rows carry no
// interval and P(meet) is the prediction's own verdict (1 or 0).
//
// # Determinism, shards and merge
//
// Simulations run on worker goroutines (internal/workpool; Options.Workers, default GOMAXPROCS);
// each is single-threaded and seeded with the question's seed, and results are placed by row
// index, so the plan does not depend on the number of workers or their timing. Shard{i, n}
// evaluates the rows whose index mod n is i; every shard enumerates the same sweep, so Merge of
// all n shard plans gives the unsharded plan byte for byte (finalize depends only on the rows). A
// plan's fingerprint (a hash of the model, workload, GPUs with their prices, sweep, seed and
// parameters) guards against merging shards of different questions.
package planner
