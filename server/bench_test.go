package server

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
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
