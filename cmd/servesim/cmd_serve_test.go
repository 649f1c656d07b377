package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/servesim/servesim/server"
	"github.com/spf13/pflag"
)

// TestServeLoopbackDefault: with no --host or --port, serve listens on 127.0.0.1:8000, vLLM's
// port on the loopback interface only (checked on the flags, without binding 8000).
func TestServeLoopbackDefault(t *testing.T) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	var f server.Options
	registerServe(fs, &f)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if got := f.Addr(); got != "127.0.0.1:8000" {
		t.Errorf("the default address is %s, want 127.0.0.1:8000", got)
	}
	if err := fs.Parse([]string{"--host", "::1", "--port", "0"}); err != nil {
		t.Fatal(err)
	}
	if got := f.Addr(); got != "[::1]:0" {
		t.Errorf("--host ::1 --port 0 gives %s, want [::1]:0", got)
	}
}

// serveChildEnv makes the test binary run servesim's main with the arguments in it (one per
// line), so a test can send the real program a real signal.
const serveChildEnv = "SERVESIM_TEST_SERVE_CHILD"

// TestServeChild is the child process of TestServeSignal (it does nothing in a normal run).
func TestServeChild(t *testing.T) {
	args := os.Getenv(serveChildEnv)
	if args == "" {
		t.Skip("runs only as the child process of TestServeSignal")
	}
	os.Args = append([]string{"servesim"}, strings.Split(args, "\n")...)
	main()
}

// streamEnd reads a streamed completion to its end and returns its last two events.
func streamEnd(resp *http.Response) (last2 []string, events int, err error) {
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			last2 = append(last2, l)
			events++
			if len(last2) > 2 {
				last2 = last2[1:]
			}
		}
	}
	return last2, events, sc.Err()
}

// TestServeSignal runs servesim serve as a process on 127.0.0.1 and sends it SIGTERM while two
// streams run: the short one finishes within the grace, the long one is cancelled with an error
// event and [DONE] when the grace runs out, new connections are refused, and the process exits 0.
func TestServeSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const grace = 2 * time.Second
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestServeChild$")
	cmd.Env = append(os.Environ(), serveChildEnv+"="+strings.Join([]string{"serve", "--host", "127.0.0.1", "--port", "0",
		"--speed", "1", "--shutdown-grace-s", fmt.Sprint(grace.Seconds())}, "\n"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The first line names the address.
	errLines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			errLines <- sc.Text()
		}
		close(errLines)
	}()
	var url string
	for url == "" {
		select {
		case l, ok := <-errLines:
			if !ok {
				t.Fatalf("serve exited before serving: %s", stdout.String())
			}
			if m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(l); m != nil {
				url = m[1]
			}
		case <-ctx.Done():
			t.Fatal("serve did not start within 60 s")
		}
	}
	post := func(maxTokens int) *http.Response {
		body := fmt.Sprintf(`{"prompt":[1,2,3],"max_tokens":%d,"ignore_eos":true,"stream":true}`, maxTokens)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST: %s", resp.Status)
		}
		return resp
	}
	// At real time the long stream runs for minutes; the short one for a fraction of the grace.
	long, short := post(100000), post(30)
	type end struct {
		last2  []string
		events int
		err    error
	}
	shortC, longC := make(chan end, 1), make(chan end, 1)
	go func() { l, n, err := streamEnd(short); shortC <- end{l, n, err} }()
	go func() { l, n, err := streamEnd(long); longC <- end{l, n, err} }()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	s := <-shortC
	if s.err != nil || len(s.last2) != 2 || s.last2[1] != "data: [DONE]" || !strings.Contains(s.last2[0], `"finish_reason":"length"`) {
		t.Errorf("the short stream ended with %q (%v), want its finish_reason and [DONE]", s.last2, s.err)
	}
	// New connections are refused while the long stream drains.
	if resp, err := http.Get(url + "/health"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("/health is 200 after SIGTERM, want refused or 503")
		}
	}
	l := <-longC
	if l.err != nil || len(l.last2) != 2 || l.last2[1] != "data: [DONE]" || !strings.Contains(l.last2[0], `"error"`) {
		t.Errorf("the long stream ended with %q (%v), want an error event and [DONE]", l.last2, l.err)
	}
	if d := time.Since(sent); d < grace {
		t.Errorf("the long stream was cancelled %v after SIGTERM, before the %v grace", d, grace)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve exited with %v after SIGTERM, want 0", err)
	}
	var rest []string
	for l := range errLines {
		rest = append(rest, l)
	}
	if msg := strings.Join(rest, "\n"); !strings.Contains(msg, "terminated: no new requests") {
		t.Errorf("stderr after SIGTERM:\n%s\nwant the shutdown notice", msg)
	}
}

// TestServeCheckFlags: the check flags are refused where they do not apply (exit 2, naming the
// flag), before anything listens.
func TestServeCheckFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--rate", "3"}, "--rate applies to the check of a workload (--check-workload)"},
		{[]string{"serve", "--requests", "3"}, "--requests applies to the check of a workload (--check-workload)"},
		{[]string{"serve", "--check-workload", "chat", "--check-cells", "8K:1"}, "give one check at a time"},
		{[]string{"serve", "--check-workload", "chat", "--check-warmups=false"}, "--check-warmups applies to the check of cells"},
		{[]string{"serve", "--check-workload", "bench-8Kx1"}, "the check sends open or closed loops"},
		{[]string{"serve", "--check-workload", "1k1k", "--rate", "2"}, "--rate: workload \"1k1k\" is a closed workload"},
		{[]string{"serve", "--check-workload", "chta"}, "--check-workload"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}
