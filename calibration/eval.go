package calibration

import (
	"math"
	"runtime"
	"sort"
	"sync"

	"servesim/bench"
	"servesim/matrix"
	"servesim/model"
	"servesim/sim"
)

// Weights set how much each metric counts in the objective (squared log errors).
type Weights struct {
	DecodeTotal float64 // decode total tok/s
	PerRequest  float64 // decode per-request tok/s
	TBT         float64 // decode time between tokens (nearly 1 / per-request)
	TTFT        float64 // decode-cell TTFT (noisy: cache hits, queueing)
	Prefill     float64 // prefill tok/s
	PrefillTTFT float64 // prefill-row TTFT
	// Status is the penalty for each decode cell whose status (Valid / Requests queued / Over
	// capacity) is predicted wrong, in the same units as a log error.
	Status float64
}

// DefaultWeights counts throughput fully, latency half, and a wrong status like a 100 % error.
func DefaultWeights() Weights {
	return Weights{DecodeTotal: 1, PerRequest: 1, TBT: 0.25, TTFT: 0.5, Prefill: 1, PrefillTTFT: 0.5, Status: 1}
}

// slotsPerCell is the residual count per training cell (fixed, so Jacobians line up).
const slotsPerCell = 5

// evaluator runs the simulations an objective needs, on worker goroutines. Each simulation is
// single-threaded and seeded per job, so results do not depend on the worker count.
type evaluator struct {
	prob     *Problem
	w        Weights
	workers  int
	train    []matrix.Key // training cells that ran in the measurement or have a status to match
	measured map[matrix.Key]*matrix.Cell
	kvSlot   bool
	evals    int
	mu       sync.Mutex
}

func newEvaluator(p *Problem, w Weights, workers int) *evaluator {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	e := &evaluator{prob: p, w: w, workers: workers, measured: map[matrix.Key]*matrix.Cell{}, kvSlot: p.KVTokens > 0}
	for _, c := range p.Measured.Cells() {
		c := c
		e.measured[c.Key()] = &c
		if p.Train.Match(&c) {
			e.train = append(e.train, c.Key())
		}
	}
	return e
}

func (e *evaluator) nResiduals() int {
	n := len(e.train) * slotsPerCell
	if e.kvSlot {
		n++
	}
	return n
}

// outcome is one parameter set's simulated training cells.
type outcome struct {
	server *sim.Server
	err    error
	jobs   []bench.Job
	cells  map[matrix.Key]matrix.Cell
}

type task struct {
	set int
	job bench.Job
}

// simulate runs the jobs named by keys (nil: every job) for each parameter set, on the workers.
func (e *evaluator) simulate(sets []model.Params, keys map[matrix.Key]bool) []outcome {
	outs := make([]outcome, len(sets))
	var tasks []task
	for i := range sets {
		srv, err := sim.NewServer(e.prob.Deployment, sets[i])
		outs[i] = outcome{server: srv, err: err, cells: map[matrix.Key]matrix.Cell{}}
		if err != nil {
			continue
		}
		jobs, err := bench.Plan(srv, e.prob.Protocol)
		if err != nil {
			outs[i].err = err
			continue
		}
		outs[i].jobs = jobs
		for _, j := range jobs {
			k := matrix.Key{Phase: j.Phase, Context: j.Label, Concurrency: j.Concurrency}
			if j.Phase == matrix.Prefill {
				k.Concurrency = 1
			}
			if keys == nil || keys[k] {
				tasks = append(tasks, task{set: i, job: j})
			}
		}
	}
	// Longest jobs first (low concurrency, long windows of short steps) for a balanced finish.
	sort.SliceStable(tasks, func(a, b int) bool { return cost(&tasks[a].job) > cost(&tasks[b].job) })
	results := make([]bench.JobResult, len(tasks))
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < e.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t := &tasks[i]
				results[i], errs[i] = bench.RunJob(outs[t.set].server, e.prob.Protocol, t.job, e.prob.Seed)
			}
		}()
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, t := range tasks {
		o := &outs[t.set]
		if errs[i] != nil && o.err == nil {
			o.err = errs[i]
		}
		o.cells[results[i].Cell.Key()] = results[i].Cell
	}
	e.mu.Lock()
	e.evals += len(sets)
	e.mu.Unlock()
	return outs
}

// cost is a rough relative run time of a job, for ordering.
func cost(j *bench.Job) float64 {
	if j.Over {
		return 0
	}
	if j.Phase == matrix.Prefill {
		return float64(j.Tokens) / 8192
	}
	return 2000/float64(min(j.Concurrency, 32)) + float64(j.Tokens)/8192
}

func logErr(pred, meas float64) float64 {
	if !(pred > 0) || !(meas > 0) || math.IsNaN(pred) || math.IsNaN(meas) {
		return 0
	}
	return math.Log(pred / meas)
}

// residuals turns an outcome into the weighted residual vector.
func (e *evaluator) residuals(o *outcome) []float64 {
	r := make([]float64, e.nResiduals())
	if o.err != nil {
		// The parameters do not give a runnable server: a large, flat penalty.
		for i := range r {
			r[i] = 3
		}
		return r
	}
	w := &e.w
	for i, k := range e.train {
		m := e.measured[k]
		p, ok := o.cells[k]
		s := r[i*slotsPerCell : (i+1)*slotsPerCell]
		if !ok {
			if k.Phase == matrix.Decode && m.Status.Ran() {
				s[4] = w.Status
			}
			continue
		}
		if k.Phase == matrix.Prefill {
			s[0] = w.Prefill * logErr(p.TotalTokS, m.TotalTokS)
			s[1] = w.PrefillTTFT * logErr(p.TTFTms, m.TTFTms)
			continue
		}
		if p.Status != m.Status {
			s[4] = w.Status
		}
		if p.Status.Ran() && m.Status.Ran() {
			s[0] = w.DecodeTotal * logErr(p.TotalTokS, m.TotalTokS)
			s[1] = w.PerRequest * logErr(p.PerRequestTokS, m.PerRequestTokS)
			s[2] = w.TBT * logErr(p.TBTms, m.TBTms)
			s[3] = w.TTFT * logErr(p.TTFTms, m.TTFTms)
		}
	}
	if e.kvSlot {
		r[len(r)-1] = 5 * logErr(float64(o.server.Layout.KVCacheSizeTokens), float64(e.prob.KVTokens))
	}
	return r
}

// trainKeys is the set of training keys.
func (e *evaluator) trainKeys() map[matrix.Key]bool {
	m := make(map[matrix.Key]bool, len(e.train))
	for _, k := range e.train {
		m[k] = true
	}
	return m
}

func sumSq(r []float64) float64 {
	s := 0.0
	for _, v := range r {
		s += v * v
	}
	return s
}
