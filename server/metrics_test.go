package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads /metrics with Prometheus's own text parser (strict legacy names: vLLM's
// "vllm:..." names are legal there).
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	st, body := getBody(t, url, "/metrics")
	if st != 200 {
		t.Fatalf("/metrics: %d", st)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// value is the sum of a counter's or gauge's samples whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
	sum := 0.0
	for _, m := range f.Metric {
		if !hasLabels(m, want) {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			sum += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			sum += m.GetGauge().GetValue()
		default:
			t.Fatalf("%s is a %v", name, f.GetType())
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.Label {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

func histOf(t *testing.T, fams map[string]*dto.MetricFamily, name string) *dto.Histogram {
	t.Helper()
	f := fams[name]
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM || len(f.Metric) != 1 {
		t.Fatalf("%s: want one histogram series, got %v", name, f)
	}
	return f.Metric[0].GetHistogram()
}

// TestMetrics: after a known set of requests (streamed and whole, completions and chat, one
// prompt repeated), /metrics parses with Prometheus's parser, carries vLLM's names, labels and
// buckets, and its counters equal what the clients were served: prompt and generation tokens,
// finished requests by reason, one TTFT and e2e sample per request, the prefix cache's hits on the
// repeated prompt; under speculative decoding, every token after a request's first comes from a
// verify step (generated = requests + drafts + accepted).
func TestMetrics(t *testing.T) {
	cfg := testConfig(t, 500)
	cfg.EOSMeanTokens = 8
	r := serve(t, cfg)
	ids := func(n, salt int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa((i*7919 + salt) % 50000))
		}
		return "[" + b.String() + "]"
	}
	bodies := []struct {
		path, body string
		stream     bool
	}{
		{"/v1/completions", `{"prompt": ` + ids(300, 1) + `, "max_tokens": 33, "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true}}`, true},
		{"/v1/completions", `{"prompt": ` + ids(1000, 2) + `, "max_tokens": 70, "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true}}`, true},
		{"/v1/completions", `{"prompt": "some text prompt of a few tokens", "max_tokens": 5, "ignore_eos": true}`, false},
		{"/v1/completions", `{"prompt": "an EOS-ended reply", "max_tokens": 400}`, false},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "hi there"}], "max_tokens": 21, "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true}}`, true},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "and a whole reply"}], "max_tokens": 17, "ignore_eos": true}`, false},
	}
	var mu sync.Mutex
	prompt, generated, reasons := 0, 0, map[string]int{}
	add := func(u completion) {
		mu.Lock()
		prompt += u.Usage.PromptTokens
		generated += u.Usage.CompletionTokens
		reasons[u.Choices[0].FinishReason]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !b.stream {
				add(complete(t, r.url, b.path, b.body))
				return
			}
			add(streamed(t, r.url, b.path, b.body))
		}()
	}
	wg.Wait()
	// The same 4,096-token prompt twice, one after the other: the second hits the prefix cache.
	long := `{"prompt": ` + ids(4096, 3) + `, "max_tokens": 3, "ignore_eos": true}`
	add(complete(t, r.url, "/v1/completions", long))
	add(complete(t, r.url, "/v1/completions", long))
	n := len(bodies) + 2

	fams := scrape(t, r.url)
	model := map[string]string{"model_name": "test-model", "engine": "0"}
	for name, want := range map[string]float64{
		"vllm:prompt_tokens_total":     float64(prompt),
		"vllm:generation_tokens_total": float64(generated),
		"vllm:num_requests_running":    0,
		"vllm:num_requests_waiting":    0,
	} {
		if got := value(t, fams, name, model); got != want {
			t.Errorf("%s = %v, want %v (what the clients were served)", name, got, want)
		}
	}
	for _, reason := range []string{"length", "stop", "abort"} {
		if got := value(t, fams, "vllm:request_success_total", map[string]string{"model_name": "test-model", "finished_reason": reason}); got != float64(reasons[reason]) {
			t.Errorf("request_success_total{finished_reason=%q} = %v, want %d", reason, got, reasons[reason])
		}
	}
	if reasons["stop"] != 1 {
		t.Errorf("finish reasons %v: want one EOS-ended reply", reasons)
	}
	for _, name := range []string{"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
		"vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds", "vllm:request_prompt_tokens", "vllm:request_generation_tokens"} {
		if h := histOf(t, fams, name); h.GetSampleCount() != uint64(n) {
			t.Errorf("%s has %d samples, want %d", name, h.GetSampleCount(), n)
		}
	}
	if h := histOf(t, fams, "vllm:request_prompt_tokens"); h.GetSampleSum() != float64(prompt) {
		t.Errorf("request_prompt_tokens sum %v, want %d", h.GetSampleSum(), prompt)
	}
	// vLLM's buckets (vllm/v1/metrics/loggers.py), written out here from its source.
	wantBuckets := map[string][]float64{
		"vllm:time_to_first_token_seconds":  {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0},
		"vllm:inter_token_latency_seconds":  {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0},
		"vllm:e2e_request_latency_seconds":  {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0},
		"vllm:request_queue_time_seconds":   {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0},
		"vllm:request_prompt_tokens":        {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000},
		"vllm:request_decode_time_seconds":  {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0},
		"vllm:request_prefill_time_seconds": {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0},
	}
	for name, want := range wantBuckets {
		h := histOf(t, fams, name)
		var got []float64
		prev := uint64(0)
		for _, b := range h.Bucket {
			if !math.IsInf(b.GetUpperBound(), 1) {
				got = append(got, b.GetUpperBound())
			}
			if b.GetCumulativeCount() < prev {
				t.Errorf("%s: bucket counts not cumulative", name)
			}
			prev = b.GetCumulativeCount()
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s buckets %v, want vLLM's %v", name, got, want)
		}
	}
	hits := value(t, fams, "vllm:prefix_cache_hits_total", model)
	queries := value(t, fams, "vllm:prefix_cache_queries_total", model)
	bs := seedServer(t).Layout.BlockSize
	if queries != float64(prompt) || hits < float64(4096-2*bs) || hits > float64(4096) {
		t.Errorf("prefix cache: %v hits of %v queries; want the repeated 4,096-token prompt's blocks (block %d) of %d", hits, queries, bs, prompt)
	}
	drafts := value(t, fams, "vllm:spec_decode_num_drafts_total", model)
	accepted := value(t, fams, "vllm:spec_decode_num_accepted_tokens_total", model)
	k := seedServer(t).Deployment.Engine.SpecTokens()
	if drafts == 0 || float64(n)+drafts+accepted != float64(generated) || accepted > drafts*float64(k) {
		t.Errorf("spec decode: %v drafts, %v accepted of %v draft tokens; %d requests generated %d tokens", drafts, accepted, value(t, fams, "vllm:spec_decode_num_draft_tokens_total", model), n, generated)
	}
	if got := value(t, fams, "vllm:spec_decode_num_draft_tokens_total", model); got != drafts*float64(k) {
		t.Errorf("draft tokens %v, want %v drafts x %d", got, drafts, k)
	}
	kv := fmt.Sprint(seedServer(t).Layout.KVCacheSizeTokens)
	if value(t, fams, "vllm:cache_config_info", map[string]string{"kv_cache_size_tokens": kv, "engine": "0"}) != 1 {
		t.Errorf("no vllm:cache_config_info with kv_cache_size_tokens %s", kv)
	}
	if u := value(t, fams, "vllm:kv_cache_usage_perc", model); !(u >= 0 && u <= 1) {
		t.Errorf("kv_cache_usage_perc %v", u)
	}
	lag := histOf(t, fams, "servesim:clock_lag_seconds")
	if lag.GetSampleCount() == 0 {
		t.Error("servesim:clock_lag_seconds has no sample")
	}
	if sl := histOf(t, fams, "servesim:stream_lag_seconds"); sl.GetSampleCount() == 0 {
		t.Error("servesim:stream_lag_seconds has no sample")
	}
}

// streamed reads a streamed reply (include_usage) into the shape of a whole one, checking the
// SSE framing: the chunks' texts make the reply, the usage chunk has no choices, [DONE] ends it.
func streamed(t *testing.T, url, path, body string) completion {
	t.Helper()
	st, data := postJSON(t, url, path, body)
	if st != 200 {
		t.Errorf("%s: status %d: %s", body, st, data)
		return completion{Choices: make([]choice, 1)}
	}
	evs := sseEvents(t, data)
	if len(evs) < 3 || evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("stream %q", data)
	}
	out := completion{Choices: make([]choice, 1)}
	words := 0
	for _, ev := range evs[:len(evs)-1] {
		var c struct {
			completion
			Choices []struct {
				Text         string  `json:"text"`
				FinishReason *string `json:"finish_reason"`
				Delta        *struct {
					Content *string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		if len(c.Choices) == 0 {
			out.Usage = c.Usage
			continue
		}
		txt := c.Choices[0].Text
		if c.Choices[0].Delta != nil && c.Choices[0].Delta.Content != nil {
			txt = *c.Choices[0].Delta.Content
		}
		words += len(strings.Fields(txt))
		if c.Choices[0].FinishReason != nil {
			out.Choices[0].FinishReason = *c.Choices[0].FinishReason
		}
	}
	if words != out.Usage.CompletionTokens || out.Choices[0].FinishReason == "" {
		t.Errorf("%s: %d words streamed, usage says %d; finish %q", body, words, out.Usage.CompletionTokens, out.Choices[0].FinishReason)
	}
	return out
}
