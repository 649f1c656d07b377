package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/servesim/servesim/vtime"
)

// Client is an HTTP client of a vLLM-compatible server (servesim serve, or vLLM itself) that
// runs servesim's benchmark protocol and workloads against it. It keeps time on its own clock
// scaled by Speed, so that against a server running Speed times faster than real time its
// numbers are in the server's simulated seconds.
type Client struct {
	base  string
	model string
	clk   clock
	http  *http.Client
}

// NewClient is a client of the server at baseURL ("http://127.0.0.1:8000") whose clock runs
// speed times faster than the wall clock (1 for a real server). Its clock starts now.
func NewClient(baseURL string, speed float64) *Client {
	tr := &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: 90 * time.Second,
		ResponseHeaderTimeout: 0, DisableCompression: true}
	return &Client{base: strings.TrimRight(baseURL, "/"), clk: clock{start: time.Now(), speed: speed}, http: &http.Client{Transport: tr}}
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Now is the client's clock, in the server's simulated time.
func (c *Client) Now() vtime.Time { return c.clk.virtual(time.Now()) }

// sleepUntil waits until the client's clock reads t.
func (c *Client) sleepUntil(ctx context.Context, t vtime.Time) error {
	due := c.clk.wall(t)
	d := time.Until(due)
	if d <= 0 {
		return ctx.Err()
	}
	// A Go timer wakes up to 1 ms late: it sleeps to preciseAhead before the time, preciseSleep
	// the rest (an open loop's arrivals are on time to about 0.1 ms).
	if d > preciseAhead {
		tm := time.NewTimer(d - preciseAhead)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if d := time.Until(due); d > 0 {
		preciseSleep(d)
	}
	return ctx.Err()
}

// ServerInfo is what /v1/models says.
type ServerInfo struct {
	Model       string
	MaxModelLen int
}

// Info reads /v1/models: the first model is the one the client asks for.
func (c *Client) Info(ctx context.Context) (ServerInfo, error) {
	var out struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	body, err := c.get(ctx, "/v1/models")
	if err != nil {
		return ServerInfo{}, err
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Data) == 0 {
		return ServerInfo{}, fmt.Errorf("%s/v1/models: no model listed (%v)", c.base, err)
	}
	c.model = out.Data[0].ID
	return ServerInfo{Model: out.Data[0].ID, MaxModelLen: out.Data[0].MaxModelLen}, nil
}

func (c *Client) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s%s: %s: %s", c.base, path, resp.Status, clip(body))
	}
	return body, nil
}

// ServerMetrics are the values of /metrics the benchmark reads, summed over engines.
type ServerMetrics struct {
	Running, Waiting int
	Generated        int64
	// KVCacheSizeTokens is vllm:cache_config_info's kv_cache_size_tokens label (else
	// num_gpu_blocks x block_size; 0 when neither is there).
	KVCacheSizeTokens int
}

// Metrics reads /metrics.
func (c *Client) Metrics(ctx context.Context) (ServerMetrics, error) {
	body, err := c.get(ctx, "/metrics")
	if err != nil {
		return ServerMetrics{}, err
	}
	return parseServerMetrics(body), nil
}

// parseServerMetrics picks the benchmark's values out of a Prometheus text page.
func parseServerMetrics(body []byte) ServerMetrics {
	var m ServerMetrics
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, labels, value := splitSample(line)
		switch name {
		case "vllm:num_requests_running":
			m.Running += int(value)
		case "vllm:num_requests_waiting":
			m.Waiting += int(value)
		case "vllm:generation_tokens_total":
			m.Generated += int64(value)
		case "vllm:cache_config_info":
			if v, err := strconv.Atoi(labelValue(labels, "kv_cache_size_tokens")); err == nil {
				m.KVCacheSizeTokens += v
			} else {
				b, e1 := strconv.Atoi(labelValue(labels, "num_gpu_blocks"))
				s, e2 := strconv.Atoi(labelValue(labels, "block_size"))
				if e1 == nil && e2 == nil {
					m.KVCacheSizeTokens += b * s
				}
			}
		}
	}
	return m
}

// splitSample splits `name{labels} value` (labels without the braces).
func splitSample(line string) (name, labels string, value float64) {
	end := strings.LastIndexByte(line, ' ')
	if end < 0 {
		return "", "", 0
	}
	value, _ = strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
	head := line[:end]
	if i := strings.IndexByte(head, '{'); i >= 0 {
		return head[:i], strings.TrimSuffix(head[i+1:], "}"), value
	}
	return strings.TrimSpace(head), "", value
}

// labelValue is the value of label key in a label list `k="v",k2="v2"` (escapes undone).
func labelValue(labels, key string) string {
	for len(labels) > 0 {
		eq := strings.IndexByte(labels, '=')
		if eq < 0 || eq+1 >= len(labels) || labels[eq+1] != '"' {
			return ""
		}
		k := strings.TrimSpace(labels[:eq])
		rest := labels[eq+2:]
		var v strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			v.WriteByte(rest[i])
		}
		if k == key {
			return v.String()
		}
		if i+1 >= len(rest) {
			return ""
		}
		labels = strings.TrimPrefix(rest[i+1:], ",")
	}
	return ""
}

// Prompt names a prompt's content the way servesim's workloads do (sim.RequestSpec): Tokens long,
// its first PrefixTokens shared with every prompt of PrefixID, the rest its own content PromptID.
// The client sends it as token ids, so the server counts it exactly and sees the same sharing.
type Prompt struct {
	Tokens       int
	PromptID     uint64
	PrefixID     uint64
	PrefixTokens int
}

// promptTokenRange bounds the token ids sent: every model's vocabulary is larger.
const promptTokenRange = 1000

// ids are the prompt's token ids.
func (p Prompt) ids() []int64 {
	out := make([]int64, p.Tokens)
	for i := range out {
		id := p.PromptID
		if i < p.PrefixTokens {
			id = p.PrefixID ^ 0x7072656669780000
		}
		out[i] = int64(mix64(id, uint64(i)) % promptTokenRange)
	}
	return out
}

// CompletionBody is a streaming /v1/completions request for p with maxTokens output tokens run to
// the end (ignore_eos), with the usage in every chunk (continuous_usage_stats) so the client
// counts the tokens of multi-token chunks exactly.
func (c *Client) CompletionBody(p Prompt, maxTokens int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":`)
	m, _ := json.Marshal(c.model)
	b.Write(m)
	b.WriteString(`,"prompt":[`)
	buf := make([]byte, 0, 24)
	for i, id := range p.ids() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(strconv.AppendInt(buf[:0], id, 10))
	}
	fmt.Fprintf(&b, `],"max_tokens":%d,"temperature":0,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`, maxTokens)
	return b.Bytes()
}

// Result is what the client saw of one streamed request, on its clock.
type Result struct {
	Send, FirstToken, LastToken vtime.Time // -1: no token
	Tokens                      int
	// Finished: the stream ended with a finish reason (else it was cut or failed).
	Finished bool
	Reason   string
}

// StatusError is a request the server refused: its HTTP status and what it said.
type StatusError struct {
	Code int
	msg  string
}

func (e *StatusError) Error() string { return e.msg }

// errCut marks a stream the caller cancelled.
var errCut = errors.New("stream cancelled by the client")

// Stream sends a streaming completion request (a body from CompletionBody) and reads its events,
// calling onTokens(n, at) for every chunk that carries tokens. A request the caller cancels
// returns what it saw with an error wrapping context.Canceled.
func (c *Client) Stream(ctx context.Context, body []byte, onTokens func(n int, at vtime.Time)) (Result, error) {
	r := Result{FirstToken: -1, LastToken: -1}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/completions", bytes.NewReader(body))
	if err != nil {
		return r, err
	}
	req.Header.Set("Content-Type", "application/json")
	r.Send = c.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return r, &StatusError{Code: resp.StatusCode, msg: fmt.Sprintf("POST %s/v1/completions: %s: %s", c.base, resp.Status, clip(msg))}
	}
	rd := bufio.NewReaderSize(resp.Body, 64<<10)
	var ev struct {
		Choices []struct {
			Text         string  `json:"text"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	for {
		line, err := rd.ReadSlice('\n')
		if err != nil {
			if ctx.Err() != nil {
				return r, fmt.Errorf("%w: %w", errCut, ctx.Err())
			}
			return r, fmt.Errorf("the stream ended without [DONE] after %d tokens: %v", r.Tokens, err)
		}
		data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: "))
		if !ok {
			continue
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			return r, nil
		}
		ev.Choices, ev.Usage, ev.Error = nil, nil, nil
		if err := json.Unmarshal(data, &ev); err != nil {
			return r, fmt.Errorf("a stream event that is not JSON: %s", clip(data))
		}
		if ev.Error != nil {
			return r, fmt.Errorf("the server ended the stream: %s", ev.Error.Message)
		}
		if len(ev.Choices) == 0 {
			continue // the usage chunk
		}
		n := 0
		if ev.Usage != nil {
			n = ev.Usage.CompletionTokens - r.Tokens
		} else if ev.Choices[0].Text != "" {
			n = 1
		}
		if n > 0 {
			at := c.Now()
			if r.FirstToken < 0 {
				r.FirstToken = at
			}
			r.LastToken = at
			r.Tokens += n
			if onTokens != nil {
				onTokens(n, at)
			}
		}
		if fr := ev.Choices[0].FinishReason; fr != nil {
			r.Finished, r.Reason = true, *fr
		}
	}
}
