package fleet

import (
	"errors"
	"fmt"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// Group is Count replicas of one deployment. A dense model served with data_parallel_size D
// (sim.Server.Replicas) counts as D replicas behind the router, each one engine.
type Group struct {
	// Name labels the group's replicas in reports (default: "g<index>").
	Name string
	// Deployment is the group's one-line summary in reports (default: Name); Source, if set,
	// the file it came from.
	Deployment, Source string
	Server             *sim.Server
	Count              int
	// PricePerHour is one replica's price (its GPUs'), for the cost figures; 0: unknown.
	PricePerHour float64
}

// Autoscale adds and removes replicas of the first group; Min and Max count that group's
// replicas, and its signals look at the whole fleet.
type Autoscale struct {
	// Min and Max bound the first group's replicas serving or starting (Min defaults to the
	// group's Count).
	Min, Max int
	// StartupS is the time from the decision to add a replica to its first request: model load
	// and engine start-up, given by the user (nothing here knows it).
	StartupS float64
	// IntervalS is how often the autoscaler decides (default 10 s).
	IntervalS float64
	// QueuePerReplica: add a replica when the requests waiting (in the router queue and the
	// engines' waiting queues) exceed this many per serving replica (0: not a signal).
	QueuePerReplica float64
	// TTFTms: add a replica when the p90 TTFT of the requests that got their first token in
	// the last interval exceeds this (0: not a signal).
	TTFTms float64
	// IdleS: remove a replica that has had nothing to do for this long (0: never remove).
	IdleS float64
}

// Config is a fleet.
type Config struct {
	Groups []Group
	Policy Policy
	// PrefixLoadWeight is the prefix-aware policy's weight of load against the expected hit
	// share (default 0.5: a replica expected to hit half the prompt more than another wins
	// unless it carries all the load and the other none).
	PrefixLoadWeight float64
	Seed             uint64
	// ReplicaCap, if positive, is how many requests the router lets one replica have
	// outstanding; the others wait in the router's queue (FIFO) until a replica has room.
	// 0: the router sends every request at once (the engines queue them).
	ReplicaCap int
	// QueueCap bounds the router's queue: a request arriving to a full queue is rejected and
	// counted (0 with ReplicaCap: unbounded).
	QueueCap int
	// RefreshS, if positive, is how often (seconds) the router refreshes its view of the
	// replicas, as an inference gateway scrapes its engines' metrics: between refreshes the
	// policies that read replica state (least-outstanding, least-kv, prefix-aware's load,
	// session's first pick) see each replica's outstanding requests and KV-cache usage as they
	// were at the last refresh, plus the requests sent to it since. 0: the router sees every
	// replica exactly at each decision (a proxy counting its own requests in flight). With a
	// refresh and without caps or an autoscaler, the replicas are simulated a refresh interval
	// at a time on every CPU, as round-robin's are (window.go).
	RefreshS  float64
	Autoscale *Autoscale
	// Spec names the workload in the metrics and carries the SLO (its kind, lengths and trace
	// are not used: the requests come from the stream).
	Spec *workload.Spec
	// LastArrival is the time of the stream's last request, if known: the overload verdict
	// looks at the queues through the arrivals; and the series' bucket width is chosen from it.
	LastArrival vtime.Time
	// SeriesS is the width of the over-time series' buckets (default: the span / 240, at least
	// 10 s, or 60 s when the span is unknown).
	SeriesS float64
	// Progress, if set, is called about every 1 % of LastArrival in simulated time with the
	// requests routed so far.
	Progress func(routed int64, now vtime.Time)
	// Workers is how many goroutines simulate the replicas when the router can route ahead of
	// them (without caps or autoscaling: round-robin, random and least-kv; least-outstanding,
	// prefix-aware and session without speculative decoding; any policy with a refreshed view;
	// 0: the CPUs the process may use, and routing ahead with an exact view one for every 16
	// replicas at most). The result does not depend on it.
	Workers int
	// eventByEvent turns routing ahead off, window, if positive, sets the requests a window
	// holds, and noFloors routes least-kv ahead without the engines' KV floors (tests compare).
	eventByEvent bool
	window       int
	noFloors     bool
}

// MaxRefreshS bounds Config.RefreshS (about 11.6 days: longer than any trace).
const MaxRefreshS = 1e6

// validRefresh reports whether s is a router refresh interval: 0, or 1 ns to MaxRefreshS.
func validRefresh(s float64) bool {
	return s >= 0 && s <= MaxRefreshS && (s == 0 || vtime.FromSeconds(s) > 0)
}

// Validate names the first bad field.
func (c *Config) Validate() error {
	if len(c.Groups) == 0 {
		return errors.New("fleet: no replica")
	}
	n := 0
	for i, g := range c.Groups {
		if g.Server == nil || g.Count < 0 {
			return fmt.Errorf("fleet: group %d: want a deployment and a count >= 0", i)
		}
		n += g.Count
	}
	if n == 0 && c.Autoscale == nil {
		return errors.New("fleet: no replica")
	}
	if _, err := ParsePolicy(string(c.Policy)); err != nil {
		return err
	}
	if c.ReplicaCap < 0 || c.QueueCap < 0 {
		return errors.New("fleet: replica and queue caps must be >= 0")
	}
	if !validRefresh(c.RefreshS) {
		return fmt.Errorf("fleet: router refresh %g s: want 0 or an interval from 1 ns to %g s", c.RefreshS, float64(MaxRefreshS))
	}
	if a := c.Autoscale; a != nil {
		if a.StartupS < 0 || a.IntervalS < 0 || a.IdleS < 0 || a.QueuePerReplica < 0 || a.TTFTms < 0 {
			return errors.New("fleet: autoscale values must be >= 0")
		}
		if a.Max > 0 && a.Max < a.Min {
			return fmt.Errorf("fleet: autoscale max %d below min %d", a.Max, a.Min)
		}
	}
	return nil
}

// replica is one engine behind the router.
type replica struct {
	// What a routing decision reads and writes: with a hundred replicas the rest of a replica's
	// state is out of the processor's caches between two of its events.
	ld     *load
	routed int64
	// holdUntil: the engine runs a step at least until then, with its KV sample armed, so a
	// request sent before only joins its waiting queue: in the event loop the router holds it
	// (in ops), and the engine is given it at its time when it next runs (release). -1: send at
	// once.
	holdUntil vtime.Time
	maxLen    int // max_model_len: a longer request is refused at once
	// Routing ahead exactly (ahead.go): the running step's end and the requests it will finish
	// (pendAt vtime.Never: idle), the engine's next wake, live requests, KV-cache usage and its
	// floor (sim.Engine.KVFloor) after its last replay, the last window the replica was put in
	// (mark) and the last in which its usage was bounded instead of known (bounded).
	pendAt    vtime.Time
	pendFin   int
	wake      vtime.Time
	live      int
	kv, kvLow float64
	kvUntil   vtime.Time // when the floor counted in the window bounded expires
	mark      int64
	bounded   int64
	index     *prefixIndex
	id, group int
	name      string
	srv       *sim.Server
	eng       *sim.Engine
	rep       *workload.Replica
	seqCap    int
	// KV sample pending at sampleAt with fleet sequence sampleSeq (sampleSeq 0: none).
	sampleAt  vtime.Time
	sampleSeq uint64
	// Life: asked for at start, serving from up, stopped at down (-1 while running).
	start, up, down vtime.Time
	draining        bool
	idleSince       vtime.Time
	// Prefix cache as vLLM counts it: prompt tokens looked up and found, per finished request.
	queries, hits int64
	busyAtStart   vtime.Duration
	// Routing ahead (window.go): the requests routed to the replica and not yet given to its
	// engine (in the event loop: those held), the arrival event before which its pending KV
	// sample was set (sampleIdx) and the one the next setting counts from (armIdx), its share of
	// the series, its last fleet event and error.
	ops               []routedReq
	sampleIdx, armIdx int64
	share             seriesShare
	last              vtime.Time
	err               error
}

func (r *replica) kvUsage() float64 { return r.eng.Scheduler().KV().Pool.Usage() }

// load is what the router reads of a replica, kept beside the other replicas' (run.loads): a
// decision that reads every replica touches a few cache lines, not a hundred replica structures.
type load struct {
	out  int32 // requests sent and not finished
	view int32 // with a refresh interval: out at the last refresh plus those sent since
	id   int32
	// kv is the KV-cache usage as the engine last left it (only its events change it: the event
	// loop notes it after each run, run.fix); viewKV the usage at the last refresh.
	kv, viewKV float64
}

// loadSlab is the replicas' loads in blocks that never move (the fleet grows with an autoscaler).
type loadSlab [][]load

func (s *loadSlab) next(id int) *load {
	const block = 64
	if id%block == 0 {
		*s = append(*s, make([]load, block))
	}
	l := &(*s)[id/block][id%block]
	l.id = int32(id)
	return l
}

func (r *replica) serving(now vtime.Time) bool { return r.down < 0 && !r.draining && r.up <= now }

// fleet event kinds, in no order of their own: equal times go by the sequence of their setting.
const (
	evArrival = iota
	evSample
	evScale
	evUp
	evRefresh // before every other event at its time
)

type fevent struct {
	at   vtime.Time
	seq  uint64
	kind int
	r    *replica
}

type feventHeap []fevent

func (h feventHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	if ri, rj := h[i].kind == evRefresh, h[j].kind == evRefresh; ri != rj {
		return ri
	}
	return h[i].seq < h[j].seq
}

func (h *feventHeap) push(e fevent) {
	*h = append(*h, e)
	s := *h
	for j := len(s) - 1; j > 0; {
		i := (j - 1) / 2
		if !s.less(j, i) {
			break
		}
		s[i], s[j] = s[j], s[i]
		j = i
	}
}

func (h *feventHeap) pop() fevent {
	s := *h
	n := len(s) - 1
	s[0], s[n] = s[n], s[0]
	for i := 0; ; {
		j := 2*i + 1
		if j >= n {
			break
		}
		if k := j + 1; k < n && s.less(k, j) {
			j = k
		}
		if !s.less(j, i) {
			break
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
	e := s[n]
	*h = s[:n]
	return e
}

// engHeap orders replicas by their engine's next event. Its bookkeeping (keys, ids, positions)
// lives in its own arrays, so sifting touches no replica: with a hundred replicas their state
// is out of the processor's caches between two of their events.
type engHeap struct {
	r   []*replica
	key []vtime.Time
	id  []int
	pos []int32 // by replica id: its index in the heap (-1: not in it)
}

func (h *engHeap) less(i, j int) bool {
	if h.key[i] != h.key[j] {
		return h.key[i] < h.key[j]
	}
	return h.id[i] < h.id[j]
}

func (h *engHeap) swap(i, j int) {
	h.r[i], h.r[j] = h.r[j], h.r[i]
	h.key[i], h.key[j] = h.key[j], h.key[i]
	h.id[i], h.id[j] = h.id[j], h.id[i]
	h.pos[h.id[i]], h.pos[h.id[j]] = int32(i), int32(j)
}

func (h *engHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h *engHeap) down(i int) {
	n := len(h.r)
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if k := j + 1; k < n && h.less(k, j) {
			j = k
		}
		if !h.less(j, i) {
			return
		}
		h.swap(i, j)
		i = j
	}
}

// fix puts r at t, its engine's next wake (adding it if absent).
func (h *engHeap) fix(r *replica, t vtime.Time) {
	for len(h.pos) <= r.id {
		h.pos = append(h.pos, -1)
	}
	if h.pos[r.id] < 0 {
		i := len(h.r)
		h.pos[r.id] = int32(i)
		h.r = append(h.r, r)
		h.key = append(h.key, t)
		h.id = append(h.id, r.id)
		h.up(i)
		return
	}
	i := int(h.pos[r.id])
	h.key[i] = t
	h.up(i)
	h.down(int(h.pos[r.id]))
}

// remove takes r out of the heap (if in it).
func (h *engHeap) remove(r *replica) {
	if r.id >= len(h.pos) || h.pos[r.id] < 0 {
		return
	}
	i, n := int(h.pos[r.id]), len(h.r)-1
	if i != n {
		h.swap(i, n)
	}
	h.r, h.key, h.id = h.r[:n], h.key[:n], h.id[:n]
	h.pos[r.id] = -1
	if i != n {
		id := h.id[i]
		h.up(i)
		h.down(int(h.pos[id]))
	}
}

func (h *engHeap) min() (vtime.Time, *replica) {
	if len(h.r) == 0 {
		return vtime.Never, nil
	}
	return h.key[0], h.r[0]
}
