package param

import (
	"fmt"
	"io"
	"math"
)

// Metric is a kind of prediction an interval is given for.
type Metric string

// The metrics with intervals.
const (
	// MetricThroughput: output tok/s (total tok/s, requests/s) of a run.
	MetricThroughput Metric = "throughput"
	// MetricTPOT: time per output token (and per-user tok/s, its inverse; the benchmark's time
	// between tokens).
	MetricTPOT Metric = "tpot"
	// MetricTTFT: time to first token.
	MetricTTFT Metric = "ttft"
	// MetricE2E: end-to-end latency of a request.
	MetricE2E Metric = "e2e"
)

// Metrics lists the metrics in report order.
func Metrics() []Metric { return []Metric{MetricThroughput, MetricTPOT, MetricTTFT, MetricE2E} }

// Z80 is z_0.9, the standard normal quantile that bounds a central 80 % interval.
const Z80 = 1.2815515655446004

// dependsOn lists the groups a metric depends on. The groups the deployment uses (Uses) weigh
// equally in the metric's variance.
func dependsOn(m Metric) []Group {
	switch m {
	case MetricTPOT:
		// The decode step: weights and KV streaming, GEMMs, collectives, overheads, acceptance and
		// expert coverage; not the memory reserves (KV capacity) as long as the batch fits.
		return []Group{GroupCompute, GroupMemory, GroupInterconnect, GroupOverhead, GroupModel, GroupAcceptance}
	case MetricTTFT:
		// Prefill compute, the steps it shares, the API server and queueing for KV capacity; not
		// acceptance or routing beyond the steps they lengthen (counted through compute/memory).
		return []Group{GroupCompute, GroupMemory, GroupInterconnect, GroupOverhead, GroupReserves, GroupModel}
	}
	return Groups() // throughput and end-to-end latency: everything
}

// Width is one named interval width: the log-scale standard deviation of a prediction's error
// (ln(measured / predicted)) when every group the metric depends on is of Class.
type Width struct {
	Name    string
	Class   Class
	Metric  Metric
	Unit    string
	Value   float64
	Lo, Hi  float64
	Meaning string
	// Source says where the value comes from (held-out errors it was estimated on).
	Source string
}

// Sources of the widths.
const (
	srcSeedCV         = "the seed's cross-validation (README, Known discrepancies on the seed: fit --train 'concurrency<=8' tests C >= 16 at decode total MAPE 4.9 %, per-request 4.1 %; --train 'context<=64K' tests >= 128K at 6.0 %, prefill 3.8 %): a MAPE of m is sigma = m / 0.80 for normal log errors; 0.07 covers the worse split"
	srcSeedTTFT       = "the seed's decode TTFT, in-sample (median APE 7.6 %, MAPE 11.2 %: sigma 0.11 from the median, 0.14 from the mean; the larger, as nothing held out tests it)"
	srcSeedE2E        = "no end-to-end latency in the seed: a request's E2E is its TTFT plus its output at the TPOT, dominated by the output for the seed's 2K-token outputs; between the TPOT and TTFT widths"
	srcWorkstation    = "the public RTX PRO 6000 Workstation runs of the seed's model (published by the community, not in the repository): with the gpu-level values transferred from the Server card, the decode step comes out 7.3 ms against the measured 6-7 ms (+4 to +22 %), and decode throughput with DFlash within about 10 %; 0.15 covers both"
	srcTransferredMid = "no held-out measurement of a transferred deployment for this metric: the root mean square of the calibrated and prior widths (between the two)"
	srcPriorV1        = "the deployments servesim expresses (vLLM V1) at priors only: inference-sim's corpus rows (servesim validate, every absolute-scored primary statistic but the output tok/s its constant arrival rates set) and the seed matrix (servesim matrix --uncalibrated, decode cells: total tok/s, time between tokens, TTFT), each source weighted equally: the 80th percentile of |ln(measured / predicted)| divided by z_0.9 (throughput 0.185, from the seed alone; TPOT 0.208, TTFT 0.300); E2E, which the seed does not measure, takes the TPOT width, as a request's E2E is mostly its output at the TPOT"
	srcUnsupportedGPU = "a GPU generation without measured data takes the measured generations' GPU-level values (hardware.generations: Hopper's, or Ampere's for Ada), so its error is at least how far two measured generations differ: Hopper's and Ampere's streaming-bandwidth efficiency, fitted to Vidur's profiles, are 0.923 and 0.798, ln ratio 0.145, and decode time, hence TPOT and throughput, scales with it; the same width for TTFT and E2E (their GEMM efficiencies differ less, 0.756 and 0.743, but their attention and collectives as much)"
	srcUnseen         = "the corpus's one model family that came to a generation after its priors were set: DeepSeek-R1 (deepseek_v3, MLA, block fp8) on H200, whose TPOT the Hopper priors fitted on Llama and Mixtral kernels missed by 25-60 % (|ln| 0.3-0.5: sigma 0.3 puts a 1.5x error at the 80 % bound) before the MLA and fp8 kernel terms it showed were added; TTFT, which the prefill kernels of a new family move more, 0.45; the widths are checked by fit --cv lofo (leave one model family out)"
	srcApproxEngine   = "dstack's rows (vLLM 0.6-0.7, V0) at priors, the corpus's only runs of an engine servesim approximates: their own 80 % width (throughput 0.704, TPOT 0.716, TTFT 2.841, E2E 0.858, as srcPriorV1 computes it) less the V1 prior width in quadrature; in-sample, as no other source runs V0"
)

// ClassUnsupportedGPU is not a provenance class: it keys the widths added (in quadrature) to
// every prediction for a GPU whose generation no measured data supports and whose GPU-level
// groups are all priors (Summary.Unsupported): those priors are another generation's values.
const ClassUnsupportedGPU Class = "unsupported-gpu-family"

// ClassUnseen is not a provenance class: it keys the widths added (in quadrature) to every
// prediction for a deployment that runs a model family, attention kind or weight format no
// measured run on its GPU generation covers (Summary.Unseen).
const ClassUnseen Class = "unseen"

// ClassApproxEngine is not a provenance class: it keys the widths added (in quadrature) to every
// prediction for a deployment whose engine servesim approximates rather than expresses (vLLM's
// V0 engine: V1's scheduler with V0's CPU costs; Summary.ApproxEngine).
const ClassApproxEngine Class = "approximate-engine"

// widths is the table (a fresh copy each call: no package-level state).
func widths() []Width {
	const unit = "ln units"
	w := func(c Class, m Metric, v float64, src string) Width {
		return Width{Name: fmt.Sprintf("sigma_%s_%s", c, m), Class: c, Metric: m, Unit: unit, Value: v, Lo: 0.01, Hi: 4,
			Meaning: fmt.Sprintf("standard deviation of ln(measured / predicted) %s when every parameter group it depends on is %s; the 80 %% interval is prediction x exp(+-1.28 sigma)", metricWords(m), c),
			Source:  src}
	}
	// Prior widths (srcPriorV1, rounded to two digits) and the approximated engine's extra widths
	// (srcApproxEngine: sqrt(0.704^2 - 0.18^2) and so on).
	calTTFT, calE2E, priTTFT, priE2E := 0.14, 0.10, 0.30, 0.21
	rms := func(a, b float64) float64 { return math.Sqrt((a*a + b*b) / 2) }
	v0 := func(m Metric, v float64) Width {
		return Width{Name: fmt.Sprintf("sigma_v0_engine_%s", m), Class: ClassApproxEngine, Metric: m, Unit: unit, Value: v, Lo: 0, Hi: 4,
			Meaning: fmt.Sprintf("standard deviation of ln(measured / predicted) %s added in quadrature for a deployment of an engine servesim approximates (vLLM V0, before 0.8)", metricWords(m)),
			Source:  srcApproxEngine}
	}
	unsupported := func(m Metric) Width {
		return Width{Name: fmt.Sprintf("sigma_unsupported_gpu_%s", m), Class: ClassUnsupportedGPU, Metric: m, Unit: unit, Value: 0.15, Lo: 0, Hi: 4,
			Meaning: fmt.Sprintf("standard deviation of ln(measured / predicted) %s added in quadrature for a GPU whose generation no measured data supports (its GPU priors are another generation's values)", metricWords(m)),
			Source:  srcUnsupportedGPU}
	}
	unseen := func(m Metric, v float64) Width {
		return Width{Name: fmt.Sprintf("sigma_unseen_%s", m), Class: ClassUnseen, Metric: m, Unit: unit, Value: v, Lo: 0, Hi: 4,
			Meaning: fmt.Sprintf("standard deviation of ln(measured / predicted) %s added in quadrature for a deployment whose model family, attention kind or weight format no measured run on its GPU generation covers", metricWords(m)),
			Source:  srcUnseen}
	}
	return []Width{
		w(ClassCalibrated, MetricThroughput, 0.07, srcSeedCV),
		w(ClassCalibrated, MetricTPOT, 0.07, srcSeedCV),
		w(ClassCalibrated, MetricTTFT, calTTFT, srcSeedTTFT),
		w(ClassCalibrated, MetricE2E, calE2E, srcSeedE2E),
		w(ClassTransferred, MetricThroughput, 0.15, srcWorkstation),
		w(ClassTransferred, MetricTPOT, 0.15, srcWorkstation),
		w(ClassTransferred, MetricTTFT, rms(calTTFT, priTTFT), srcTransferredMid),
		w(ClassTransferred, MetricE2E, rms(calE2E, priE2E), srcTransferredMid),
		w(ClassPrior, MetricThroughput, 0.18, srcPriorV1),
		w(ClassPrior, MetricTPOT, 0.21, srcPriorV1),
		w(ClassPrior, MetricTTFT, priTTFT, srcPriorV1),
		w(ClassPrior, MetricE2E, priE2E, srcPriorV1),
		unseen(MetricThroughput, 0.3),
		unseen(MetricTPOT, 0.3),
		unseen(MetricTTFT, 0.45),
		unseen(MetricE2E, 0.3),
		v0(MetricThroughput, 0.68),
		v0(MetricTPOT, 0.68),
		v0(MetricTTFT, 2.83),
		v0(MetricE2E, 0.83),
		unsupported(MetricThroughput),
		unsupported(MetricTPOT),
		unsupported(MetricTTFT),
		unsupported(MetricE2E),
	}
}

func metricWords(m Metric) string {
	switch m {
	case MetricThroughput:
		return "of a throughput (output tok/s)"
	case MetricTPOT:
		return "of the time per output token (and the per-user tok/s)"
	case MetricTTFT:
		return "of the time to first token"
	}
	return "of the end-to-end latency"
}

// Widths returns the interval widths (see Width), calibrated, transferred, prior, each by metric.
func Widths() []Width { return widths() }

// WidthTable is a set of widths by class and metric (ln units).
type WidthTable map[Class]map[Metric]float64

// DefaultWidths is the Widths table as a WidthTable.
func DefaultWidths() WidthTable {
	t := WidthTable{}
	for _, w := range widths() {
		if t[w.Class] == nil {
			t[w.Class] = map[Metric]float64{}
		}
		t[w.Class][w.Metric] = w.Value
	}
	return t
}

// Sigma is the log-scale width of metric m's prediction for a deployment with provenance s:
// sqrt of the mean, over the groups m depends on that the deployment uses, of each group's
// class width squared. Every group calibrated gives the calibrated width, every group a prior
// the prior width; a mix lies between, wider as more groups rest on priors. A deployment whose
// engine servesim approximates (s.ApproxEngine) adds that engine's width in quadrature, and so
// does a GPU family no measured data supports (s.Unsupported).
func (t WidthTable) Sigma(s *Summary, m Metric) float64 {
	sum, n := 0.0, 0
	for _, g := range dependsOn(m) {
		x, ok := s.Group(g)
		if !ok {
			continue
		}
		v := t[x.Class][m]
		sum += v * v
		n++
	}
	v := t[ClassPrior][m]
	if n > 0 {
		v = math.Sqrt(sum / float64(n))
	}
	if s.ApproxEngine != "" {
		e := t[ClassApproxEngine][m]
		v = math.Sqrt(v*v + e*e)
	}
	if s.Unsupported {
		e := t[ClassUnsupportedGPU][m]
		v = math.Sqrt(v*v + e*e)
	}
	if len(s.Unseen) > 0 {
		u := t[ClassUnseen][m]
		v = math.Sqrt(v*v + u*u)
	}
	return v
}

// Interval is a prediction's 80 % interval.
type Interval struct {
	Metric Metric  `json:"metric"`
	Value  float64 `json:"value"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Sigma  float64 `json:"sigma"`
}

// Interval80 is v's central 80 % interval v exp(-z sigma) .. v exp(+z sigma) for metric m.
func (t WidthTable) Interval80(s *Summary, m Metric, v float64) Interval {
	sg := t.Sigma(s, m)
	f := math.Exp(Z80 * sg)
	return Interval{Metric: m, Value: v, Lo: v / f, Hi: v * f, Sigma: sg}
}

// Interval80 is the interval with the default widths.
func (s *Summary) Interval80(m Metric, v float64) Interval {
	return DefaultWidths().Interval80(s, m, v)
}

// Contains reports whether x lies in the interval.
func (iv Interval) Contains(x float64) bool { return x >= iv.Lo && x <= iv.Hi }

// Factor is the interval's half-width as a factor, exp(z sigma) ("x/ 1.8").
func (iv Interval) Factor() float64 { return math.Exp(Z80 * iv.Sigma) }

// NamedInterval is one output metric's 80 % interval, under the metric's name in that output
// (JSON: {"name": ..., the interval's fields}).
type NamedInterval struct {
	Name string `json:"name"`
	Interval
}

// WriteIntervals writes intervals on one line after label: "name lo-hi (x/ f), ...".
func WriteIntervals(w io.Writer, label string, ivs []NamedInterval) {
	fmt.Fprint(w, label)
	for i, iv := range ivs {
		sep := ", "
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(w, "%s%s %s-%s (x/ %.2f)", sep, iv.Name, shortNumber(iv.Lo), shortNumber(iv.Hi), iv.Factor())
	}
	fmt.Fprintln(w)
}

// shortNumber writes an interval end with three significant digits or so.
func shortNumber(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
