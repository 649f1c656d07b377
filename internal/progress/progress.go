// Package progress reports a long run's progress on stderr: a line redrawn in place on a
// terminal, whole lines at a bounded rate elsewhere, nothing when quiet.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/servesim/servesim/internal/numfmt"
	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Reporter reports a long run's progress on stderr. On a terminal one line is redrawn in place
// (carriage return) at most ten times a second; anywhere else (a log, a pipe, a shard's output
// file) it writes whole lines: one per tenth of each stage and at most one every ten seconds
// between them, so a log stays readable. Each line has the elapsed time and, once a stage is
// under way, an estimate of the time left. With --quiet it writes nothing.
type Reporter struct {
	w     io.Writer
	tty   bool
	quiet bool
	// after: nothing is drawn before the run has taken this long (short runs stay silent).
	after time.Duration
	start time.Time
	now   func() time.Time

	stage      string
	stageStart time.Time
	last       time.Time
	lastTenth  int
	drawn      bool // an in-place line is on screen
	printed    bool // something was reported (a run past `after` reports its last line too)
}

// New starts a reporter writing to w (with quiet, nothing) that stays silent for the first after.
func New(w io.Writer, quiet bool, after time.Duration) *Reporter {
	p := &Reporter{w: w, tty: isTerminal(w), quiet: quiet, after: after, now: time.Now}
	p.start = p.now()
	p.stageStart = p.start
	p.lastTenth = -1
	return p
}

// Update reports done of total units of what (a stage: "simulations", "cells"); a new what
// starts a new stage with its own estimate of the time left. A label (the unit just finished)
// is shown on a terminal only.
func (p *Reporter) Update(what string, done, total int, label ...string) {
	if p.quiet {
		return
	}
	now := p.now()
	if what != p.stage {
		p.EndLine()
		p.stage, p.stageStart, p.lastTenth = what, now, -1
		p.last = time.Time{}
	}
	if now.Sub(p.start) < p.after && !p.printed {
		return
	}
	p.printed = true
	el := now.Sub(p.start).Seconds()
	eta := ""
	if st := now.Sub(p.stageStart).Seconds(); done > 0 && done < total && st > 0 {
		eta = fmt.Sprintf(", about %s left", Seconds(st/float64(done)*float64(total-done)))
	}
	if !p.tty {
		tenth := 0
		if total > 0 {
			tenth = done * 10 / total
		}
		if tenth == p.lastTenth && now.Sub(p.last) < 10*time.Second {
			return
		}
		p.lastTenth, p.last = tenth, now
		fmt.Fprintf(p.w, "  %d/%d %s  %s%s\n", done, total, what, Seconds(el), eta)
		return
	}
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	fill := 0
	if total > 0 {
		fill = min(done*width/total, width)
	}
	lab := ""
	if len(label) > 0 && label[0] != "" {
		lab = " (" + label[0] + ")"
	}
	fmt.Fprintf(p.w, "\r  [%s%s] %d/%d %s%s  %s%s   ", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, what, lab, Seconds(el), eta)
	p.drawn = true
}

// Status reports a free-form state (a fit's stage and loss): redrawn in place on a terminal, a
// line at most every ten seconds elsewhere.
func (p *Reporter) Status(format string, a ...any) {
	if p.quiet {
		return
	}
	now := p.now()
	if now.Sub(p.start) < p.after {
		return
	}
	s := fmt.Sprintf(format, a...)
	if !p.tty {
		if !p.last.IsZero() && now.Sub(p.last) < 10*time.Second {
			return
		}
		p.last = now
		fmt.Fprintf(p.w, "  %s\n", s)
		return
	}
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "\r  %s   ", s)
	p.drawn = true
}

// EndLine ends an in-place line so that the next output starts on its own line.
func (p *Reporter) EndLine() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// Finish ends the report.
func (p *Reporter) Finish() { p.EndLine() }

// Elapsed is the time since the reporter started.
func (p *Reporter) Elapsed() time.Duration { return p.now().Sub(p.start) }

// Seconds writes a duration for people: "8.2 s", "3 min 05 s", "1 h 02 min".
func Seconds(s float64) string { return numfmt.Duration(s, 60) }
