package validate

import (
	"math"
	"path/filepath"
	"strings"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vllmbench"
	"github.com/servesim/servesim/workload"
)

// ResultSource is the source name of cases read from `vllm bench serve --save-result` files.
const ResultSource = "vllm-bench-result"

// MeasuredFromResult is a result file's measurement in the corpus's terms (vLLM's client
// definitions: TPOT per request (e2e - ttft) / (output - 1), then aggregated).
func MeasuredFromResult(r *vllmbench.Result) Measured {
	p99 := func(l *vllmbench.Latency) float64 {
		v, ok := l.At(99)
		if !ok {
			return math.NaN()
		}
		return v
	}
	return Measured{OutputTokS: r.OutputThroughput, TTFTMedianMS: r.TTFT.Median, TTFTMeanMS: r.TTFT.Mean, TTFTP90MS: math.NaN(), TTFTP99MS: p99(&r.TTFT),
		TPOTMedianMS: r.TPOT.Median, TPOTMeanMS: r.TPOT.Mean, TPOTP99MS: p99(&r.TPOT), ITLMedianMS: r.ITL.Median, ITLMeanMS: r.ITL.Mean,
		E2EMedianMS: r.E2EL.Median, E2EMeanMS: r.E2EL.Mean, E2EP99MS: p99(&r.E2EL), OutputTokSPerUser: math.NaN(), PrefillTokS: math.NaN(),
		InputTokS: math.NaN(), TotalTokS: r.TotalTokenThroughput, RequestsS: r.RequestThroughput, DurationS: r.DurationS}
}

// PrepareResult is a result file's run as a case on the given server: the workload recovered from
// the file (vllmbench.Result.Workload, with its notes) against the file's measurement.
func PrepareResult(r *vllmbench.Result, spec *workload.Spec, notes []string, srv *sim.Server, params string) *Prepared {
	id := strings.TrimSuffix(filepath.Base(r.Name), filepath.Ext(r.Name))
	m := MeasuredFromResult(r)
	c := &Case{ID: id, Source: ResultSource, Scoring: Absolute, facts: nanFacts(), Spec: spec, Workload: spec.Describe(),
		Notes: notes, measured: &m, model: r.ModelID, ModelFrom: srv.Deployment.Model.Name}
	return &Prepared{Case: c, Server: srv, Params: params, Measured: m}
}
