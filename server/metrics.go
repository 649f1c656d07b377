package server

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
)

// Histogram buckets, vLLM's (vllm/v1/metrics/loggers.py, PrometheusStatLogger).
func ttftBuckets() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
}

func itlBuckets() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
}

func requestLatencyBuckets() []float64 {
	return []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
}

// buckets125 is vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to max.
func buckets125(maxV int) []float64 {
	var out []float64
	for e := 1.0; ; e *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := m * e; v <= float64(maxV) {
				out = append(out, v)
			} else {
				return out
			}
		}
	}
}

// histogram is a Prometheus histogram: counts per bucket (the last one +Inf), sum and count.
type histogram struct {
	bounds []float64
	counts []uint64
	sum    float64
	count  uint64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v: Prometheus buckets are "le"
	h.counts[i]++
	h.sum += v
	h.count++
}

func (h histogram) clone() histogram {
	h.counts = append([]uint64(nil), h.counts...)
	return h
}

// engineMetrics are one engine's counters and histograms, owned by the loop.
type engineMetrics struct {
	promptTokens, generationTokens float64
	prefixQueries, prefixHits      float64
	drafts, draftTokens, accepted  float64
	acceptedPos                    []float64
	success                        map[string]float64
	ttft, itl, tpot                histogram
	e2e, queue, prefill            histogram
	decode, inference              histogram
	promptHist, genHist            histogram
	maxGenHist, maxTokensParam     histogram
	nParam                         histogram
}

func (m *engineMetrics) init(maxModelLen, spec int) {
	m.success = map[string]float64{"stop": 0, "length": 0, "abort": 0}
	m.acceptedPos = make([]float64, spec)
	m.ttft = newHistogram(ttftBuckets())
	m.itl, m.tpot = newHistogram(itlBuckets()), newHistogram(itlBuckets())
	for _, h := range []*histogram{&m.e2e, &m.queue, &m.prefill, &m.decode, &m.inference} {
		*h = newHistogram(requestLatencyBuckets())
	}
	b := buckets125(maxModelLen)
	m.promptHist, m.genHist, m.maxGenHist, m.maxTokensParam = newHistogram(b), newHistogram(b), newHistogram(b), newHistogram(b)
	m.nParam = newHistogram([]float64{1, 2, 5, 10, 20})
}

func (m *engineMetrics) clone() engineMetrics {
	c := *m
	c.acceptedPos = append([]float64(nil), m.acceptedPos...)
	c.success = map[string]float64{}
	for k, v := range m.success {
		c.success[k] = v
	}
	for _, h := range []*histogram{&c.ttft, &c.itl, &c.tpot, &c.e2e, &c.queue, &c.prefill, &c.decode, &c.inference, &c.promptHist, &c.genHist, &c.maxGenHist, &c.maxTokensParam, &c.nParam} {
		*h = h.clone()
	}
	return c
}

// engineGauges are an engine's state at a snapshot.
type engineGauges struct {
	running, waiting int
	kvUsage          float64
	preemptions      float64
	steps            int64
}

// snapshot is what /metrics shows, copied out of the loop.
type snapshot struct {
	at      vtime.Time
	gauges  []engineGauges
	metrics []engineMetrics
	lag     lagSnapshot
}

func (l *loop) snapshot() *snapshot {
	s := &snapshot{at: l.engines[0].Now(), lag: l.lag.snapshot()}
	for i, e := range l.engines {
		sc := e.Scheduler()
		s.gauges = append(s.gauges, engineGauges{running: sc.NumRunning(), waiting: sc.NumWaiting() + e.Pending(),
			kvUsage: sc.KV().Pool.Usage(), preemptions: float64(sc.Preemptions), steps: e.Steps})
		s.metrics = append(s.metrics, l.met[i].clone())
	}
	return s
}

// cacheInfo are the labels of vllm:cache_config_info (vLLM's CacheConfig fields, as strings).
func cacheInfo(srv *sim.Server) [][2]string {
	e := &srv.Deployment.Engine
	l := srv.Layout
	b := func(v bool) string {
		if v {
			return "True"
		}
		return "False"
	}
	return [][2]string{
		{"block_size", strconv.Itoa(l.BlockSize)},
		{"cache_dtype", e.KVCacheDType},
		{"enable_prefix_caching", b(e.PrefixCaching)},
		{"gpu_memory_utilization", strconv.FormatFloat(e.GPUMemoryUtilization, 'g', -1, 64)},
		{"kv_cache_max_concurrency", strconv.FormatFloat(l.MaxConcurrency, 'f', 2, 64)},
		{"kv_cache_size_tokens", strconv.Itoa(l.KVCacheSizeTokens)},
		{"num_gpu_blocks", strconv.Itoa(l.NumBlocks)},
	}
}

// promWriter writes the Prometheus text format.
type promWriter struct {
	w   io.Writer
	buf []byte // one line
}

// appendLabelValue appends v escaped as the text format wants (backslash, newline, quote).
func appendLabelValue(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '"':
			b = append(b, '\\', '"')
		default:
			b = append(b, c)
		}
	}
	return b
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func fmtFloat(v float64) string { return string(appendFloat(nil, v)) }

func appendLabels(b []byte, pairs [][2]string) []byte {
	if len(pairs) == 0 {
		return b
	}
	b = append(b, '{')
	for i, p := range pairs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p[0]...)
		b = append(b, '=', '"')
		b = appendLabelValue(b, p[1])
		b = append(b, '"')
	}
	return append(b, '}')
}

func (p *promWriter) family(name, typ, help string) {
	fmt.Fprintf(p.w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func (p *promWriter) sample(name string, labels [][2]string, v float64) {
	b := append(p.buf[:0], name...)
	b = appendLabels(b, labels)
	b = append(b, ' ')
	b = appendFloat(b, v)
	b = append(b, '\n')
	p.w.Write(b)
	p.buf = b
}

func (p *promWriter) histogram(name string, labels [][2]string, h histogram) {
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		p.sample(name+"_bucket", append(labels[:len(labels):len(labels)], [2]string{"le", fmtFloat(b)}), float64(cum))
	}
	cum += h.counts[len(h.bounds)]
	p.sample(name+"_bucket", append(labels[:len(labels):len(labels)], [2]string{"le", "+Inf"}), float64(cum))
	p.sample(name+"_count", labels, float64(h.count))
	p.sample(name+"_sum", labels, h.sum)
}

// writeMetrics renders a snapshot with vLLM's metric names, help texts and labels (model_name,
// engine), then servesim's own (the simulated clock and the server's lag behind it).
func (s *Server) writeMetrics(w io.Writer, snap *snapshot, streamLag lagSnapshot) {
	p := &promWriter{w: w}
	base := func(i int) [][2]string {
		return [][2]string{{"engine", strconv.Itoa(i)}, {"model_name", s.cfg.ModelName}}
	}
	n := len(snap.gauges)
	gauge := func(name, help string, v func(i int) float64) {
		p.family(name, "gauge", help)
		for i := 0; i < n; i++ {
			p.sample(name, base(i), v(i))
		}
	}
	counter := func(name, help string, v func(m *engineMetrics) float64) {
		p.family(name, "counter", help)
		for i := 0; i < n; i++ {
			p.sample(name, base(i), v(&snap.metrics[i]))
		}
	}
	hist := func(name, help string, h func(m *engineMetrics) histogram) {
		p.family(name, "histogram", help)
		for i := 0; i < n; i++ {
			p.histogram(name, base(i), h(&snap.metrics[i]))
		}
	}
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", func(i int) float64 { return float64(snap.gauges[i].running) })
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", func(i int) float64 { return float64(snap.gauges[i].waiting) })
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", func(i int) float64 { return snap.gauges[i].kvUsage })
	counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", func(m *engineMetrics) float64 { return m.prefixQueries })
	counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", func(m *engineMetrics) float64 { return m.prefixHits })
	p.family("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.")
	for i := 0; i < n; i++ {
		p.sample("vllm:num_preemptions_total", base(i), snap.gauges[i].preemptions)
	}
	counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", func(m *engineMetrics) float64 { return m.promptTokens })
	counter("vllm:generation_tokens_total", "Number of generation tokens processed.", func(m *engineMetrics) float64 { return m.generationTokens })
	p.family("vllm:request_success_total", "counter", "Count of successfully processed requests.")
	for i := 0; i < n; i++ {
		for _, r := range []string{"stop", "length", "abort"} {
			p.sample("vllm:request_success_total", append(base(i), [2]string{"finished_reason", r}), snap.metrics[i].success[r])
		}
	}
	hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", func(m *engineMetrics) histogram { return m.promptHist })
	hist("vllm:request_generation_tokens", "Number of generation tokens processed.", func(m *engineMetrics) histogram { return m.genHist })
	hist("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", func(m *engineMetrics) histogram { return m.maxGenHist })
	hist("vllm:request_params_n", "Histogram of the n request parameter.", func(m *engineMetrics) histogram { return m.nParam })
	hist("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", func(m *engineMetrics) histogram { return m.maxTokensParam })
	hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", func(m *engineMetrics) histogram { return m.ttft })
	hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", func(m *engineMetrics) histogram { return m.itl })
	hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", func(m *engineMetrics) histogram { return m.tpot })
	hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", func(m *engineMetrics) histogram { return m.e2e })
	hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", func(m *engineMetrics) histogram { return m.queue })
	hist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", func(m *engineMetrics) histogram { return m.inference })
	hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", func(m *engineMetrics) histogram { return m.prefill })
	hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", func(m *engineMetrics) histogram { return m.decode })
	if s.spec > 0 {
		counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", func(m *engineMetrics) float64 { return m.drafts })
		counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", func(m *engineMetrics) float64 { return m.draftTokens })
		counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", func(m *engineMetrics) float64 { return m.accepted })
		p.family("vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter", "Accepted tokens per draft position.")
		for i := 0; i < n; i++ {
			for k, v := range snap.metrics[i].acceptedPos {
				p.sample("vllm:spec_decode_num_accepted_tokens_per_pos_total", append(base(i), [2]string{"position", strconv.Itoa(k)}), v)
			}
		}
	}
	p.family("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig")
	for i := 0; i < n; i++ {
		p.sample("vllm:cache_config_info", append(s.cacheInfo[:len(s.cacheInfo):len(s.cacheInfo)], [2]string{"engine", strconv.Itoa(i)}), 1)
	}

	// servesim's own.
	p.family("servesim:simulated_time_seconds", "gauge", "The simulated clock: seconds since the server started, times --speed.")
	p.sample("servesim:simulated_time_seconds", nil, snap.at.Seconds())
	p.family("servesim:speed", "gauge", "Simulated seconds per wall-clock second (--speed).")
	p.sample("servesim:speed", nil, s.cfg.Speed)
	p.family("servesim:engine_steps_total", "counter", "Engine steps simulated.")
	for i := 0; i < n; i++ {
		p.sample("servesim:engine_steps_total", base(i), float64(snap.gauges[i].steps))
	}
	p.family("servesim:clock_lag_seconds", "histogram", "Wall-clock seconds by which the engine loop processed a simulated event after it was due (the server's lag behind the simulated clock).")
	p.histogram("servesim:clock_lag_seconds", nil, snap.lag.prometheus())
	p.family("servesim:stream_lag_seconds", "histogram", "Wall-clock seconds from when streamed tokens were due on the simulated clock to when their chunk was written to the client.")
	p.histogram("servesim:stream_lag_seconds", nil, streamLag.prometheus())
}
