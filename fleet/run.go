package fleet

import (
	"fmt"
	"math"
	"slices"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// Result is what a fleet run measured.
type Result struct {
	Policy Policy `json:"policy"`
	// RefreshS is the router's refresh interval (0: it saw the replicas exactly).
	RefreshS float64 `json:"router_refresh_s,omitempty"`
	// Fleet is every replica's requests together; Replicas each one's.
	Fleet *workload.Metrics `json:"fleet"`
	// Groups is each group's share, in a fleet of more than one group.
	Groups   []GroupResult   `json:"groups,omitempty"`
	Replicas []ReplicaResult `json:"replicas"`
	// Routed counts the requests the router received; Rejected those refused because its queue
	// was full (requests longer than max_model_len are the replicas' Metrics.Rejected).
	Routed   int64 `json:"routed"`
	Rejected int64 `json:"router_rejected"`
	// PrefixQueries and PrefixHits are the prompt tokens the replicas' prefix caches were asked
	// for and found, over finished requests (vLLM's prefix_cache_queries and _hits).
	PrefixQueries int64   `json:"prefix_cache_queries_tokens"`
	PrefixHits    int64   `json:"prefix_cache_hits_tokens"`
	PrefixHitRate float64 `json:"prefix_cache_hit_rate"`
	// ReplicaHours sums each replica's time from being asked for (start-up included) to its
	// stop or the end of the run; PeakReplicas is the most serving or starting at once.
	ReplicaHours float64 `json:"replica_hours"`
	PeakReplicas int     `json:"peak_replicas"`
	// Cost: replica-hours times each replica's price, per hour of the run and per million
	// output tokens (0 without prices).
	CostPerHour      float64 `json:"cost_per_hour,omitempty"`
	CostPerMTokens   float64 `json:"cost_per_million_output_tokens,omitempty"`
	EndS             float64 `json:"end_s"`
	SeriesIntervalS  float64 `json:"series_interval_s"`
	Series           []Point `json:"series"`
	BalanceMaxToMean float64 `json:"balance_max_to_mean"` // most requests on one replica / the mean
	// windows is how many windows the replicas ran through when routed ahead (how the run was
	// done, not what it found: not reported).
	windows int64
}

// ReplicaResult is one replica's share.
type ReplicaResult struct {
	Name          string            `json:"name"`
	Group         string            `json:"group"`
	Routed        int64             `json:"routed"`
	PrefixQueries int64             `json:"prefix_cache_queries_tokens"`
	PrefixHits    int64             `json:"prefix_cache_hits_tokens"`
	BusyShare     float64           `json:"busy_share"` // GPU-busy time over its serving time
	StartS        float64           `json:"start_s"`
	UpS           float64           `json:"up_s"`
	StopS         float64           `json:"stop_s"`
	Events        int64             `json:"engine_events"`
	Metrics       *workload.Metrics `json:"metrics"`
}

// Point is one bucket of the series over the run.
type Point struct {
	TimeS     float64 `json:"t_s"`
	Arrivals  int     `json:"arrivals"`
	Completed int     `json:"completed"`
	Rejected  int     `json:"router_rejected"`
	// Replicas is the most serving or starting during the bucket.
	Replicas int `json:"replicas"`
	// RouterQueue is the longest router queue; EngineWaiting the mean requests waiting in an
	// engine at its KV samples.
	RouterQueue   int     `json:"router_queue"`
	EngineWaiting float64 `json:"engine_waiting"`
	// TTFT of the requests whose first token came in the bucket (ms; n = 0: none).
	TTFTn   int     `json:"ttft_n"`
	TTFTp50 float64 `json:"ttft_p50_ms"`
	TTFTp99 float64 `json:"ttft_p99_ms"`
	ttft    logHist
	waitSum float64
	waitN   int
}

// queued is a request held in the router's queue.
type queued struct {
	q   workload.Request
	tag int
}

type run struct {
	cfg      *Config
	spec     *workload.Spec
	reps     []*replica
	loads    loadSlab
	up       []*replica
	upLoad   []*load // up's loads
	upDirty  bool
	eh       engHeap
	fh       feventHeap
	seq      uint64
	rt       *router
	queue    []queued
	qhead    int
	stream   workload.Stream
	next     workload.Request
	haveNext bool
	routed   int64
	rejected int64
	windows  int64 // windows run when routing ahead (Result.windows)
	series   []Point
	width    vtime.Duration
	now      vtime.Time
	scaleTT  logHist
	err      error
	progStep vtime.Duration
	progAt   vtime.Time
	// dispatching: the router is sending from its queue (a finish it causes does not start
	// another pass; the running one sees the room it makes).
	dispatching bool
	// windowed: the router routes ahead of the engines (window.go); ahead: with an exact view,
	// foreseeing their finishes (ahead.go).
	windowed bool
	ahead    bool
	// refresh is the router's refresh interval (0: it sees the replicas exactly).
	refresh vtime.Duration
	// busy holds the replicas a window runs (window.go); pend those whose foreseen finishes the
	// window's routing takes off (ahead.go).
	busy, pend []*replica
	// crew runs the windows' replicas when routing ahead (crew.go), replayFn on each through the
	// window win.
	crew     *crew
	replayFn func(*replica)
	win      *window
}

// Run simulates the fleet on the requests of stream, in arrival order. The result depends only
// on the configuration, the requests and the seed.
func Run(cfg Config, stream workload.Stream) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.PrefixLoadWeight == 0 {
		cfg.PrefixLoadWeight = 1
	}
	spec := cfg.Spec
	if spec == nil {
		spec = &workload.Spec{Name: "fleet", Kind: workload.KindTrace}
	}
	r := &run{cfg: &cfg, spec: spec, stream: stream, rt: newRouter(cfg.Policy, cfg.Seed, cfg.PrefixLoadWeight)}
	if cfg.RefreshS > 0 {
		r.refresh = vtime.FromSeconds(cfg.RefreshS)
		r.rt.view = true
	}
	r.width = vtime.FromSeconds(cfg.SeriesS)
	if r.width <= 0 {
		r.width = 60 * vtime.Second
		if cfg.LastArrival > 0 {
			r.width = max(10*vtime.Second, vtime.Duration(int64(cfg.LastArrival)/240))
		}
	}
	if cfg.LastArrival > 0 {
		r.progStep = max(vtime.Duration(int64(cfg.LastArrival)/100), 1)
	}
	r.windowed = cfg.canRouteAhead()
	if cfg.canForesee() || cfg.canRouteKV() {
		r.windowed, r.ahead = true, true
	}
	for gi, g := range cfg.Groups {
		for range g.Count * max(g.Server.Replicas, 1) {
			r.addReplica(gi, 0, 0)
		}
	}
	if n := len(r.reps); n > 1 {
		for _, x := range r.reps {
			x.rep.ShareExact(workload.ExactBudget / n)
		}
	}
	loop := r.loop
	switch {
	case r.ahead && cfg.Policy == LeastKV:
		loop = r.loopKV
	case r.ahead:
		loop = r.loopAhead
	case r.windowed:
		loop = r.loopWindowed
	}
	if err := loop(); err != nil {
		return nil, err
	}
	return r.result(), nil
}

// addReplica asks for a replica of group gi at start, serving from up.
func (r *run) addReplica(gi int, start, up vtime.Time) *replica {
	g := &r.cfg.Groups[gi]
	id := len(r.reps)
	seed := r.cfg.Seed
	if id > 0 {
		seed ^= uint64(id) * 0x9e3779b97f4a7c15
	}
	x := &replica{id: id, group: gi, srv: g.Server, eng: g.Server.NewEngine(seed), start: start, up: up, down: -1,
		idleSince: up, seqCap: max(g.Server.Deployment.Engine.MaxNumSeqs, 1), holdUntil: -1, maxLen: g.Server.Deployment.Engine.MaxModelLen, pendAt: vtime.Never}
	x.ld = r.loads.next(id)
	x.ld.kv = x.kvUsage()
	x.name = fmt.Sprintf("r%d", id)
	if r.cfg.Policy == PrefixAware {
		l := g.Server.Layout
		x.index = newPrefixIndex(int(int64(l.NumBlocks) * int64(l.BlockSize) / workload.MooncakeBlockTokens))
	}
	timer := func(t vtime.Time) {
		if r.windowed {
			// Called from the replica's own replay: no shared state.
			x.sampleAt, x.sampleSeq, x.sampleIdx = t, 1, x.armIdx
			return
		}
		r.seq++
		x.sampleAt, x.sampleSeq = t, r.seq
		r.fh.push(fevent{at: t, seq: r.seq, kind: evSample, r: x})
	}
	x.rep = workload.NewReplica(g.Server, x.eng, r.spec.SampleInterval(), &r.spec.SLO, r.cfg.LastArrival, timer)
	if start > 0 {
		// An autoscaled replica shares the exact budget too (the fleet can reach any size).
		x.rep.ShareExact(workload.ExactBudget / max(len(r.reps)+1, 16))
	}
	x.eng.Hooks.OnTokens = func(e *sim.Engine, rec *sim.Record, n int, done bool) {
		if done {
			r.finish(x, rec)
			e.Recycle(rec) // nothing in the fleet keeps a record past its finish
		}
	}
	if start > 0 {
		x.eng.RunUntil(start)
	}
	r.reps = append(r.reps, x)
	r.upDirty = true
	return x
}

func (r *run) push(at vtime.Time, kind int, x *replica) {
	r.seq++
	r.fh.push(fevent{at: at, seq: r.seq, kind: kind, r: x})
}

func (r *run) loop() error {
	r.haveNext = r.read()
	if r.haveNext {
		r.push(r.next.At, evArrival, nil)
	}
	if a := r.cfg.Autoscale; a != nil {
		r.push(vtime.Time(r.scaleInterval()), evScale, nil)
	}
	if r.refresh > 0 && r.haveNext {
		r.push(r.nextRefresh(0), evRefresh, nil)
	}
	for len(r.fh) > 0 && r.err == nil {
		t := r.fh[0].at
		r.advance(t)
		if r.err != nil {
			break
		}
		ev := r.fh.pop()
		if ev.kind != evRefresh {
			// A refresh is the router's own: it is not an event of the run's (its end).
			r.now = ev.at
		}
		r.handle(ev)
	}
	if r.err == nil {
		if err := r.stream.Err(); err != nil {
			return err
		}
	}
	if r.err != nil {
		return r.err
	}
	// Nothing is left for the router; the engines finish what they hold.
	for _, x := range r.reps {
		r.release(x)
		if r.err != nil {
			return r.err
		}
		if err := x.eng.RunUntilIdle(); err != nil {
			return err
		}
		r.now = max(r.now, x.eng.Now())
	}
	return nil
}

func (r *run) read() bool {
	q, ok := r.stream.Next()
	if ok {
		r.next = q
	}
	return ok
}

// advance brings every engine to time t: each processes its events up to t. Engines are
// independent between router decisions, except that a finish may let the router's queue send a
// request: while the queue holds requests, engines advance one event time at a time, in order.
func (r *run) advance(t vtime.Time) {
	for r.err == nil {
		nt, x := r.eh.min()
		if x == nil || nt > t {
			return
		}
		until := t
		if r.qhead < len(r.queue) {
			until = nt
		}
		r.release(x)
		if r.err != nil {
			return
		}
		if err := x.eng.RunUntil(until); err != nil {
			r.err = fmt.Errorf("replica %s: %w", x.name, err)
			return
		}
		r.fix(x)
	}
}

// fix puts x in the engine heap at its engine's next wake, and notes until when the router may
// hold requests for it (replica.holdUntil).
func (r *run) fix(x *replica) {
	t := x.eng.NextWake()
	x.ld.kv = x.kvUsage()
	x.holdUntil = -1
	if x.eng.Busy() && x.sampleSeq != 0 { // busy, its KV sample armed
		x.holdUntil = t
	}
	r.eh.fix(x, t)
}

// release gives x's engine the requests held for it, each at its time: the engine, busy
// throughout, only queues them, as it would have when they were sent.
func (r *run) release(x *replica) {
	if len(x.ops) == 0 {
		return
	}
	for i := range x.ops {
		h := &x.ops[i]
		r.catchUp(x, h.at)
		x.rep.Submit(&h.q, h.tag)
	}
	clear(x.ops)
	x.ops = x.ops[:0]
}

// progress reports the requests routed once the arrivals at t are.
func (r *run) progress(t vtime.Time) {
	if r.cfg.Progress != nil && r.progStep > 0 && t >= r.progAt {
		r.progAt = t + vtime.Time(r.progStep)
		r.cfg.Progress(r.routed, t)
	}
}

func (r *run) handle(ev fevent) {
	switch ev.kind {
	case evArrival:
		for r.haveNext && r.next.At <= ev.at {
			q := r.next
			r.route(&q)
			r.haveNext = r.read()
		}
		if r.haveNext {
			r.push(r.next.At, evArrival, nil)
		}
		r.progress(ev.at)
	case evSample:
		x := ev.r
		if ev.seq != x.sampleSeq {
			return
		}
		x.sampleSeq = 0
		r.clock(x, ev.at)
		x.rep.Sample()
		s := x.eng.Scheduler()
		p := r.point(ev.at)
		p.waitSum += float64(s.NumWaiting() + x.eng.Pending())
		p.waitN++
		r.fix(x)
	case evScale:
		r.autoscale(ev.at)
	case evUp:
		x := ev.r
		r.clock(x, ev.at)
		r.upDirty = true
		r.dispatch(ev.at)
	case evRefresh:
		r.refreshView()
		if r.haveNext || r.qhead < len(r.queue) {
			r.push(r.nextRefresh(ev.at), evRefresh, nil)
		}
	}
}

// refreshView sets the router's view of every replica to its state now.
func (r *run) refreshView() {
	for _, x := range r.reps {
		out := x.ld.out
		if r.windowed {
			// Replays count a replica's outstanding requests in its own state only (the
			// slab's lines are shared with replicas on other workers).
			out = int32(x.rep.Live())
		}
		x.ld.view, x.ld.viewKV = out, x.kvUsage()
	}
}

// slot is the last refresh time at or before t.
func (r *run) slot(t vtime.Time) vtime.Time {
	return t - t%vtime.Time(r.refresh)
}

// nextRefresh is the refresh after the one at t: the next in the interval's grid, or, while
// nothing waits in the router's queue, the last one before the next arrival if later (the
// refreshes between would change a view no decision reads).
func (r *run) nextRefresh(t vtime.Time) vtime.Time {
	next := t + vtime.Time(r.refresh)
	if r.qhead == len(r.queue) && r.haveNext {
		next = max(next, r.slot(r.next.At))
	}
	return next
}

// clock sets x's engine to time t (it has no event before that changes more than its waiting
// queue), after giving it the requests held for it.
func (r *run) clock(x *replica, t vtime.Time) {
	r.release(x)
	r.catchUp(x, t)
}

// catchUp runs x's engine up to t if it is before.
func (r *run) catchUp(x *replica, t vtime.Time) {
	if x.eng.Now() < t {
		if err := x.eng.RunUntil(t); err != nil && r.err == nil {
			r.err = fmt.Errorf("replica %s: %w", x.name, err)
		}
	}
}

// serving lists the replicas taking requests, in index order.
func (r *run) serving() []*replica {
	if r.upDirty {
		r.up, r.upLoad = r.up[:0], r.upLoad[:0]
		for _, x := range r.reps {
			if x.serving(r.now) {
				r.up = append(r.up, x)
				r.upLoad = append(r.upLoad, x.ld)
			}
		}
		r.upDirty = false
	}
	return r.up
}

func (r *run) point(t vtime.Time) *Point {
	i := int(int64(t) / int64(r.width))
	for len(r.series) <= i {
		r.series = append(r.series, Point{TimeS: float64(len(r.series)) * r.width.Seconds()})
	}
	return &r.series[i]
}

// arrival counts a request reaching the router at t, and returns t's point of the series.
func (r *run) arrival(t vtime.Time) *Point {
	r.routed++
	p := r.point(t)
	p.Arrivals++
	return p
}

func (r *run) route(q *workload.Request) {
	p := r.arrival(r.now)
	tag := int(r.routed - 1)
	if r.qhead < len(r.queue) || !r.trySend(q, tag) {
		if r.cfg.QueueCap > 0 && len(r.queue)-r.qhead >= r.cfg.QueueCap {
			r.rejected++
			p.Rejected++
			return
		}
		r.queue = append(r.queue, queued{*q, tag})
		p.RouterQueue = max(p.RouterQueue, len(r.queue)-r.qhead)
	}
}

// trySend routes q to a replica with room; false when none has.
func (r *run) trySend(q *workload.Request, tag int) bool {
	up := r.serving()
	if len(up) == 0 {
		return false
	}
	ld := r.upLoad
	if c := r.cfg.ReplicaCap; c > 0 {
		var room []*replica
		var roomLd []*load
		for i, l := range ld {
			if int(l.out) < c {
				room = append(room, up[i])
				roomLd = append(roomLd, l)
			}
		}
		if len(room) == 0 {
			return false
		}
		up, ld = room, roomLd
	}
	x := r.rt.pick(up, ld, q)
	x.routed++
	if r.now < x.holdUntil {
		// The engine only queues q before it wakes: sent then (release), it touches no engine
		// state now.
		x.ops = append(x.ops, routedReq{q: *q, tag: tag, at: r.now})
		if q.Fits(x.maxLen) {
			x.ld.out++
			x.ld.view++
			x.index.add(q)
		}
		return true
	}
	r.clock(x, r.now)
	if rec := x.rep.Submit(q, tag); rec != nil {
		x.ld.out++
		x.ld.view++
		x.index.add(q)
	}
	r.fix(x)
	return true
}

// dispatch sends queued requests while a replica has room.
func (r *run) dispatch(now vtime.Time) {
	r.now = max(r.now, now)
	if r.dispatching {
		return
	}
	r.dispatching = true
	defer func() { r.dispatching = false }()
	for r.qhead < len(r.queue) {
		e := &r.queue[r.qhead]
		if !r.trySend(&e.q, e.tag) {
			break
		}
		r.queue[r.qhead] = queued{}
		r.qhead++
	}
	if r.qhead == len(r.queue) {
		r.queue, r.qhead = r.queue[:0], 0
	} else if r.qhead > 4096 && r.qhead > len(r.queue)/2 {
		n := copy(r.queue, r.queue[r.qhead:])
		r.queue, r.qhead = r.queue[:n], 0
	}
}

func (r *run) finish(x *replica, rec *sim.Record) {
	now := x.eng.Now()
	x.rep.Finished(rec)
	x.queries += int64(rec.Spec.PromptTokens)
	x.hits += int64(rec.CachedTokens)
	if r.windowed {
		// On the replica's replay: its own share of the series, merged after the window.
		x.share.at(now).completed++
		if rec.FirstToken >= 0 {
			b := x.share.at(rec.FirstToken)
			b.ttft = append(b.ttft, rec.FirstToken.Sub(rec.Send).Seconds()*1e3)
		}
		if x.rep.Live() == 0 {
			x.idleSince = now
		}
		return
	}
	x.ld.out--
	p := r.point(now)
	p.Completed++
	if rec.FirstToken >= 0 {
		ms := rec.FirstToken.Sub(rec.Send).Seconds() * 1e3
		r.point(rec.FirstToken).ttft.add(ms)
		if r.cfg.Autoscale != nil {
			r.scaleTT.add(ms)
		}
	}
	if x.ld.out == 0 {
		x.idleSince = now
		if x.draining {
			x.down = now
			r.upDirty = true
		}
	}
	if r.qhead < len(r.queue) {
		// The router decides in the middle of x's run: it reads x's KV usage as it is now.
		x.ld.kv = x.kvUsage()
		r.dispatch(now)
	}
}

func (r *run) scaleInterval() vtime.Duration {
	if s := r.cfg.Autoscale.IntervalS; s > 0 {
		return vtime.FromSeconds(s)
	}
	return 10 * vtime.Second
}

// autoscale decides at t whether to add or remove a replica of the first group.
func (r *run) autoscale(t vtime.Time) {
	a := r.cfg.Autoscale
	serving, starting, own := 0, 0, 0 // own: the first group's serving or starting
	waiting := len(r.queue) - r.qhead
	for _, x := range r.reps {
		switch {
		case x.down >= 0 || x.draining:
			continue
		case x.up > t:
			starting++
		default:
			serving++
			r.clock(x, t)
			waiting += x.eng.Scheduler().NumWaiting() + x.eng.Pending()
		}
		if x.group == 0 {
			own++
		}
	}
	minN := a.Min
	if minN == 0 {
		minN = r.cfg.Groups[0].Count
	}
	maxN := a.Max
	if maxN == 0 {
		maxN = math.MaxInt
	}
	busy := (a.QueuePerReplica > 0 && float64(waiting) > a.QueuePerReplica*float64(max(serving, 1))) ||
		(a.TTFTms > 0 && r.scaleTT.n > 0 && r.scaleTT.quantile(0.9) > a.TTFTms) ||
		(serving+starting == 0 && waiting > 0)
	r.scaleTT = logHist{}
	total := serving + starting
	switch {
	case busy && starting == 0 && own < maxN:
		up := t.Add(vtime.FromSeconds(a.StartupS))
		x := r.addReplica(0, t, up)
		x.idleSince = up
		r.push(up, evUp, x)
	case !busy && a.IdleS > 0 && own > minN:
		idle := vtime.FromSeconds(a.IdleS)
		for i := len(r.reps) - 1; i >= 0; i-- {
			x := r.reps[i]
			if x.group == 0 && x.serving(t) && x.ld.out == 0 && t.Sub(x.idleSince) >= idle {
				x.down = t
				r.upDirty = true
				break
			}
		}
	}
	p := r.point(t)
	p.Replicas = max(p.Replicas, total)
	live := r.haveNext || r.qhead < len(r.queue)
	for _, x := range r.reps {
		live = live || x.ld.out > 0
	}
	if live {
		r.push(t.Add(r.scaleInterval()), evScale, nil)
	}
}

func (r *run) result() *Result {
	res := &Result{Policy: r.cfg.Policy, RefreshS: r.cfg.RefreshS, Routed: r.routed, Rejected: r.rejected, EndS: r.now.Seconds(),
		SeriesIntervalS: r.width.Seconds(), windows: r.windows}
	reps := make([]*workload.Replica, len(r.reps))
	var cost, hours float64
	var maxRouted int64
	for i, x := range r.reps {
		x.rep.Done()
		reps[i] = x.rep
		stop := x.down
		if stop < 0 {
			stop = r.now
		}
		h := stop.Sub(x.start).Seconds() / 3600
		hours += h
		cost += h * r.cfg.Groups[x.group].PricePerHour
		rr := ReplicaResult{Name: x.name, Group: groupName(r.cfg.Groups[x.group], x.group), Routed: x.routed, PrefixQueries: x.queries, PrefixHits: x.hits,
			StartS: x.start.Seconds(), UpS: x.up.Seconds(), StopS: stop.Seconds(), Events: x.eng.Events(),
			Metrics: workload.Summarise(r.spec, r.cfg.Seed, []*workload.Replica{x.rep}, 1)}
		if life := stop.Sub(x.up); life > 0 {
			rr.BusyShare = x.eng.BusyTime.Seconds() / life.Seconds()
		}
		res.Replicas = append(res.Replicas, rr)
		res.PrefixQueries += x.queries
		res.PrefixHits += x.hits
		maxRouted = max(maxRouted, x.routed)
	}
	if res.PrefixQueries > 0 {
		res.PrefixHitRate = float64(res.PrefixHits) / float64(res.PrefixQueries)
	}
	res.Fleet = workload.Summarise(r.spec, r.cfg.Seed, reps, len(reps))
	if len(r.cfg.Groups) > 1 {
		res.Groups = r.groupResults(res)
	}
	res.ReplicaHours = hours
	if cost > 0 && r.now > 0 {
		res.CostPerHour = cost / (r.now.Seconds() / 3600)
		if out := res.Fleet.OutputTokens; out > 0 {
			res.CostPerMTokens = cost / (float64(out) / 1e6)
		}
	}
	if len(r.reps) > 0 && r.routed > 0 {
		res.BalanceMaxToMean = float64(maxRouted) / (float64(r.routed) / float64(len(r.reps)))
	}
	// Replicas over time: those alive in each bucket.
	for i := range r.series {
		p := &r.series[i]
		lo := vtime.Time(int64(i) * int64(r.width))
		hi := lo + vtime.Time(r.width)
		n := 0
		for _, x := range r.reps {
			stop := x.down
			if stop < 0 {
				stop = vtime.Never
			}
			if x.start < hi && stop > lo {
				n++
			}
		}
		p.Replicas = max(p.Replicas, n)
		res.PeakReplicas = max(res.PeakReplicas, p.Replicas)
		if p.waitN > 0 {
			p.EngineWaiting = p.waitSum / float64(p.waitN)
		}
		if p.ttft.n > 0 {
			p.TTFTn = int(p.ttft.n)
			p.TTFTp50, p.TTFTp99 = p.ttft.quantile(0.5), p.ttft.quantile(0.99)
		}
	}
	res.Series = slices.Clone(r.series)
	return res
}

// logHist is a histogram of positive values (ms) in buckets 1 % wide, for the series' and the
// autoscaler's percentiles: a quantile is within 0.5 % of the exact one.
type logHist struct {
	counts map[int32]uint32
	n      uint64
}

const logHistBase = 1.01

func (h *logHist) add(v float64) {
	if h.counts == nil {
		h.counts = map[int32]uint32{}
	}
	i := int32(math.MinInt32 + 1)
	if v > 0 {
		i = int32(math.Floor(math.Log(v) / math.Log(logHistBase)))
	}
	h.counts[i]++
	h.n++
}

// quantile is the q-quantile of the values added (NaN for none), within a bin's width.
func (h *logHist) quantile(q float64) float64 {
	if h.n == 0 {
		return math.NaN()
	}
	keys := make([]int32, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rank := max(uint64(math.Ceil(q*float64(h.n))), 1)
	var acc uint64
	for _, k := range keys {
		acc += uint64(h.counts[k])
		if acc >= rank {
			if k == math.MinInt32+1 {
				return 0
			}
			return math.Pow(logHistBase, float64(k)+0.5)
		}
	}
	return math.NaN()
}
