// Command servesim simulates LLM serving on vLLM-style engines and plans capacity: it predicts the
// llm-inference-bench matrix a deployment would produce, calibrates the model's named parameters
// against measured runs, draws predicted against measured, runs general workloads and sweeps
// hardware and engine flags for the cheapest deployment that meets an objective. README.md
// describes what is modelled and what is not; `servesim help` and `servesim <command> --help`
// describe the commands.
//
// Usage:
//
//	servesim <command> [flags] [arguments]
//
// Commands (cli.go, commands()): capacity, config, explain, fit, fleet, hardware, import, kernels,
// matrix, merge, model, plan, plot, report, serve, simulate, validate, version, workload. Without --config a command uses the embedded seed scenario
// (package scenario), or an empty one when --vllm-cmd or --model-config gives the model; --gpu,
// --gpus (a count), --gpu-catalog (a GPU catalog file), --vllm-cmd (the engine flags and the model; every flag it leaves out takes vLLM's default),
// --model-config, --vllm-version, --params, --uncalibrated and --seed change the hardware, the
// engine, the model, the parameters and the seed of any simulating command, and --step-by-step
// makes it simulate every engine step request by request (package sim's reference mode; the
// default event-driven mode agrees with it).
//
// Reading order: main.go (signals, then run), cli.go (command: a pflag FlagSet with
// ContinueOnError, a one-line Short, the long help in help/<command>.txt embedded by help.go, and
// an action; run, usage errors, help), common.go (the flag groups several commands share,
// declared once: the scenario, --out, --vllm-bench; workloadflags.go: --rate/--requests and
// --slo-*), format.go (--format), then one cmd_<name>.go per command. This package holds flags
// and wiring only: each command's options and their checks are in the package that owns them
// (planner.Args, fleet.Options, server.Options, calibration.Options, validate.Args,
// vllmbench.Flags, scenario.Args, report.FigureArgs, workload.SLOArgs and Overrides), whose
// errors in how the command was called are internal/usage errors (exit 2); so the commands'
// behaviour is tested there and here only for parsing, exit codes and output files.
//
// Conventions: results go to stdout, progress and notes to stderr. Exit status 0 for success, 1
// for a failed run, 2 for a usage error (a bad flag, a missing argument, an unknown --format). An
// output file is written to a temporary name in the same directory and renamed
// (internal/fsutil), so an interrupted run leaves no partial file; plot's figures are one batch,
// renamed together at the end, so an interrupted plot leaves the old figures, not a mix. On SIGINT
// or SIGTERM the command removes its unfinished files and exits 130. A panic inside a command is reported as an
// internal error with exit status 1.
//
// Determinism: the same command line, inputs and seed give byte-identical output. Fits, plans and
// sweeps run independent single-threaded simulations on worker goroutines and place results by
// index, so the number of cores changes only how long they take. The HTML report carries the
// version (`servesim version`, internal/buildinfo) instead of a timestamp.
package main
