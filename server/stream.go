package server

import (
	"sync"
	"time"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
)

// stream is one request between its HTTP handler and the engine loop. The loop writes deliveries
// into it (never blocking: a handler that falls behind finds several deliveries waiting, and
// sends them as one chunk, as vLLM's output collector merges outputs a slow client has not taken
// yet); the handler takes them.
type stream struct {
	q *request
	// arrived is when the handler had the request (wall clock); the engine receives it then.
	arrived time.Time

	// Owned by the loop.
	rec    *sim.Record
	engine int
	last   vtime.Time // the previous delivery (inter-token gaps)

	mu      sync.Mutex
	ready   chan struct{} // signalled (capacity 1) when something was added
	pending int           // tokens delivered and not yet taken
	due     vtime.Time    // simulated time of the first pending delivery
	tokens  int           // tokens delivered in all
	done    bool
	reason  string // finish_reason once done: "length" or "stop"
	err     *apiError
}

func newStream(q *request, arrived time.Time) *stream {
	return &stream{q: q, arrived: arrived, ready: make(chan struct{}, 1)}
}

func (s *stream) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// deliver adds n tokens delivered at simulated time at.
func (s *stream) deliver(n int, at vtime.Time, done bool, reason string) {
	s.mu.Lock()
	if s.pending == 0 {
		s.due = at
	}
	s.pending += n
	s.tokens += n
	if done {
		s.done, s.reason = true, reason
	}
	s.mu.Unlock()
	s.signal()
}

// fail ends the stream with an error.
func (s *stream) fail(e *apiError) {
	s.mu.Lock()
	if !s.done {
		s.done, s.err = true, e
	}
	s.mu.Unlock()
	s.signal()
}

// take is what the handler has to send: new tokens (the total after them), the simulated time the
// first of them was due, and whether the stream is over.
type taken struct {
	n, total int
	due      vtime.Time
	done     bool
	reason   string
	err      *apiError
}

func (s *stream) take() taken {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := taken{n: s.pending, total: s.tokens, due: s.due, done: s.done, reason: s.reason, err: s.err}
	s.pending = 0
	return t
}
