package protocol

import "github.com/servesim/servesim/vtime"

// Window is the measurement window of a decode cell, [Start, End).
type Window struct{ Start, End vtime.Time }

// NoWindow is the window before it starts: it contains no time.
func NoWindow() Window { return Window{Start: vtime.Never, End: vtime.Never} }

// Window is the window that starts at start (the poll that ended the readiness wait) and lasts
// DurationS.
func (p *Protocol) Window(start vtime.Time) Window {
	return Window{Start: start, End: start.Add(vtime.FromSeconds(p.DurationS))}
}

// Contains reports whether t is inside the window.
func (w Window) Contains(t vtime.Time) bool { return t >= w.Start && t < w.End }

// Seconds is the window's length.
func (w Window) Seconds() float64 { return w.End.Sub(w.Start).Seconds() }

// PollInterval is the time between two polls of the server's metrics.
func (p *Protocol) PollInterval() vtime.Duration { return vtime.FromSeconds(p.PollS) }

// WindowPolls lists the times of the polls taken inside the window: every poll interval after
// its start, up to and including its end (30 with the tool's 30 s and 1 s).
func (p *Protocol) WindowPolls(w Window) []vtime.Time {
	var out []vtime.Time
	for t := w.Start.Add(p.PollInterval()); t <= w.End; t = t.Add(p.PollInterval()) {
		out = append(out, t)
	}
	return out
}
