package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzHandlers sends arbitrary bodies to the generation endpoints: no panic, and every answer
// is a 200 or a 4xx with vLLM's JSON error body.
func FuzzHandlers(f *testing.F) {
	for _, b := range []string{
		`{"prompt":"hello","max_tokens":3}`,
		`{"prompt":[1,2,3],"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"prompt":[[1,2]],"ignore_eos":true,"max_tokens":1}`,
		`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"max_completion_tokens":1,"stream":true}`,
		`{"prompt":"x","n":2}`, `{"model":"other","prompt":"x"}`, `{"prompt":[-5]}`, `{"prompt":`, `[]`, `null`, ``,
		`{"prompt":"x","max_tokens":-1,"min_tokens":9}`, `{"messages":[{"role":"robot"}]}`,
	} {
		f.Add(b, false)
		f.Add(b, true)
	}
	cfg := Config{Server: seedServer(f), Seed: 3, ModelName: "test-model", Speed: MaxSpeed, VLLMVersion: "0.0.0-test", MaxBodyBytes: 1 << 16}
	s, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	s.Start()
	f.Cleanup(s.Stop)
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string, chat bool) {
		path := "/v1/completions"
		if chat {
			path = "/v1/chat/completions"
		}
		// A valid request may ask for many tokens: it is cut short, its answer is not checked.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch {
		case w.Code == http.StatusOK:
		case w.Code >= 400 && w.Code < 500:
			var e struct {
				Error *struct {
					Message string `json:"message"`
					Type    string `json:"type"`
					Code    int    `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Code != w.Code {
				t.Fatalf("status %d without a JSON error body: %q", w.Code, w.Body.String())
			}
		default:
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body.String())
		}
	})
}
