package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestErrors: bad requests get vLLM's status codes and bodies: {"error": {...}} with the code
// repeated in the body for API errors, {"detail": ...} for a path or method no route serves.
func TestErrorBodies(t *testing.T) {
	cfg := testConfig(t, 1000)
	cfg.MaxBodyBytes = 64 << 10
	r := serve(t, cfg)
	mml := seedServer(t).Deployment.Engine.MaxModelLen
	long := `{"prompt": "` + strings.Repeat("x", 4*mml) + `"}`
	cases := []struct {
		name, method, path, ctype, body string
		status                          int
		typ, param                      string
	}{
		{"bad JSON", "POST", "/v1/completions", "application/json", `{"prompt": "a",`, 400, "BadRequestError", ""},
		{"empty body", "POST", "/v1/completions", "application/json", ``, 400, "BadRequestError", ""},
		{"not an object", "POST", "/v1/completions", "application/json", `[1, 2]`, 400, "BadRequestError", ""},
		{"trailing data", "POST", "/v1/completions", "application/json", `{"prompt": "a"} {}`, 400, "BadRequestError", ""},
		{"wrong type", "POST", "/v1/completions", "application/json", `{"prompt": "a", "max_tokens": "ten"}`, 400, "BadRequestError", "max_tokens"},
		{"form body", "POST", "/v1/completions", "application/x-www-form-urlencoded", `prompt=a`, 400, "BadRequestError", ""},
		{"unknown model", "POST", "/v1/completions", "application/json", `{"model": "gpt-4", "prompt": "a"}`, 404, "NotFoundError", "model"},
		{"unknown model, chat", "POST", "/v1/chat/completions", "application/json", `{"model": "x", "messages": [{"role": "user", "content": "hi"}]}`, 404, "NotFoundError", "model"},
		{"no prompt", "POST", "/v1/completions", "application/json", `{"max_tokens": 5}`, 400, "BadRequestError", "prompt"},
		{"empty prompt", "POST", "/v1/completions", "application/json", `{"prompt": ""}`, 400, "BadRequestError", "prompt"},
		{"empty id list", "POST", "/v1/completions", "application/json", `{"prompt": []}`, 400, "BadRequestError", "prompt"},
		{"negative token id", "POST", "/v1/completions", "application/json", `{"prompt": [1, -2]}`, 400, "BadRequestError", "prompt"},
		{"token id past the vocabulary", "POST", "/v1/completions", "application/json", `{"prompt": [1, 99999999999]}`, 400, "BadRequestError", "prompt"},
		{"batch of prompts", "POST", "/v1/completions", "application/json", `{"prompt": ["a", "b"]}`, 400, "BadRequestError", "prompt"},
		{"n = 2", "POST", "/v1/completions", "application/json", `{"prompt": "a", "n": 2}`, 400, "BadRequestError", "n"},
		{"n = 0", "POST", "/v1/completions", "application/json", `{"prompt": "a", "n": 0}`, 400, "BadRequestError", "n"},
		{"best_of", "POST", "/v1/completions", "application/json", `{"prompt": "a", "best_of": 3}`, 400, "BadRequestError", "best_of"},
		{"logprobs", "POST", "/v1/completions", "application/json", `{"prompt": "a", "logprobs": 2}`, 400, "BadRequestError", "logprobs"},
		{"max_tokens 0", "POST", "/v1/completions", "application/json", `{"prompt": "a", "max_tokens": 0}`, 400, "BadRequestError", "max_tokens"},
		{"max_tokens past the context", "POST", "/v1/completions", "application/json", fmt.Sprintf(`{"prompt": "a", "max_tokens": %d}`, mml), 400, "BadRequestError", "max_tokens"},
		{"min_tokens over max_tokens", "POST", "/v1/completions", "application/json", `{"prompt": "a", "max_tokens": 4, "min_tokens": 5}`, 400, "BadRequestError", "min_tokens"},
		{"negative min_tokens", "POST", "/v1/completions", "application/json", `{"prompt": "a", "min_tokens": -1}`, 400, "BadRequestError", "min_tokens"},
		{"stream_options without stream", "POST", "/v1/completions", "application/json", `{"prompt": "a", "stream_options": {"include_usage": true}}`, 400, "BadRequestError", "stream_options"},
		{"no messages", "POST", "/v1/chat/completions", "application/json", `{"messages": []}`, 400, "BadRequestError", "messages"},
		{"bad role", "POST", "/v1/chat/completions", "application/json", `{"messages": [{"role": "robot", "content": "hi"}]}`, 400, "BadRequestError", "messages"},
		{"image content", "POST", "/v1/chat/completions", "application/json", `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}`, 400, "BadRequestError", "messages"},
		{"max_completion_tokens 0", "POST", "/v1/chat/completions", "application/json", `{"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 0}`, 400, "BadRequestError", "max_completion_tokens"},
		{"body over the limit", "POST", "/v1/completions", "application/json", `{"prompt": "` + strings.Repeat("y", 70<<10) + `"}`, 413, "BadRequestError", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, r.url+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", c.ctype)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e wireError
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("status %d, body not JSON: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d (%+v)", resp.StatusCode, c.status, e.Error)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if e.Error == nil {
				t.Fatal("no error object")
			}
			if e.Error.Code != c.status || e.Error.Type != c.typ || e.Error.Message == "" {
				t.Errorf("error %+v, want code %d, type %s and a message", *e.Error, c.status, c.typ)
			}
			got := ""
			if e.Error.Param != nil {
				got = *e.Error.Param
			}
			if got != c.param {
				t.Errorf("param %q, want %q", got, c.param)
			}
		})
	}
	// A prompt longer than max_model_len (text counts ceil(characters / 4) tokens): vLLM's 400
	// naming the context length. Sent with a body limit that admits it.
	t.Run("prompt past max_model_len", func(t *testing.T) {
		cfg := testConfig(t, 1000)
		r2 := serve(t, cfg)
		st, body := postJSON(t, r2.url, "/v1/completions", long)
		e := decodeError(t, body)
		if st != 400 || e.Error == nil || !strings.Contains(e.Error.Message, fmt.Sprintf("maximum context length is %d tokens", mml)) ||
			!strings.Contains(e.Error.Message, fmt.Sprintf("%d input tokens", mml)) {
			t.Errorf("status %d, body %.300s", st, body)
		}
	})
	for _, c := range []struct {
		method, path string
		status       int
	}{{"GET", "/v1/completions", 405}, {"POST", "/metrics", 405}, {"GET", "/v2/nothing", 404}, {"DELETE", "/v1/models", 405}} {
		req, _ := http.NewRequest(c.method, r.url+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e wireError
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if err != nil || resp.StatusCode != c.status || e.Detail == nil || *e.Detail != http.StatusText(c.status) {
			t.Errorf("%s %s: status %d, detail %v, err %v; want %d and {\"detail\": %q}", c.method, c.path, resp.StatusCode, e.Detail, err, c.status, http.StatusText(c.status))
		}
	}
}

// completion is the part of a non-streaming reply the tests read.
type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

type choice struct {
	Text         string `json:"text"`
	FinishReason string `json:"finish_reason"`
	Message      *struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
}

func complete(t *testing.T, url, path, body string) completion {
	t.Helper()
	st, data := postJSON(t, url, path, body)
	if st != 200 {
		t.Fatalf("%s: status %d: %s", body, st, data)
	}
	var c completion
	if err := json.Unmarshal(data, &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("%s: reply %s (%v)", body, data, err)
	}
	return c
}

// TestCompletion: a non-streaming reply counts its prompt (text by characters, token ids
// exactly), generates max_tokens with ignore_eos, and its text is one word per token, the same
// for the same prompt.
func TestCompletion(t *testing.T) {
	r := serve(t, testConfig(t, 1000))
	c := complete(t, r.url, "/v1/completions", `{"model": "test-model", "prompt": "0123456789abcdef!", "max_tokens": 12, "ignore_eos": true}`)
	if c.Object != "text_completion" || c.Model != "test-model" || !strings.HasPrefix(c.ID, "cmpl-") {
		t.Errorf("reply header %+v", c)
	}
	// 17 characters at 4 per token: 5 tokens.
	if c.Usage.PromptTokens != 5 || c.Usage.CompletionTokens != 12 || c.Usage.TotalTokens != 17 || c.Choices[0].FinishReason != "length" {
		t.Errorf("usage %+v, finish %q; want 5 + 12 = 17, length", c.Usage, c.Choices[0].FinishReason)
	}
	if n := len(strings.Fields(c.Choices[0].Text)); n != 12 {
		t.Errorf("text %q has %d words, want 12", c.Choices[0].Text, n)
	}
	again := complete(t, r.url, "/v1/completions", `{"prompt": "0123456789abcdef!", "max_tokens": 12, "ignore_eos": true}`)
	if again.Choices[0].Text != c.Choices[0].Text || again.ID == c.ID {
		t.Errorf("same prompt: text %q then %q, ids %s %s", c.Choices[0].Text, again.Choices[0].Text, c.ID, again.ID)
	}
	other := complete(t, r.url, "/v1/completions", `{"prompt": "another prompt", "max_tokens": 12, "ignore_eos": true}`)
	if other.Choices[0].Text == c.Choices[0].Text {
		t.Errorf("two prompts got the same text %q", c.Choices[0].Text)
	}
	for _, p := range []string{`[1, 2, 3, 4, 5, 6, 7]`, `[[1, 2, 3, 4, 5, 6, 7]]`} {
		ids := complete(t, r.url, "/v1/completions", `{"prompt": `+p+`, "max_tokens": 3, "ignore_eos": true}`)
		if ids.Usage.PromptTokens != 7 || ids.Usage.CompletionTokens != 3 {
			t.Errorf("prompt %s: usage %+v, want 7 prompt and 3 completion tokens", p, ids.Usage)
		}
	}
	// Completions default to 16 tokens (vLLM's CompletionRequest.max_tokens).
	def := complete(t, r.url, "/v1/completions", `{"prompt": "x", "ignore_eos": true}`)
	if def.Usage.CompletionTokens != 16 {
		t.Errorf("default max_tokens: %d tokens, want 16", def.Usage.CompletionTokens)
	}
	chat := complete(t, r.url, "/v1/chat/completions", `{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": [{"type": "text", "text": "hello"}]}], "max_completion_tokens": 9, "ignore_eos": true}`)
	// "<|system|>\nbe brief\n<|user|>\nhello\n<|assistant|>\n" is 49 characters: 13 tokens.
	if chat.Object != "chat.completion" || chat.Choices[0].Message == nil || chat.Choices[0].Message.Role != "assistant" ||
		len(strings.Fields(chat.Choices[0].Message.Content)) != 9 || chat.Usage.PromptTokens != 13 || chat.Usage.CompletionTokens != 9 {
		t.Errorf("chat reply %+v", chat)
	}
}

// TestOutputLength: without ignore_eos the reply ends at the output-length model's EOS (a
// prompt's length is fixed by the prompt), within min_tokens and max_tokens; finish_reason says
// which bound ended it.
func TestOutputLength(t *testing.T) {
	cfg := testConfig(t, 2000)
	cfg.EOSMeanTokens = 20
	r := serve(t, cfg)
	stops, short := 0, 0
	for i := 0; i < 12; i++ {
		prompt := fmt.Sprintf("prompt number %d", i)
		want := eosLength(20, cfg.Seed, textPrompt(prompt, 4, seedServer(t).Layout.BlockSize).hash)
		c := complete(t, r.url, "/v1/completions", fmt.Sprintf(`{"prompt": %q, "max_tokens": 60}`, prompt))
		got, fr := c.Usage.CompletionTokens, c.Choices[0].FinishReason
		switch {
		case want < 60:
			if got != want || fr != "stop" {
				t.Errorf("%q: %d tokens (%s), want %d (stop)", prompt, got, fr, want)
			}
			stops++
		default:
			if got != 60 || fr != "length" {
				t.Errorf("%q: %d tokens (%s), want 60 (length)", prompt, got, fr)
			}
		}
		again := complete(t, r.url, "/v1/completions", fmt.Sprintf(`{"prompt": %q, "max_tokens": 60}`, prompt))
		if again.Usage.CompletionTokens != got {
			t.Errorf("%q: %d tokens, then %d", prompt, got, again.Usage.CompletionTokens)
		}
		if want < 10 {
			short++
			m := complete(t, r.url, "/v1/completions", fmt.Sprintf(`{"prompt": %q, "max_tokens": 60, "min_tokens": 10}`, prompt))
			if m.Usage.CompletionTokens != 10 {
				t.Errorf("%q with min_tokens 10: %d tokens", prompt, m.Usage.CompletionTokens)
			}
		}
	}
	if stops == 0 || short == 0 {
		t.Errorf("of 12 prompts %d ended by EOS, %d before 10 tokens: the test does not test", stops, short)
	}
}

// TestEndpoints: /v1/models lists the served name with max_model_len, /version the vLLM
// version, /health answers 200 with an empty body.
func TestEndpoints(t *testing.T) {
	r := serve(t, testConfig(t, 100))
	st, body := getBody(t, r.url, "/v1/models")
	var m struct {
		Object string `json:"object"`
		Data   []struct {
			ID          string `json:"id"`
			Object      string `json:"object"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &m); err != nil || st != 200 || m.Object != "list" || len(m.Data) != 1 ||
		m.Data[0].ID != "test-model" || m.Data[0].MaxModelLen != seedServer(t).Deployment.Engine.MaxModelLen {
		t.Errorf("/v1/models: %d %s", st, body)
	}
	if st, body := getBody(t, r.url, "/version"); st != 200 || string(body) != "{\"version\":\"0.0.0-test\"}\n" {
		t.Errorf("/version: %d %q", st, body)
	}
	if st, body := getBody(t, r.url, "/health"); st != 200 || len(body) != 0 {
		t.Errorf("/health: %d %q", st, body)
	}
}
