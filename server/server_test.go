package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

// testSpeed runs the simulated clock fast enough that a test of a few hundred tokens takes
// milliseconds of wall time.
const testSpeed = 1000

// startTest serves the seed scenario on 127.0.0.1 at testSpeed, and stops it when the test ends.
func startTest(t testing.TB, mod func(*Config)) (*Server, string) {
	t.Helper()
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(r.Deployment, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Server: srv, Seed: 1, ModelName: "test-model", Speed: testSpeed, VLLMVersion: "0.0-test", Grace: time.Second}
	if mod != nil {
		mod(&cfg)
	}
	run := serve(t, cfg)
	return run.s, run.url
}

func postURL(t testing.TB, url, body string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return readResponse(t)(http.DefaultClient.Do(req))
}

func getURL(t testing.TB, url string) (int, []byte) {
	t.Helper()
	return readResponse(t)(http.Get(url))
}

// readResponse returns a reader of a request's outcome: the status and the whole body, the test
// failing on a transport error.
func readResponse(t testing.TB) func(*http.Response, error) (int, []byte) {
	return func(resp *http.Response, err error) (int, []byte) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, data
	}
}

type tokenUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type reply struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Text    string `json:"text"`
		Message *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Delta *struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *tokenUsage `json:"usage"`
}

func TestCompletionWhole(t *testing.T) {
	_, url := startTest(t, nil)
	code, body := postURL(t, url+"/v1/completions", `{"model":"test-model","prompt":[1,2,3,4,5,6,7,8,9,10],"max_tokens":37,"ignore_eos":true}`)
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var r reply
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if r.Object != "text_completion" || r.Model != "test-model" || len(r.Choices) != 1 {
		t.Fatalf("reply %s", body)
	}
	if r.Usage == nil || r.Usage.PromptTokens != 10 || r.Usage.CompletionTokens != 37 || r.Usage.TotalTokens != 47 {
		t.Errorf("usage %+v, want 10 prompt (token ids) + 37 completion (max_tokens, ignore_eos)", r.Usage)
	}
	if fr := r.Choices[0].FinishReason; fr == nil || *fr != "length" {
		t.Errorf("finish_reason %v, want length", fr)
	}
	if r.Choices[0].Text == "" {
		t.Error("empty text")
	}
}

func TestChatWhole(t *testing.T) {
	_, url := startTest(t, nil)
	code, body := postURL(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hello there"}],"max_tokens":5,"ignore_eos":true}`)
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var r reply
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Object != "chat.completion" || len(r.Choices) != 1 || r.Choices[0].Message == nil || r.Choices[0].Message.Role != "assistant" {
		t.Fatalf("reply %s", body)
	}
	if r.Usage == nil || r.Usage.CompletionTokens != 5 || r.Usage.PromptTokens < 1 {
		t.Errorf("usage %+v, want 5 completion tokens", r.Usage)
	}
}

// sse reads a server-sent event stream: the JSON chunks, and whether it ended with [DONE].
func sse(t testing.TB, url, body string) ([]reply, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	var out []reply
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not an SSE data line: %q", line)
		}
		if data == "[DONE]" {
			if sc.Scan() && sc.Text() != "" || sc.Scan() {
				t.Errorf("data after [DONE]: %q", sc.Text())
			}
			return out, true
		}
		var r reply
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		out = append(out, r)
	}
	return out, false
}

func TestStreamUsage(t *testing.T) {
	_, url := startTest(t, nil)
	for _, tc := range []struct {
		path, body, object string
	}{
		{"/v1/completions", `{"prompt":"The quick brown fox jumps over the lazy dog","max_tokens":50,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, "text_completion"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"The quick brown fox jumps over the lazy dog"}],"max_tokens":50,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, "chat.completion.chunk"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			chunks, done := sse(t, url+tc.path, tc.body)
			if !done {
				t.Fatal("stream did not end with data: [DONE]")
			}
			// At least one content chunk and the usage chunk: a client slower than the sped-up
			// clock may find all 50 tokens ready at once, and the server sends what is ready as one chunk.
			if len(chunks) < 2 {
				t.Fatalf("%d chunks", len(chunks))
			}
			last := chunks[len(chunks)-1]
			if last.Usage == nil || len(last.Choices) != 0 {
				t.Fatalf("last chunk %+v: want the usage chunk with no choices", last)
			}
			// 43 characters at 4 per token: 11 tokens for the completion; the chat template adds more.
			if last.Usage.CompletionTokens != 50 || last.Usage.TotalTokens != last.Usage.PromptTokens+50 || last.Usage.PromptTokens < 11 {
				t.Errorf("usage %+v, want 50 completion tokens", *last.Usage)
			}
			var text strings.Builder
			finished := 0
			for _, c := range chunks[:len(chunks)-1] {
				if c.Object != tc.object {
					t.Errorf("object %q, want %q", c.Object, tc.object)
				}
				if c.Usage != nil {
					t.Errorf("usage in a content chunk without continuous_usage_stats")
				}
				for _, ch := range c.Choices {
					text.WriteString(ch.Text)
					if ch.Delta != nil {
						text.WriteString(ch.Delta.Content)
					}
					if ch.FinishReason != nil {
						finished++
						if *ch.FinishReason != "length" {
							t.Errorf("finish_reason %q", *ch.FinishReason)
						}
					}
				}
			}
			if finished != 1 || text.Len() == 0 {
				t.Errorf("%d finish reasons, %d bytes of text", finished, text.Len())
			}
		})
	}
}

func TestStreamNoUsage(t *testing.T) {
	_, url := startTest(t, nil)
	chunks, done := sse(t, url+"/v1/completions", `{"prompt":[5,6,7],"max_tokens":8,"ignore_eos":true,"stream":true}`)
	if !done {
		t.Fatal("no [DONE]")
	}
	for _, c := range chunks {
		if c.Usage != nil {
			t.Fatalf("usage chunk without include_usage: %+v", c)
		}
	}
}

// TestEOSModel: without ignore_eos the output-length model may end a reply early, never past
// max_tokens, never before min_tokens.
func TestEOSModel(t *testing.T) {
	_, url := startTest(t, func(c *Config) { c.EOSMeanTokens = 4 })
	short := 0
	for i := range 20 {
		code, body := postURL(t, url+"/v1/completions", fmt.Sprintf(`{"prompt":[%d,2,3],"max_tokens":40,"min_tokens":2}`, 100+i))
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		var r reply
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		n := r.Usage.CompletionTokens
		if n < 2 || n > 40 {
			t.Errorf("%d tokens, want 2..40", n)
		}
		want := "length"
		if n < 40 {
			want = "stop"
			short++
		}
		if *r.Choices[0].FinishReason != want {
			t.Errorf("%d tokens, finish_reason %q, want %q", n, *r.Choices[0].FinishReason, want)
		}
	}
	if short == 0 {
		t.Error("an EOS mean of 4 tokens never ended one of 20 replies before 40 tokens")
	}
}

// errBody checks a vLLM error body: {"error": {"message", "type", "param", "code"}}.
func errBody(t testing.TB, code int, body []byte, wantCode int, wantType string) string {
	t.Helper()
	if code != wantCode {
		t.Errorf("status %d, want %d: %s", code, wantCode, body)
	}
	var e struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
		t.Fatalf("not a JSON error body (%v): %s", err, body)
	}
	if e.Error.Code != wantCode || e.Error.Type != wantType || e.Error.Message == "" {
		t.Errorf("error %+v, want code %d type %s", *e.Error, wantCode, wantType)
	}
	return e.Error.Message
}

func TestErrorStatuses(t *testing.T) {
	s, url := startTest(t, nil)
	long := make([]string, s.lim.maxModelLen+1)
	for i := range long {
		long[i] = "1"
	}
	for _, tc := range []struct {
		name, path, body string
		code             int
		typ, msg         string
	}{
		{"too long", "/v1/completions", `{"prompt":[` + strings.Join(long, ",") + `]}`, 400, "BadRequestError", "maximum context length"},
		{"max_tokens past max_model_len", "/v1/completions", fmt.Sprintf(`{"prompt":[1],"max_tokens":%d}`, s.lim.maxModelLen), 400, "BadRequestError", "too large"},
		{"bad JSON", "/v1/completions", `{"prompt": "x",`, 400, "BadRequestError", "JSON"},
		{"bad JSON chat", "/v1/chat/completions", `not json`, 400, "BadRequestError", "JSON"},
		{"unknown model", "/v1/completions", `{"model":"gpt-9","prompt":"x"}`, 404, "NotFoundError", "gpt-9"},
		{"unknown model chat", "/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"x"}]}`, 404, "NotFoundError", "does not exist"},
		{"n 2", "/v1/completions", `{"prompt":"x","n":2}`, 400, "BadRequestError", "n = 2"},
		{"n 2 chat", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"n":2}`, 400, "BadRequestError", "n = 2"},
		{"empty prompt", "/v1/completions", `{"prompt":[]}`, 400, "BadRequestError", "empty"},
		{"no messages", "/v1/chat/completions", `{"messages":[]}`, 400, "BadRequestError", "messages"},
		{"token out of vocabulary", "/v1/completions", `{"prompt":[-1]}`, 400, "BadRequestError", "vocabulary"},
		{"wrong type", "/v1/completions", `{"prompt":"x","max_tokens":"ten"}`, 400, "BadRequestError", "max_tokens"},
		{"stream_options without stream", "/v1/completions", `{"prompt":"x","stream_options":{"include_usage":true}}`, 400, "BadRequestError", "stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postURL(t, url+tc.path, tc.body)
			msg := errBody(t, code, body, tc.code, tc.typ)
			if !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not say %q", msg, tc.msg)
			}
		})
	}
	code, body := getURL(t, url+"/v1/nothing")
	if code != 404 || !json.Valid(body) {
		t.Errorf("unknown path: %d %s", code, body)
	}
	code, body = getURL(t, url+"/v1/completions")
	if code != 405 || !json.Valid(body) {
		t.Errorf("GET /v1/completions: %d %s", code, body)
	}
}

func TestBodyLimit(t *testing.T) {
	_, url := startTest(t, func(c *Config) { c.MaxBodyBytes = 2048 })
	code, body := postURL(t, url+"/v1/completions", `{"prompt":"`+strings.Repeat("a", 4096)+`"}`)
	errBody(t, code, body, http.StatusRequestEntityTooLarge, "BadRequestError")
	code, body = postURL(t, url+"/v1/completions", `{"prompt":"`+strings.Repeat("a", 1000)+`","max_tokens":1}`)
	if code != 200 {
		t.Errorf("a body under the limit: %d %s", code, body)
	}
}

func TestInfoEndpoints(t *testing.T) {
	s, url := startTest(t, nil)
	code, body := getURL(t, url+"/health")
	if code != 200 {
		t.Errorf("/health: %d %s", code, body)
	}
	code, body = getURL(t, url+"/version")
	var v map[string]string
	if code != 200 || json.Unmarshal(body, &v) != nil || v["version"] != "0.0-test" {
		t.Errorf("/version: %d %s", code, body)
	}
	code, body = getURL(t, url+"/v1/models")
	var m struct {
		Object string `json:"object"`
		Data   []struct {
			ID          string `json:"id"`
			Object      string `json:"object"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if code != 200 || json.Unmarshal(body, &m) != nil {
		t.Fatalf("/v1/models: %d %s", code, body)
	}
	if m.Object != "list" || len(m.Data) != 1 || m.Data[0].ID != "test-model" || m.Data[0].Object != "model" || m.Data[0].MaxModelLen != s.lim.maxModelLen {
		t.Errorf("/v1/models: %s", body)
	}
}
