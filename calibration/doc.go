// Package calibration fits the named parameters of the memory and step-time model (package model/param)
// to a measured benchmark matrix, cross-validates the fit, and estimates uncertainties.
//
// Shape (gonum optimize style): Fit(problem, settings) (*Result, error); zero settings mean
// defaults; the optimiser and its seeded starts are explicit. Candidate simulations run on worker
// goroutines; each simulation is single-threaded and deterministic, so a fit is reproducible.
//
// Reading order: fit.go (Problem, Settings, Result, DefaultFree, Fit, the Levenberg-Marquardt
// loop and the standard errors), eval.go (Weights, the residuals, the parallel evaluator),
// transform.go (bounded parameters to unconstrained coordinates), filter.go (Filter: which cells
// train), cv.go (CrossValidate), errors.go (CellErrors: MAPE and MdAPE per metric), report.go
// (Report, ParamEstimate, Split), summary.go (WriteSummary); target.go (Target, FitTargets,
// TargetReport) and vllmbenchtarget.go (VLLMBenchRun) for the second kind of measurement; multi.go
// (FitMulti, Entry, MultiResult) and multisource.go (MatrixSource, TargetSource, HeldOut) for
// several sources at once.
//
// # Targets: workload measurements
//
// Besides a matrix, a fit can take Targets: runs it simulates for each candidate parameter set and
// compares metric by metric (Target.Observe returns Observations, predicted and measured, in a
// fixed order). VLLMBenchRun is a `vllm bench serve --save-result` file: its recovered workload is
// simulated and output throughput, mean and median TTFT and TPOT, and mean ITL are fitted
// (weights: Weights.DecodeTotal, TTFT, PerRequest, TBT). FitTargets uses the same transform,
// soft-L1 log errors, prior pull, optimisers, starts and standard errors as Fit. With few metrics
// per file the prior pull weighs more than in a matrix fit.
//
// # The objective
//
// For each training cell and metric, r = w_metric x rho(log(predicted / measured)): decode total
// tok/s, per-request tok/s, time between tokens and TTFT for decode cells that ran in both the
// prediction and the measurement, prefill tok/s and TTFT for prefill rows, and a flat penalty
// Weights.Status for a decode cell whose status (Valid, Requests queued, Over capacity) is
// predicted wrong. rho is the soft-L1 loss, rho(r)^2 = 2 s^2 (sqrt(1 + (r/s)^2) - 1) with
// s = Weights.RobustScale (the "soft_l1" loss of SciPy's least_squares): quadratic for errors
// below about s, linear above, so one outlying measurement cannot drag every other cell. Each
// free parameter adds Weights.Prior x (u - u_prior), a weak pull toward its physical prior in the
// unconstrained coordinate u (a maximum a posteriori estimate), so a parameter the cells cannot
// see stays near its prior. The loss is the sum of squares. A measured kv_cache_size_tokens, when
// given, adds one residual for the memory terms.
//
// # The optimiser
//
// Each bounded parameter v in [lo, hi] is optimised as u = logit((g(v) - g(lo)) / (g(hi) -
// g(lo))), g = log for scale parameters and the identity otherwise, so no step leaves the bounds.
// The default method is Levenberg-Marquardt (Levenberg 1944, Marquardt 1963) on the residual
// vector: a forward-difference Jacobian (one parallel batch of n + 1 simulations) and three
// damping values tried at once; it stops when no damped step improves the loss or the relative
// improvement is below 1e-4. Starts: the first from Problem.Base, the others from seeded normal
// perturbations (math/rand/v2 PCG seeded with Settings.Seed); each scouts a few iterations and
// the best is refined to convergence. gonum's BFGS and Nelder-Mead are available as Method.
//
// # Uncertainty
//
// Standard errors by the delta method: Cov(u) = s^2 (J^T J)^-1 at the optimum, s^2 = loss /
// (informative residuals - free parameters), through the pseudo-inverse on the parameters the
// residuals see, mapped to parameter units with dv/du. ParamEstimate.AtBound warns when a value
// sits within 1 % of a bound. CrossValidate refits on the standard splits (the lower half of the
// measured concurrencies, of the contexts: concurrency <= 8 and context <= 64K on the seed; five
// folds by cell) and reports the held-out errors. Report.Priors are the training cells' errors
// under the deployment's priors, and Report.Warnings name the metrics a fit left worse than them.
//
// # Several sources at once
//
// FitMulti (multi.go, multisource.go) fits one parameter set to several measured sources: the seed
// matrix (MatrixSource), corpus tables (validate.FitSources), vllm bench result files
// (TargetSource). A source is jobs (simulations on a deployment) and a Score that turns their
// results into a fixed-length residual vector. Each free parameter of a job (DefaultFree on its
// deployment) becomes an Entry keyed by its level (model/param): one value per GPU for gpu-level
// parameters, per engine and version for engine-level ones, per model for model-level ones (Keys).
// Every entry starts at its deployment's prior (the GPU generation's) and adds the residual
// RobustScale x (g(v) - g(prior)) / sigma, g = log for scale parameters, sigma half the prior's
// band (taken as +-1 sd) or a quarter of the bounds: a Gaussian prior in which a log error of
// RobustScale in one metric weighs one standard deviation. A GPU the data does not cover has no
// entry and keeps its priors (MultiResult.ParamsFor); an entry no residual moves with stays at its
// prior (Seen false). Levenberg-Marquardt from the priors (one start, Settings.MaxIter, default 8);
// its Jacobian is taken column by column, each column re-simulating only the jobs its entry
// touches, on the worker pool. Held-out scoring: HeldOut (validate.Report.HeldOut for corpus
// sources, MatrixHeldOut for a matrix); `servesim fit --cv loso|logo` runs the folds.
//
// # Determinism
//
// The simulations a fit asks for are whole matrices, one per parameter set (llmbench.RunMatrix: the
// tool's schedule on one engine, every stage reseeded from the problem's seed and the job), run by
// Settings.Workers goroutines and placed by index, so the parameters do not depend on the number
// of workers (TestFitIndependentOfWorkers). Only Progress and
// Result.Elapsed read the wall clock, for people. On one machine a fit is reproducible bit for
// bit; across CPUs the floats may differ in the last bits, which is why the shipped calibration's
// test compares in units of the fit's standard errors (TestShippedCalibrationReproduces).
package calibration
