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

// FuzzHandlers sends arbitrary bodies to both generation endpoints: no panic, and every refused
// request is a 4xx with vLLM's JSON error body whose code is the status. Accepted requests run
// on a fast clock and are cut after a short while (a fuzzed max_tokens can be large).
func FuzzHandlers(f *testing.F) {
	for _, s := range []string{
		`{"prompt": "hello", "max_tokens": 3}`,
		`{"prompt": [1, 2, 3], "max_tokens": 2, "stream": true, "stream_options": {"include_usage": true}}`,
		`{"prompt": [[5, 6]], "min_tokens": 1, "max_tokens": 2, "ignore_eos": true}`,
		`{"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 2}`,
		`{"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}], "stream": true}`,
		`{"prompt": "a", "n": 2}`, `{"model": "other", "prompt": "a"}`, `{"prompt": ""}`, `{`, `null`, `[]`, `"x"`,
		`{"prompt": {"a": 1}}`, `{"prompt": [1, "a"]}`, `{"messages": null}`, `{"max_tokens": -1, "prompt": "a"}`,
	} {
		f.Add(s)
	}
	cfg := testConfig(f, MaxSpeed)
	cfg.EOSMeanTokens = 4
	s, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	s.Start()
	f.Cleanup(s.Stop)
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			cancel()
			if w.Code == http.StatusOK {
				continue
			}
			if w.Code < 400 || w.Code >= 500 {
				t.Fatalf("%s %q: status %d: %s", path, body, w.Code, w.Body)
			}
			var e wireError
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Code != w.Code || e.Error.Message == "" {
				t.Fatalf("%s %q: status %d with body %q", path, body, w.Code, w.Body)
			}
		}
	})
}
