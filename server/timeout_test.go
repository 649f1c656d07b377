package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTimeoutDefaults: with nothing set, the server has its documented timeouts (a server with
// none would hold connections of clients that never finish forever).
func TestTimeoutDefaults(t *testing.T) {
	s, err := New(testConfig(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	hs := s.httpServer()
	if hs.ReadHeaderTimeout != 10*time.Second || hs.IdleTimeout != 120*time.Second || hs.MaxHeaderBytes != 64<<10 {
		t.Errorf("http.Server: read header timeout %v, idle %v, header bytes %d; want 10s, 2m0s, 65536", hs.ReadHeaderTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	}
	if s.cfg.BodyReadTimeout != 60*time.Second || s.cfg.WriteTimeout != 60*time.Second || s.cfg.Grace != 30*time.Second {
		t.Errorf("body read timeout %v, write timeout %v, grace %v; want 1m0s, 1m0s, 30s", s.cfg.BodyReadTimeout, s.cfg.WriteTimeout, s.cfg.Grace)
	}
	for _, bad := range []func(c *Config){
		func(c *Config) { c.ReadHeaderTimeout = -1 },
		func(c *Config) { c.BodyReadTimeout = -1 },
		func(c *Config) { c.IdleTimeout = -1 },
	} {
		c := testConfig(t, 1)
		bad(&c)
		if _, err := New(c); err == nil {
			t.Errorf("a negative timeout accepted: %+v", c)
		}
	}
}

// closedWithin reads conn until the server closes it, failing the test if that takes longer than
// limit. It returns what the server wrote.
func closedWithin(t *testing.T, conn net.Conn, limit time.Duration) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(limit))
	data, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %v (it wrote %q)", limit, data)
	}
	return string(data)
}

// TestSlowlorisDisconnected: a client that sends its headers a byte at a time, never finishing
// them, is disconnected after the read-header timeout while another client is served.
func TestSlowlorisDisconnected(t *testing.T) {
	cfg := testConfig(t, 1)
	cfg.ReadHeaderTimeout = 300 * time.Millisecond
	r := serve(t, cfg)
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	trickled := make(chan int)
	go func() {
		n := 0
		defer func() { trickled <- n }()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte("X")); err != nil {
					return
				}
				n++
			}
		}
	}()
	if code, _ := getBody(t, r.url, "/health"); code != http.StatusOK {
		t.Errorf("another client got %d from /health, want 200", code)
	}
	closedWithin(t, conn, 10*time.Second)
	close(stop)
	if n := <-trickled; n < 2 {
		t.Errorf("the slow client sent %d header bytes before the disconnection: the test did not trickle", n)
	}
}

// TestIdleTimeout: a kept-alive connection left idle is closed after the idle timeout.
func TestIdleTimeout(t *testing.T) {
	cfg := testConfig(t, 1)
	cfg.IdleTimeout = 300 * time.Millisecond
	r := serve(t, cfg)
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("/health: %d, close %v; want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("the idle connection: %q, %v; want closed by the server within 10 s", rest, err)
	}
}

// TestSlowBodyTimeout: a client that stops sending its body gets vLLM's 400 error once the
// body-read timeout passes, and the connection is closed.
func TestSlowBodyTimeout(t *testing.T) {
	cfg := testConfig(t, 1)
	cfg.BodyReadTimeout = 300 * time.Millisecond
	r := serve(t, cfg)
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"prompt\": "); err != nil {
		t.Fatal(err)
	}
	got := closedWithin(t, conn, 10*time.Second)
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
	if err != nil {
		t.Fatalf("no HTTP response before the close: %q", got)
	}
	body, _ := io.ReadAll(resp.Body)
	if e := decodeError(t, body); resp.StatusCode != http.StatusBadRequest || e.Error == nil || !strings.Contains(e.Error.Message, "body") {
		t.Errorf("a stalled body: %d %s; want 400 with an error about the body", resp.StatusCode, body)
	}
}
