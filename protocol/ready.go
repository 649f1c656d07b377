package protocol

import "github.com/servesim/servesim/vtime"

// The tool's readiness timeouts by context (llm_decode_bench.py): the wait for the readiness
// condition ends, and the window starts anyway, this long after the cell's start.
const (
	// ReadyTimeoutShortS applies to contexts below 64K tokens (the seed's 8K, 16K and 32K).
	ReadyTimeoutShortS = 60.0
	// ReadyTimeoutMediumS applies from 64K to below 128K tokens.
	ReadyTimeoutMediumS = 120.0
	// ReadyTimeoutLongS applies from 128K tokens.
	ReadyTimeoutLongS = 180.0
)

// Poll is one sample of what the benchmark watches: the server's vllm:num_requests_running,
// vllm:num_requests_waiting and generation-token counter, and its own streams.
type Poll struct {
	At               vtime.Time
	Running, Waiting int
	// Streaming counts the client streams that have received a token (from any of their requests).
	Streaming int
	// Generated is the server's cumulative count of generated tokens; tokens are flowing when it
	// grew since the previous poll.
	Generated int64
}

// Ready is the readiness condition of a cell with c streams on one poll: nothing waiting, tokens
// flowing since the previous poll, every stream has a token, and at least c running.
func Ready(s Poll, flowing bool, c int) bool {
	return s.Waiting == 0 && flowing && s.Streaming >= c && s.Running >= c
}

// ReadyTimeout is how long after the cell's start the benchmark stops waiting for readiness and
// starts the window anyway: ReadyTimeoutS when set, else the tool's default for the context, 60 s
// below 64K tokens, 120 s below 128K, 180 s from 128K. It applies at every concurrency; with C >
// max_num_seqs the condition can never hold, so those cells always start their window here.
func (p *Protocol) ReadyTimeout(contextTokens int) vtime.Duration {
	s := ReadyTimeoutLongS
	switch {
	case p.ReadyTimeoutS > 0:
		s = p.ReadyTimeoutS
	case contextTokens < 64*1024:
		s = ReadyTimeoutShortS
	case contextTokens < 128*1024:
		s = ReadyTimeoutMediumS
	}
	return vtime.FromSeconds(s)
}

// GateState is where a cell's readiness wait stands after a poll.
type GateState int

const (
	GateWaiting GateState = iota // poll again at Gate.Next
	GateReady                    // the condition held for StableS: the window starts now
	GateTimeout                  // the readiness timeout: the window starts now anyway
	GateGaveUp                   // past the caller's simulation limit without a verdict: the cell fails
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
//
// The tool's rule: polls about once a second from the streams' launch; the window starts at the
// first poll at least MinReadyS after the cell's start on which the condition (Ready) has held
// on every poll for at least StableS, or, failing that, at the first poll at least the
// readiness timeout after the cell's start.
type Gate struct {
	c                     int
	cellStart, at         vtime.Time
	poll, stable, minWait vtime.Duration
	timeout, limit        vtime.Duration
	stableSince           vtime.Time // -1: the condition does not hold
	generated             int64      // at the previous poll; -1 before the first
}

// NewGate starts the readiness wait of c streams launched at streamsStart, in a cell that started
// (before its scout) at cellStart, at a context of contextTokens. limit, when positive, bounds
// the simulated wait: a gate with no verdict limit after the cell's start gives up (a simulation
// budget, not the tool's rule; the timeout always ends the tool's wait).
func (p *Protocol) NewGate(cellStart, streamsStart vtime.Time, c, contextTokens int, limit vtime.Duration) *Gate {
	return &Gate{c: c, cellStart: cellStart, at: streamsStart, poll: p.PollInterval(),
		stable: vtime.FromSeconds(p.StableS), minWait: vtime.FromSeconds(p.MinReadyS),
		timeout: p.ReadyTimeout(contextTokens), limit: limit, stableSince: -1, generated: -1}
}

// Next is the time of the next poll: one poll interval after the last (the first one after the
// streams' launch).
func (g *Gate) Next() vtime.Time { return g.at.Add(g.poll) }

// Timeout is the readiness timeout, counted from the cell's start.
func (g *Gate) Timeout() vtime.Duration { return g.timeout }

// Observe takes the poll made at s.At and says whether the wait is over. Passing is checked
// before the timeout, so a gate that passes on its timeout's poll is ready.
func (g *Gate) Observe(s Poll) GateState {
	g.at = s.At
	flowing := g.generated >= 0 && s.Generated > g.generated
	g.generated = s.Generated
	since := s.At.Sub(g.cellStart)
	if Ready(s, flowing, g.c) {
		if g.stableSince < 0 {
			g.stableSince = s.At
		}
		if s.At.Sub(g.stableSince) >= g.stable && since >= g.minWait {
			return GateReady
		}
	} else {
		g.stableSince = -1
	}
	if since >= g.timeout {
		return GateTimeout
	}
	if g.limit > 0 && since >= g.limit {
		return GateGaveUp
	}
	return GateWaiting
}
