package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/servesim/servesim/scenario"
	"github.com/servesim/servesim/sim"
)

// seedSim is the seed scenario's simulated deployment, built once for the package's tests (the
// server only reads it).
var seedSim = sync.OnceValues(func() (*sim.Server, error) {
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{})
	if err != nil {
		return nil, err
	}
	return sim.NewServer(r.Deployment, r.Params)
})

func seedServer(t testing.TB) *sim.Server {
	t.Helper()
	srv, err := seedSim()
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// testConfig is the seed's server at the given speed, ignoring EOS unless the test sets it.
func testConfig(t testing.TB, speed float64) Config {
	return Config{Server: seedServer(t), Seed: 7, ModelName: "test-model", Speed: speed, VLLMVersion: "0.0.0-test"}
}

// running is a server serving on a loopback port for one test.
type running struct {
	s    *Server
	url  string
	stop context.CancelFunc
	done chan error
}

// serve starts cfg's server on 127.0.0.1 (any free port) and stops it when the test ends.
func serve(t testing.TB, cfg Config) *running {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{s: s, url: "http://" + ln.Addr().String(), stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Run(ctx, ln) }()
	t.Cleanup(func() {
		s.Abort()
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("the server did not stop within 20 s")
		}
	})
	return r
}

// postJSON sends a JSON body to url+path and returns the status and the whole response body.
func postJSON(t testing.TB, url, path, body string) (int, []byte) {
	t.Helper()
	return postURL(t, url+path, body)
}

func getBody(t testing.TB, url, path string) (int, []byte) {
	t.Helper()
	return getURL(t, url+path)
}

// sseEvents splits a text/event-stream body into its data payloads.
func sseEvents(t testing.TB, body []byte) []string {
	t.Helper()
	var out []string
	for _, ev := range bytes.Split(body, []byte("\n\n")) {
		ev = bytes.TrimSpace(ev)
		if len(ev) == 0 {
			continue
		}
		d, ok := bytes.CutPrefix(ev, []byte("data: "))
		if !ok {
			t.Fatalf("an event without data: %q", ev)
		}
		out = append(out, string(d))
	}
	return out
}

// wireError is an error body as vLLM writes it.
type wireError struct {
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	} `json:"error"`
	Detail *string `json:"detail"`
}

func decodeError(t testing.TB, data []byte) wireError {
	t.Helper()
	var e wireError
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %q", err, data)
	}
	return e
}
