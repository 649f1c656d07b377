package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeClock advances by step at each reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(step); return t }
}

// TestProgressPlainOffTerminal: stderr that is not a terminal (a buffer, a log, a shard's file)
// gets whole lines, at most one per tenth of a stage, with the time left; never a carriage return.
func TestProgressPlainOffTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&env{stderr: &b}, 0)
	p.now = fakeClock(10 * time.Millisecond)
	p.start, p.stageStart = p.now(), time.Time{}
	for i := 1; i <= 1000; i++ {
		p.update("screens", i, 1000)
	}
	for i := 1; i <= 40; i++ {
		p.update("full simulations", i, 40)
	}
	p.finish()
	out := b.String()
	if strings.Contains(out, "\r") {
		t.Fatalf("carriage return off a terminal:\n%q", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > 24 {
		t.Errorf("%d lines, want at most one per tenth of each stage:\n%s", len(lines), out)
	}
	if !strings.Contains(out, "500/1000 screens") || !strings.Contains(out, "left") || !strings.Contains(out, "40/40 full simulations") {
		t.Errorf("missing the stages, counts or the time left:\n%s", out)
	}
	// A stage's estimate of the time left comes from that stage's pace: at 10 ms a screen,
	// 500 left is about 5 s.
	if !strings.Contains(out, "500/1000 screens  5.0 s, about 5.0 s left") {
		t.Errorf("no time left for the screens' half-way line:\n%s", out)
	}
}

func TestProgressTerminalAndQuiet(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&env{stderr: &b}, 0)
	p.tty = true
	p.now = fakeClock(200 * time.Millisecond)
	p.start = p.now()
	for i := 1; i <= 5; i++ {
		p.update("cells", i, 5, "8K x 1")
	}
	p.finish()
	if out := b.String(); !strings.Contains(out, "\r  [") || !strings.Contains(out, "(8K x 1)") || !strings.HasSuffix(out, "\n") {
		t.Errorf("terminal: want a bar redrawn in place with the label, ended by a newline: %q", out)
	}
	b.Reset()
	q := newProgress(&env{stderr: &b, quiet: true}, 0)
	q.update("cells", 1, 2)
	q.status("fitting")
	q.finish()
	if b.Len() != 0 {
		t.Errorf("--quiet printed %q", b.String())
	}
}

// TestQuietCommand: --quiet leaves stderr empty on a successful run, and its stdout is the same.
func TestQuietCommand(t *testing.T) {
	args := []string{"simulate", "--workload", "chat", "--requests", "40", "--format", "csv"}
	var out1, err1, out2, err2 bytes.Buffer
	if code := run(args, &out1, &err1); code != 0 {
		t.Fatalf("exit %d: %s", code, err1.String())
	}
	if code := run(append(args, "--quiet"), &out2, &err2); code != 0 {
		t.Fatalf("--quiet: exit %d: %s", code, err2.String())
	}
	if err1.Len() == 0 || err2.Len() != 0 {
		t.Errorf("stderr without --quiet %q, with %q (want something, then nothing)", err1.String(), err2.String())
	}
	if out1.String() != out2.String() {
		t.Errorf("--quiet changed the results")
	}
	// Every command that reports on stderr is silent with --quiet (matrix printed its scenario
	// and parameter line; the parameter source is in its CSV and JSON).
	for _, args := range [][]string{{"matrix", "--format", "csv"}, {"capacity"}, {"explain", "--context", "8K", "--concurrency", "2"}, {"report", "--out", filepath.Join(t.TempDir(), "r.html")},
		{"validate", "--filter", "isim-llama2-7b-tp1-general", "--source", "inference-sim-training"}} {
		var out, errb bytes.Buffer
		if code := run(append(args, "--quiet"), &out, &errb); code != 0 || errb.Len() != 0 {
			t.Errorf("%v --quiet: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
