package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGracefulShutdown: when Run's context ends, a stream that outlives the grace is cancelled
// with an error event and data: [DONE], and Run returns.
func TestGracefulShutdown(t *testing.T) {
	cfg := testConfig(t, 1)
	cfg.Grace = 300 * time.Millisecond
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ln) }()
	url := "http://" + ln.Addr().String()

	rctx, rcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer rcancel()
	// At real time, 20000 tokens take minutes: the stream is still running at shutdown.
	req, _ := http.NewRequestWithContext(rctx, http.MethodPost, url+"/v1/completions",
		strings.NewReader(`{"prompt":[1,2,3],"max_tokens":20000,"ignore_eos":true,"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		t.Fatal("no first event")
	}
	start := time.Now()
	cancel()
	var lines []string
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 || lines[len(lines)-1] != "data: [DONE]" || !strings.Contains(lines[len(lines)-2], `"error"`) {
		tail := lines
		if len(tail) > 2 {
			tail = tail[len(tail)-2:]
		}
		t.Errorf("the cancelled stream ended with %q, want an error event and data: [DONE]", tail)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10 s of the shutdown")
	}
	if d := time.Since(start); d < cfg.Grace {
		t.Errorf("the stream ended %v after the shutdown, before the %v grace", d, cfg.Grace)
	}
	if _, err := http.Get(url + "/health"); err == nil {
		t.Error("the server still accepts connections after Run returned")
	}
}
