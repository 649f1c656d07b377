package progress

import (
	"bytes"
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
	p := New(&b, false, 0)
	p.now = fakeClock(10 * time.Millisecond)
	p.start, p.stageStart = p.now(), time.Time{}
	for i := 1; i <= 1000; i++ {
		p.Update("screens", i, 1000)
	}
	for i := 1; i <= 40; i++ {
		p.Update("full simulations", i, 40)
	}
	p.Finish()
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
	p := New(&b, false, 0)
	p.tty = true
	p.now = fakeClock(200 * time.Millisecond)
	p.start = p.now()
	for i := 1; i <= 5; i++ {
		p.Update("cells", i, 5, "8K x 1")
	}
	p.Finish()
	if out := b.String(); !strings.Contains(out, "\r  [") || !strings.Contains(out, "(8K x 1)") || !strings.HasSuffix(out, "\n") {
		t.Errorf("terminal: want a bar redrawn in place with the label, ended by a newline: %q", out)
	}
	b.Reset()
	q := New(&b, true, 0)
	q.Update("cells", 1, 2)
	q.Status("fitting")
	q.Finish()
	if b.Len() != 0 {
		t.Errorf("--quiet printed %q", b.String())
	}
}
