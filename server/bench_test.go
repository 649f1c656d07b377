package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/servesim/servesim/vtime"
)

// BenchmarkStream is the server's cost per streamed request: a 64-token completion (token-id
// prompt, include_usage) over HTTP on 127.0.0.1, on a clock fast enough that the engine's own
// time is negligible. Reports the wall time and allocations of the whole round trip.
func BenchmarkStream(b *testing.B) {
	r := serve(b, testConfig(b, MaxSpeed))
	body := `{"prompt": [1, 2, 3, 4, 5, 6, 7, 8], "max_tokens": 64, "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true}}`
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Post(r.url+"/v1/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.HasSuffix(data, []byte("data: [DONE]\n\n")) {
			b.Fatalf("stream %q", data)
		}
	}
}

// BenchmarkMetrics is the cost of one /metrics page (snapshot from the loop and rendering).
func BenchmarkMetrics(b *testing.B) {
	s, err := New(testConfig(b, 1))
	if err != nil {
		b.Fatal(err)
	}
	s.Start()
	defer s.Stop()
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		snap, _ := s.snapshot()
		buf.Reset()
		s.writeMetrics(&buf, snap, s.streamLag.snapshot())
	}
	b.SetBytes(int64(buf.Len()))
}

// chunkWriter is a ResponseWriter that discards what it is given, flushes nowhere and signals
// every write: the handler's own cost without a network.
type chunkWriter struct {
	h       http.Header
	written chan int
}

func (d *chunkWriter) Header() http.Header { return d.h }
func (d *chunkWriter) WriteHeader(int)     {}
func (d *chunkWriter) Flush()              {}
func (d *chunkWriter) Write(p []byte) (int, error) {
	d.written <- len(p)
	return len(p), nil
}

// BenchmarkServerTokens is the server's own cost per streamed token at real-time pacing, where
// every delivery is its own chunk: the loop's delivery to a stream, the handler's wake-up, the
// SSE chunk (JSON, include_usage with continuous usage stats) and its write, into a writer that
// discards (no HTTP, no client, no engine). One op is one token.
func BenchmarkServerTokens(b *testing.B) {
	for _, c := range []struct {
		name, path string
		chat       bool
	}{{"completion", "/v1/completions", false}, {"chat", "/v1/chat/completions", true}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(testConfig(b, 1))
			if err != nil {
				b.Fatal(err)
			}
			body := `{"prompt": [1, 2, 3, 4, 5, 6, 7, 8], "max_tokens": 1000000, "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true, "continuous_usage_stats": true}}`
			q, aerr := s.lim.completion([]byte(body))
			if c.chat {
				q, aerr = s.lim.chat([]byte(`{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 1000000, "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true, "continuous_usage_stats": true}}`))
			}
			if aerr != nil {
				b.Fatal(aerr.message)
			}
			st := newStream(q, time.Now())
			o := newOutput(s, q, c.chat)
			w := &chunkWriter{h: http.Header{}, written: make(chan int, 1)}
			r := httptest.NewRequest(http.MethodPost, c.path, nil)
			done := make(chan struct{})
			go func() {
				s.streamOut(w, r, http.NewResponseController(w), st, o)
				close(done)
			}()
			b.ReportAllocs()
			var at vtime.Time
			bytes := 0
			for b.Loop() {
				at = at.Add(vtime.Millisecond)
				st.deliver(1, at, false, "")
				bytes += <-w.written
			}
			st.deliver(1, at, true, "length")
			for {
				select {
				case <-w.written:
					continue
				case <-done:
				}
				break
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "wire-B/token")
		})
	}
}
