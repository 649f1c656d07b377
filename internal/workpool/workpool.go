// Package workpool runs independent jobs on worker goroutines: the one pool of the planner's
// sweeps and the calibration's simulations. A job writes only its own result slot (index i of a
// slice the caller owns), so the results do not depend on the number of workers or on the order
// in which jobs finish; each job is itself single-threaded and seeded.
package workpool

import (
	"runtime"
	"sync"
)

// Workers is n when positive, else runtime.GOMAXPROCS(0): the CPUs this process may use.
func Workers(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// Run calls job(i) for every i in [0, n) on Workers(workers) goroutines (no more than n), hands
// out the indices in increasing order, and returns when every job has returned. done, if not nil,
// is called after each job with the number of jobs finished so far and n, from one goroutine at
// a time.
func Run(n, workers int, job func(i int), done func(finished, total int)) {
	if n <= 0 {
		return
	}
	var mu sync.Mutex
	finished := 0
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(Workers(workers), n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				job(i)
				if done != nil {
					mu.Lock()
					finished++
					done(finished, n)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
