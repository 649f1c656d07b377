package server

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
)

// clock maps the wall clock to simulated time: simulated = (wall - start) x speed.
type clock struct {
	start time.Time
	speed float64
}

func (c *clock) virtual(t time.Time) vtime.Time {
	d := t.Sub(c.start)
	if d <= 0 {
		return 0
	}
	return vtime.Time(float64(d) * c.speed)
}

// wall is the wall-clock time at which simulated time v is due.
func (c *clock) wall(v vtime.Time) time.Time {
	return c.start.Add(time.Duration(math.Ceil(float64(v) / c.speed)))
}

// maxSimTime bounds a server's simulated time (the engine's guard): a century.
const maxSimTime = vtime.Time(100 * 365 * 24 * 3600 * vtime.Second)

type cmdKind int

const (
	cmdSubmit cmdKind = iota
	cmdCancel
	cmdSnapshot
	cmdStop
)

type cmd struct {
	kind  cmdKind
	st    *stream
	at    time.Time
	reply chan *snapshot
}

// loop is the one goroutine that owns the engines. Handlers send it requests and cancellations
// over cmds; it runs the engines up to the simulated time of the wall clock, sleeping until the
// next event is due or a command arrives, and pushes every delivery to its stream.
type loop struct {
	clk     clock
	engines []*sim.Engine
	live    []int // requests in flight per engine (data-parallel balancing)
	streams map[*sim.Record]*stream
	index   *contentIndex
	met     []engineMetrics
	lag     lagHist // how late events were processed
	cmds    chan cmd
	stopped chan struct{}
	dead    *apiError
	spec    int // speculative tokens per step
	logW    io.Writer
	logged  logMark
}

// logMark is where the last periodic log line left the counters.
type logMark struct {
	at         time.Time
	sim        vtime.Time
	prompt     []float64
	generation []float64
}

func newLoop(srv *sim.Server, seed uint64, speed float64, logW io.Writer) *loop {
	n := max(srv.Replicas, 1)
	l := &loop{clk: clock{speed: speed}, live: make([]int, n), streams: map[*sim.Record]*stream{},
		index: newContentIndex(srv.Layout.BlockSize, 1<<20), met: make([]engineMetrics, n),
		cmds: make(chan cmd, 1024), stopped: make(chan struct{}), spec: srv.Deployment.Engine.SpecTokens(), logW: logW}
	for i := 0; i < n; i++ {
		s := seed
		if i > 0 {
			s = mix64(seed, uint64(i))
		}
		cfg := srv.EngineConfig(s)
		// Every delivery reaches its stream: the engine reports each one (its event-driven mode
		// reports steady decoding in bulk).
		cfg.StepByStep = true
		cfg.MaxEvents = math.MaxInt64
		cfg.MaxSimTime = maxSimTime
		bc := &batchCost{srv: srv}
		cfg.Cost = bc
		e := sim.New(cfg)
		bc.sched = e.Scheduler()
		idx := i
		e.Hooks.OnTokens = func(e *sim.Engine, rec *sim.Record, n int, done bool) { l.onTokens(idx, e, rec, n, done) }
		l.engines = append(l.engines, e)
		l.met[i].init(srv.Deployment.Engine.MaxModelLen, l.spec)
	}
	return l
}

// preciseAhead is the last stretch before a simulated event that the loop sleeps with
// preciseSleep rather than on a Go timer (which wakes up to 1 ms late): the timer wakes it this
// much early, commands arriving meanwhile wait at most this long (they carry their wall-clock
// time, so the engine still sees them when they came).
const preciseAhead = 2 * time.Millisecond

// run is the loop's goroutine.
func (l *loop) run() {
	defer close(l.stopped)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ticker := time.NewTicker(10 * time.Second)
	defer ticker.Stop()
	l.logged.at = l.clk.start
	for {
		l.runTo(time.Now())
		// Take what is queued without waiting (events may be due back to back).
		for k := 0; k < 256; k++ {
			select {
			case c := <-l.cmds:
				if !l.do(c) {
					return
				}
				continue
			case <-ticker.C:
				l.logStats(time.Now())
			default:
			}
			break
		}
		next := l.nextEvent()
		var wake <-chan time.Time
		if next != vtime.Never {
			d := l.clk.wall(next).Sub(time.Now())
			if d <= 0 {
				// Due already: run to it and look again.
				l.runToSim(next)
				continue
			}
			if d <= preciseAhead {
				preciseSleep(d)
				continue
			}
			timer.Reset(d - preciseAhead)
			wake = timer.C
		}
		select {
		case c := <-l.cmds:
			if !l.do(c) {
				return
			}
		case <-wake:
		case <-ticker.C:
			l.logStats(time.Now())
		}
	}
}

func (l *loop) nextEvent() vtime.Time {
	next := vtime.Never
	for _, e := range l.engines {
		next = min(next, e.NextEvent())
	}
	return next
}

// runTo runs every engine up to the simulated time of wall-clock time t, noting how late the
// first event it processes is.
func (l *loop) runTo(t time.Time) { l.runToSim(l.clk.virtual(t)) }

// runToSim runs every engine up to simulated time v, noting how late (on the wall clock) the
// first event it processes is.
func (l *loop) runToSim(v vtime.Time) {
	if next := l.nextEvent(); next <= v {
		l.lag.add(time.Since(l.clk.wall(next)))
	}
	for i, e := range l.engines {
		if v > e.Now() {
			if err := e.RunUntil(v); err != nil && l.dead == nil {
				l.die(fmt.Errorf("engine %d: %w", i, err))
			}
		}
	}
}

// die fails every stream: the simulated engine stopped (a guard of the simulation tripped).
func (l *loop) die(err error) {
	l.dead = &apiError{status: http.StatusInternalServerError, typ: "InternalServerError", message: "the simulated engine stopped: " + err.Error()}
	for rec, st := range l.streams {
		st.fail(l.dead)
		delete(l.streams, rec)
	}
}

// do runs one command; false means stop.
func (l *loop) do(c cmd) bool {
	switch c.kind {
	case cmdSubmit:
		l.submit(c.st)
	case cmdCancel:
		l.cancel(c.st, c.at)
	case cmdSnapshot:
		l.runTo(time.Now())
		c.reply <- l.snapshot()
	case cmdStop:
		for rec, st := range l.streams {
			st.fail(&apiError{status: http.StatusServiceUnavailable, typ: "ServiceUnavailableError", message: "the server is shutting down: request cancelled"})
			l.engines[st.engine].Cancel(rec)
			delete(l.streams, rec)
		}
		return false
	}
	return true
}

func (l *loop) submit(st *stream) {
	if l.dead != nil {
		st.fail(l.dead)
		return
	}
	spec := l.index.spec(&st.q.prompt)
	spec.MaxTokens = st.q.output
	// Data-parallel engines: the one with the fewest requests in flight (vLLM's front end sends
	// a request to its least-loaded engine).
	k := 0
	for i := range l.live {
		if l.live[i] < l.live[k] {
			k = i
		}
	}
	// The request reaches the engine when the handler had it (commands queue for microseconds).
	l.runTo(st.arrived)
	e := l.engines[k]
	st.rec, st.engine = e.Submit(spec), k
	l.streams[st.rec] = st
	l.live[k]++
	m := &l.met[k]
	m.maxTokensParam.observe(float64(st.q.maxTokens))
	m.nParam.observe(1)
}

func (l *loop) cancel(st *stream, at time.Time) {
	rec := st.rec
	if rec == nil || l.streams[rec] != st {
		return
	}
	l.runTo(at)
	l.engines[st.engine].Cancel(rec)
	delete(l.streams, rec)
	l.live[st.engine]--
	l.met[st.engine].success["abort"]++
}

// onTokens is the engines' delivery hook: it updates the metrics the way vLLM's output processor
// does (vllm/v1/metrics/stats.py, IterationStats and FinishedRequestStats) and hands the tokens
// to the stream.
func (l *loop) onTokens(i int, e *sim.Engine, rec *sim.Record, n int, done bool) {
	st := l.streams[rec]
	if st == nil {
		return
	}
	m := &l.met[i]
	now := e.Now()
	sec := func(a, b vtime.Time) float64 { return b.Sub(a).Seconds() }
	if rec.Tokens == n {
		// The first delivery: the prompt is done.
		m.ttft.observe(sec(rec.Send, now))
		m.promptTokens += float64(rec.Spec.PromptTokens)
		m.prefixQueries += float64(rec.Spec.PromptTokens)
		m.prefixHits += float64(rec.CachedTokens)
		if rec.Admitted >= 0 && rec.Arrive >= 0 {
			m.queue.observe(sec(rec.Arrive, rec.Admitted))
			m.prefill.observe(sec(rec.Admitted, now))
		}
	} else {
		m.itl.observe(sec(st.last, now))
		if l.spec > 0 {
			// A verify step after the first token: k drafts, n - 1 of them accepted (the last
			// step's may be cut by max_tokens; vLLM counts what the verifier accepted).
			m.drafts++
			m.draftTokens += float64(l.spec)
			m.accepted += float64(n - 1)
			for p := 0; p < n-1 && p < len(m.acceptedPos); p++ {
				m.acceptedPos[p]++
			}
		}
	}
	st.last = now
	m.generationTokens += float64(n)
	reason := ""
	if done {
		reason = "length"
		if st.q.output < st.q.maxTokens && rec.Tokens >= st.q.output {
			reason = "stop"
		}
		m.success[reason]++
		m.e2e.observe(sec(rec.Send, now))
		if rec.Admitted >= 0 {
			m.inference.observe(sec(rec.Admitted, now))
		}
		m.decode.observe(sec(rec.FirstToken, now))
		if rec.Tokens > 1 {
			m.tpot.observe(sec(rec.FirstToken, now) / float64(rec.Tokens-1))
		}
		m.promptHist.observe(float64(rec.Spec.PromptTokens))
		m.genHist.observe(float64(rec.Tokens))
		m.maxGenHist.observe(float64(st.q.maxTokens))
		delete(l.streams, rec)
		l.live[i]--
	}
	st.deliver(n, now, done, reason)
}

// logStats writes vLLM's periodic engine line (vllm/v1/metrics/loggers.py, LoggingStatLogger)
// for every engine that did something since the last one.
func (l *loop) logStats(now time.Time) {
	if l.logW == nil {
		return
	}
	v := l.clk.virtual(now)
	dt := v.Sub(l.logged.sim).Seconds()
	if l.logged.prompt == nil {
		l.logged.prompt = make([]float64, len(l.engines))
		l.logged.generation = make([]float64, len(l.engines))
	}
	for i, e := range l.engines {
		m := &l.met[i]
		dp, dg := m.promptTokens-l.logged.prompt[i], m.generationTokens-l.logged.generation[i]
		s := e.Scheduler()
		if dp == 0 && dg == 0 && s.NumRunning() == 0 && s.NumWaiting()+e.Pending() == 0 {
			continue
		}
		hit := 0.0
		if m.prefixQueries > 0 {
			hit = 100 * m.prefixHits / m.prefixQueries
		}
		fmt.Fprintf(l.logW, "servesim: engine %d at %.1f s simulated: avg prompt throughput %.1f tokens/s, avg generation throughput %.1f tokens/s, running %d reqs, waiting %d reqs, KV cache usage %.1f%%, prefix cache hit rate %.1f%%\n",
			i, v.Seconds(), dp/dt, dg/dt, s.NumRunning(), s.NumWaiting()+e.Pending(), 100*s.KV().Pool.Usage(), hit)
		l.logged.prompt[i], l.logged.generation[i] = m.promptTokens, m.generationTokens
	}
	l.logged.at, l.logged.sim = now, v
}
