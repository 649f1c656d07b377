package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestConnectionCap: with MaxConnections 1, a second client waits while the first holds its
// connection, and is served once it closes.
func TestConnectionCap(t *testing.T) {
	cfg := testConfig(t, 1)
	cfg.MaxConnections = 1
	r := serve(t, cfg)
	first := &http.Client{Transport: &http.Transport{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/v1/completions",
		strings.NewReader(`{"prompt":[1,2,3],"max_tokens":20000,"ignore_eos":true,"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := first.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	go func() {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 15 * time.Second}
		res, err := c.Get(r.url + "/health")
		if err != nil {
			got <- -1
			return
		}
		res.Body.Close()
		got <- res.StatusCode
	}()
	select {
	case code := <-got:
		t.Fatalf("a second connection was served (%d) while the only one allowed was open", code)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	resp.Body.Close()
	first.CloseIdleConnections()
	select {
	case code := <-got:
		if code != http.StatusOK {
			t.Errorf("the waiting client got %d, want 200", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting client was not served within 10 s of the first closing")
	}
}
