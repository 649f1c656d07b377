package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/servesim/servesim/internal/numfmt"
	"github.com/servesim/servesim/internal/workpool"
	"github.com/servesim/servesim/workload"
)

// DefaultExact is the number of top rows the fast search guarantees to rank as the exhaustive
// sweep does.
const DefaultExact = 5

// screenMargin is how far a screened row may miss an objective and still get a full simulation:
// a latency up to 1.5 x its limit (per-user tok/s down to limit / 1.5). A short run sees fewer
// requests queue behind it than the full run, so its latencies are, if anything, lower; the
// margin covers the quantile's sampling noise over fewer requests.
const screenMargin = 0.5

// Screen sizes: a fifth of the requests, at least 100 (or all of them) and at most 300; at least
// four rounds of a closed loop's concurrency. A workload whose screen would be more than 60 % of
// it is simulated in full at once.
const (
	screenMin      = 100
	screenMax      = 300
	screenMaxShare = 0.6
)

// Search says how a plan was searched: every row in full (Exhaustive), or the fast passes.
type Search struct {
	Exhaustive bool `json:"exhaustive,omitempty"`
	// Requests is the full workload's request count; ScreenRequests the screen's (0: none).
	Requests       int `json:"requests,omitempty"`
	ScreenRequests int `json:"screen_requests,omitempty"`
	// Exact is the number of top rows ranked as the exhaustive sweep ranks them.
	Exact int `json:"exact,omitempty"`
	// Screens and Full count distinct simulations of each kind; ScreenedRows the rows whose
	// figures come from their screen only.
	Screens      int `json:"screens"`
	Full         int `json:"full"`
	ScreenedRows int `json:"screened_rows,omitempty"`
	// Why is set when the search was exhaustive although the fast passes were asked for.
	Why string `json:"why,omitempty"`
}

// Progress is a planning run's progress: Done of Total simulations of the current stage. The
// full stage runs in batches: its Total grows with each batch, Done counts on.
type Progress struct {
	// Stage is "screen", "full" (the rows that can still reach the top or the frontier) or
	// "simulate" (an exhaustive sweep).
	Stage       string
	Done, Total int
}

// Estimate is what a planning run will do, given before it simulates (Options.Start).
type Estimate struct {
	Rows        int
	Simulations int // distinct simulations of the sweep (rows sharing one count once)
	Requests    int // requests per full simulation (0: not a request count, e.g. a benchmark cell)
	// ScreenRequests is the screen's request count (0: exhaustive).
	ScreenRequests int
	Exact          int
	// CheapestTier is the number of distinct simulations at the lowest price that loads: the
	// fewest full runs the search can make.
	CheapestTier int
	Workers      int
	// PerScreenS and PerFullS are the measured wall seconds of one screen and one full
	// simulation (from the first simulations, run before this estimate; 0 when none ran).
	PerScreenS, PerFullS float64
	Why                  string
}

// Seconds estimates the wall time: lo for the search at its fastest (screens and the cheapest
// tier in full), hi for every row in full (the exhaustive sweep).
func (e Estimate) Seconds() (lo, hi float64) {
	w := float64(max(e.Workers, 1))
	hi = float64(e.Simulations) * e.PerFullS / w
	if e.ScreenRequests == 0 {
		return hi, hi
	}
	lo = (float64(e.Simulations)*e.PerScreenS + float64(e.CheapestTier)*e.PerFullS) / w
	return lo, hi
}

// screenSpec is the short horizon of a workload: its first n requests, for open loops at a
// constant rate and closed loops; nil when the workload is not one, or too short to gain.
func screenSpec(s *workload.Spec) (sc *workload.Spec, full, n int) {
	c := *s
	switch s.Kind {
	case workload.KindOpen:
		if len(s.Open.Ramp) > 0 || s.Open.Requests == 0 {
			return nil, 0, 0
		}
		full = s.Open.Requests
		n = min(max(full/5, min(full, screenMin)), screenMax)
		c.Open.Requests = n
		if s.Open.DurationS > 0 && s.Open.RatePerS > 0 {
			// The duration stops the arrivals first when it is shorter: keep the same share.
			c.Open.DurationS = s.Open.DurationS * float64(n) / float64(full)
		}
	case workload.KindClosed:
		full = s.Closed.Requests
		n = min(max(full/5, min(full, screenMin), 4*s.Closed.Concurrency), max(screenMax, 4*s.Closed.Concurrency))
		c.Closed.Requests = n
	default:
		return nil, 0, 0
	}
	if float64(n) > screenMaxShare*float64(full) {
		return nil, full, 0
	}
	return &c, full, n
}

// possiblyMet reports whether a screened row might meet every objective in full: it does in the
// screen, or misses each objective it misses by at most screenMargin.
func possiblyMet(p *Perf) bool {
	if p == nil {
		return false
	}
	if p.Met {
		return true
	}
	for _, c := range p.Checks {
		if !c.Met && !c.Undefined && c.Headroom < -screenMargin {
			return false
		}
	}
	return true
}

// class is one distinct simulation of the sweep during the search.
type class struct {
	job   int // representative candidate (lowest index of the class in this shard)
	rows  int // rows sharing it
	price float64
	group string // hardware layout
	out   *outcome
	full  bool
}

// better orders two classes as finalize orders their rows: status (meets, marginal, misses,
// queues), then price, then (rows that meet or marginally meet) the probability of meeting the
// objectives, then $/M output tokens, then headroom, then index.
func (q *Question) better(a, b *class) int {
	st := func(c *class) int { return statusRank(c.out.status()) }
	if d := cmp.Compare(st(a), st(b)); d != 0 {
		return d
	}
	if a.out.status() == StatusPruned {
		return cmp.Compare(a.job, b.job)
	}
	if d := cmp.Compare(a.price, b.price); d != 0 {
		return d
	}
	if d := cmp.Compare(b.out.pMeet, a.out.pMeet); d != 0 && meetsOrMarginal(a.out.status()) {
		return d
	}
	if d := cmp.Compare(a.out.costPerMTok(a.price), b.out.costPerMTok(b.price)); d != 0 {
		return d
	}
	if d := cmp.Compare(headroomMin(b.out.perf), headroomMin(a.out.perf)); d != 0 {
		return d
	}
	return cmp.Compare(a.job, b.job)
}

func (o *outcome) costPerMTok(price float64) float64 {
	if o.perf == nil || o.perf.OutputTokS <= 0 {
		return costKey(&Result{})
	}
	return price / (o.perf.OutputTokS * 3600) * 1e6
}

// search evaluates the classes of the sweep: all in full (exhaustive, a shard, or a workload
// without a short horizon), or in passes:
//
//  1. screen: every class on the workload's first requests (screenSpec);
//  2. full, by price tier from the cheapest: every class of the tier that may meet the
//     objectives (possiblyMet), until the classes met in full hold Exact rows; when the whole
//     sweep holds fewer, the missed classes of the cheapest tiers too, until Exact rows rank;
//  3. frontier: the best class of each hardware layout (the table's rows) in full, again until
//     every layout's best is a full simulation (at most five rounds of 1, 2, 4, 8, 16 classes
//     per layout).
//
// Rows ranked above the Exact-th are then those of the exhaustive sweep: a class that is not
// simulated in full is either in a dearer tier than Exact met rows (it ranks below them by
// price) or missed its screen by more than the margin (a missed row ranks below every met one).
func (q *Question) search(cands []candidate, jobs []int, rows map[string]int, o Options) (map[string]*outcome, *Search) {
	workers := workpool.Workers(o.Workers)
	exact := o.Exact
	if exact <= 0 {
		exact = DefaultExact
	}
	cls := make([]*class, len(jobs))
	for j, i := range jobs {
		c := &cands[i]
		cls[j] = &class{job: i, rows: rows[c.key], price: float64(c.config.Count) * c.lay.gpu.PricePerHour, group: groupKey(&c.config)}
	}
	sc, full, n := screenSpec(q.Workload)
	s := &Search{Exhaustive: true, Requests: full}
	switch {
	case o.Exhaustive:
	case o.Shard.Count > 1:
		s.Why = "a shard simulates every row in full (merge must give the unsharded plan)"
	case sc == nil && full > 0:
		s.Why = fmt.Sprintf("the workload's %d requests are too few to screen", full)
	case sc == nil:
		s.Why = "only open loops at a constant rate and closed loops are screened"
	default:
		s.Exhaustive, s.ScreenRequests, s.Exact = false, n, exact
	}
	// Runs come in batches (the pilots, the screens, a tier, a round of layouts): their progress
	// counts on from the simulations of the same kind before, so that the last count is the
	// plan's (Search.Screens, Search.Full).
	run := func(stage string, sel []*class, spec *workload.Spec) {
		var prog func(int, int)
		if o.Progress != nil {
			base := s.Screens
			if spec == q.Workload {
				base = s.Full
			}
			prog = func(d, t int) { o.Progress(Progress{Stage: stage, Done: base + d, Total: base + t}) }
		}
		outs := make([]outcome, len(sel))
		workpool.Run(len(sel), o.Workers, func(k int) { outs[k] = q.evaluateSpec(&cands[sel[k].job], spec) }, prog)
		for k, c := range sel {
			c.out = &outs[k]
			c.full = spec == q.Workload
			if c.full {
				s.Full++
			} else {
				s.Screens++
			}
		}
	}
	// The estimate: time the first classes that simulate, then report. The pilots run as the
	// sweep will, one per worker at once, so that the machine's load (other processes, the
	// workers' contention for memory) is in the time: dst is one simulation's share of a worker,
	// the batch's wall time x workers / simulations.
	est := Estimate{Rows: len(cands), Simulations: len(cls), Requests: full, ScreenRequests: s.ScreenRequests, Exact: s.Exact, Workers: workers, Why: s.Why}
	pilot := func(spec *workload.Spec, dst *float64) []*class {
		var done []*class
		var secs float64
		sims := 0
		for sims < 2 && len(done) < 8+workers {
			var batch []*class
			for _, c := range cls {
				if c.out == nil && len(batch) < max(workers, 2) {
					batch = append(batch, c)
				}
			}
			if len(batch) == 0 {
				break
			}
			t0 := time.Now()
			run("pilot", batch, spec)
			wall := time.Since(t0).Seconds()
			done = append(done, batch...)
			loaded := 0
			for _, c := range batch {
				if c.out.perf != nil {
					loaded++
				}
			}
			if loaded > 0 {
				// The rows that do not load cost next to nothing: the batch's time is the loaded ones'.
				secs += wall * float64(min(workers, len(batch)))
				sims += loaded
			}
		}
		if sims > 0 {
			*dst = secs / float64(sims)
		}
		return done
	}
	if s.Exhaustive {
		pilot(q.Workload, &est.PerFullS)
	} else {
		pilot(sc, &est.PerScreenS)
		// One full run of the first class that loads, for the per-run cost (it is needed anyway
		// when its tier is reached; otherwise its full figures replace its screen's).
		for _, c := range cls {
			if c.out != nil && c.out.perf != nil {
				t0 := time.Now()
				run("pilot", []*class{c}, q.Workload)
				est.PerFullS = time.Since(t0).Seconds()
				break
			}
		}
		est.CheapestTier = cheapestTier(cls)
	}
	if o.Start != nil {
		o.Start(est)
	}
	pending := func(full bool) []*class {
		var out []*class
		for _, c := range cls {
			if c.out == nil || (full && !c.full) {
				out = append(out, c)
			}
		}
		return out
	}
	if s.Exhaustive {
		run("simulate", pending(false), q.Workload)
		return s.outcomes(cands, cls), s
	}
	// 1. Screens.
	var todo []*class
	for _, c := range cls {
		if c.out == nil {
			todo = append(todo, c)
		}
	}
	run("screen", todo, sc)
	// 2. Full runs by price tier until Exact rows meet the objectives in full.
	tiers := priceTiers(cls)
	fullRun := func(sel []*class) {
		var need []*class
		for _, c := range sel {
			if !c.full {
				need = append(need, c)
			}
		}
		if len(need) > 0 {
			run("full", need, q.Workload)
		}
	}
	count := func(statuses ...string) int {
		n := 0
		for _, c := range cls {
			if c.full && slices.Contains(statuses, c.out.status()) {
				n += c.rows
			}
		}
		return n
	}
	for _, t := range tiers {
		if count(StatusOK) >= exact {
			break
		}
		var sel []*class
		for _, c := range t {
			// A row that queues users ranks below every row that holds them, whatever its full
			// figures: only the others can reach the top.
			if c.out.perf != nil && c.out.queues == nil && possiblyMet(c.out.perf) {
				sel = append(sel, c)
			}
		}
		fullRun(sel)
	}
	if need := exact - count(StatusOK, StatusMarginal); need > 0 {
		// Fewer rows meet the objectives than the top holds (every row that may meet them is
		// simulated in full by now): the cheapest missed rows rank next, in full, then the rows
		// that queue users. Only rows of the tiers taken count (a dearer tier's rows of a status
		// rank below every row of that status in a cheaper one).
		for _, st := range []string{StatusMissed, StatusQueues} {
			n := 0
			for _, t := range tiers {
				if n >= need {
					break
				}
				fullRun(t)
				for _, c := range t {
					if c.out.status() == st {
						n += c.rows
					}
				}
			}
			if need -= n; need <= 0 {
				break
			}
		}
	}
	// 3. The best class of each layout in full. A layout whose best screened class misses in
	// full hands the place to its next; each round takes more of a layout's next classes at once
	// (1, 2, 4, 8, 16).
	for round := 0; round < 5; round++ {
		byGroup := map[string][]*class{}
		var order []string
		for _, c := range cls {
			if c.out.perf == nil {
				continue
			}
			if _, ok := byGroup[c.group]; !ok {
				order = append(order, c.group)
			}
			byGroup[c.group] = append(byGroup[c.group], c)
		}
		var sel []*class
		for _, g := range order {
			cs := byGroup[g]
			slices.SortStableFunc(cs, q.better)
			if cs[0].full {
				continue
			}
			for _, c := range cs[:min(len(cs), 1<<round)] {
				if !c.full {
					sel = append(sel, c)
				}
			}
		}
		if len(sel) == 0 {
			break
		}
		fullRun(sel)
	}
	return s.outcomes(cands, cls), s
}

// outcomes maps each class key to its outcome, marking those from a screen, and counts them.
func (s *Search) outcomes(cands []candidate, cls []*class) map[string]*outcome {
	m := make(map[string]*outcome, len(cls))
	for _, c := range cls {
		if !c.full && c.out.perf != nil {
			c.out.screened = true
			s.ScreenedRows += c.rows
		}
		m[cands[c.job].key] = c.out
	}
	return m
}

// priceTiers groups the classes that load by price, cheapest first (each tier in index order).
func priceTiers(cls []*class) [][]*class {
	var ok []*class
	for _, c := range cls {
		if c.out != nil && c.out.perf != nil {
			ok = append(ok, c)
		}
	}
	slices.SortStableFunc(ok, func(a, b *class) int { return cmp.Compare(a.price, b.price) })
	var tiers [][]*class
	for i := 0; i < len(ok); {
		j := i
		for j < len(ok) && ok[j].price == ok[i].price {
			j++
		}
		tiers = append(tiers, ok[i:j])
		i = j
	}
	return tiers
}

// cheapestTier counts the classes at the lowest price (before any is simulated, every class).
func cheapestTier(cls []*class) int {
	lo, n := 0.0, 0
	for _, c := range cls {
		if c.out != nil && c.out.perf == nil && c.out.stage != "" {
			continue
		}
		switch {
		case n == 0 || c.price < lo:
			lo, n = c.price, 1
		case c.price == lo:
			n++
		}
	}
	return n
}

// Describe says what the run will do and how long it should take, in a few lines for stderr.
func (e Estimate) Describe() string {
	var b strings.Builder
	sims := numfmt.Commas(strconv.Itoa(e.Simulations))
	lo, hi := e.Seconds()
	what := "simulations"
	if e.Requests > 0 {
		what = fmt.Sprintf("simulations of %s requests", numfmt.Commas(strconv.Itoa(e.Requests)))
	}
	if e.ScreenRequests == 0 {
		fmt.Fprintf(&b, "servesim: %s rows, %s distinct %s", numfmt.Commas(strconv.Itoa(e.Rows)), sims, what)
		if e.PerFullS > 0 {
			fmt.Fprintf(&b, ": about %s on %d workers (%.3f s each)", durationText(hi), e.Workers, e.PerFullS)
		}
		b.WriteString("\n")
		if e.Why != "" {
			fmt.Fprintf(&b, "servesim: every row in full: %s\n", e.Why)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "servesim: %s rows, %s distinct %s; fast search: screen each on its first %d requests, then the rows that can still reach the top %d or lead their layout in full\n",
		numfmt.Commas(strconv.Itoa(e.Rows)), sims, what, e.ScreenRequests, e.Exact)
	if e.PerFullS > 0 {
		fmt.Fprintf(&b, "servesim: estimate: from about %s on %d workers (screens %.3f s each, full runs %.3f s each, %d in the cheapest tier); --exhaustive would take about %s\n",
			durationText(lo), e.Workers, e.PerScreenS, e.PerFullS, e.CheapestTier, durationText(hi))
	}
	return b.String()
}

// Describe says how the plan was searched, for the closing line on stderr.
func (s *Search) Describe() string {
	if s == nil || s.Exhaustive {
		return ""
	}
	return fmt.Sprintf("%s screens of %d requests and %s full simulations of %s; the top %d rows as the exhaustive sweep ranks them, %s rows from their screen only",
		numfmt.Commas(strconv.Itoa(s.Screens)), s.ScreenRequests, numfmt.Commas(strconv.Itoa(s.Full)), numfmt.Commas(strconv.Itoa(s.Requests)), s.Exact,
		numfmt.Commas(strconv.Itoa(s.ScreenedRows)))
}

// durationText writes seconds for people: "8.2 s", "42 s", "3 min 05 s", "1 h 02 min".
func durationText(s float64) string { return numfmt.Duration(s, 10) }
