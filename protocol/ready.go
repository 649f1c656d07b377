package protocol

import "github.com/servesim/servesim/vtime"

// ReadyWaitLimit is how long a readiness gate without a timeout (C <= max_num_seqs, see
// ReadyTimeout) is waited for: 30 simulated minutes. A gate still closed then is given up
// (GateGaveUp) and the cell fails instead of being simulated for ever: its streams never all run
// at once (the KV cache cannot hold them beside each other's prefill chunks, or they thrash). It
// bounds the simulation's effort; the benchmark itself has no such limit, it times out instead
// (see ReadyTimeout).
const ReadyWaitLimit = 30 * 60 * vtime.Second

// Poll is one sample of what the benchmark watches while it waits: the server's
// vllm:num_requests_running and vllm:num_requests_waiting, and its own streams.
type Poll struct {
	Running, Waiting int
	// Streaming counts the client streams whose current request has received a token.
	Streaming int
}

// Ready is the readiness condition of a cell with c streams on one poll: nothing waiting, at least
// c running, and every stream has a token.
func Ready(s Poll, c int) bool { return s.Waiting == 0 && s.Running >= c && s.Streaming >= c }

// ReadyTimeout is how long after the streams start the benchmark stops waiting for readiness and
// starts the window anyway. readyTimeout is the fitted ready_timeout_s parameter. It applies when
// c > maxNumSeqs, where the condition can never hold; otherwise there is none (ok = false) and
// the gate waits until it passes, up to the wait limit.
func ReadyTimeout(c, maxNumSeqs int, readyTimeout vtime.Duration) (d vtime.Duration, ok bool) {
	if c <= maxNumSeqs {
		return 0, false
	}
	return readyTimeout, true
}

// GateState is where a cell's readiness wait stands after a poll.
type GateState int

const (
	GateWaiting GateState = iota // poll again at Gate.Next
	GateReady                    // the condition held for StableS: the window starts now
	GateTimeout                  // the readiness timeout: the window starts now anyway
	GateGaveUp                   // past the wait limit without passing: the cell fails
)

func (s GateState) String() string {
	switch s {
	case GateWaiting:
		return "waiting"
	case GateReady:
		return "ready"
	case GateTimeout:
		return "timed out"
	case GateGaveUp:
		return "gave up"
	}
	return "unknown"
}

// Gate is the readiness wait of one decode cell as pure state. The caller runs the server to
// Next, reports what it sees with Observe, and repeats while Observe says GateWaiting.
type Gate struct {
	c                   int
	start, deadline, at vtime.Time
	poll, stable, limit vtime.Duration
	stableSince         vtime.Time // -1: the condition does not hold
}

// NewGate starts the readiness wait of c streams launched at start. readyTimeout is the fitted
// ready_timeout_s (see ReadyTimeout); limit bounds a wait without a timeout (<= 0:
// ReadyWaitLimit).
func (p *Protocol) NewGate(start vtime.Time, c, maxNumSeqs int, readyTimeout, limit vtime.Duration) *Gate {
	if limit <= 0 {
		limit = ReadyWaitLimit
	}
	g := &Gate{c: c, start: start, deadline: vtime.Never, at: start, poll: p.PollInterval(),
		stable: vtime.FromSeconds(p.StableS), limit: limit, stableSince: -1}
	if d, ok := ReadyTimeout(c, maxNumSeqs, readyTimeout); ok {
		g.deadline = start.Add(d)
	}
	return g
}

// Next is the time of the next poll: one poll interval after the last, or the readiness timeout
// if it comes first.
func (g *Gate) Next() vtime.Time { return min(g.at.Add(g.poll), g.deadline) }

// Limit is the longest wait without a timeout.
func (g *Gate) Limit() vtime.Duration { return g.limit }

// Observe takes the poll made at time at and says whether the wait is over. Passing is checked
// before the timeout, so a gate that passes on its timeout's poll is ready.
func (g *Gate) Observe(at vtime.Time, s Poll) GateState {
	g.at = at
	if Ready(s, g.c) {
		if g.stableSince < 0 {
			g.stableSince = at
		}
		if at.Sub(g.stableSince) >= g.stable {
			return GateReady
		}
	} else {
		g.stableSince = -1
	}
	if at >= g.deadline {
		return GateTimeout
	}
	if at.Sub(g.start) > g.limit {
		return GateGaveUp
	}
	return GateWaiting
}
