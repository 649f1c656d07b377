package fleet

import (
	"runtime"
	"sync/atomic"
	"time"
)

// crew runs a window's replicas on Config.Workers goroutines that last as long as the run: the
// caller's and helpers'. A replica runs on the same one (the replicas split in blocks of
// consecutive indices, whose state was allocated side by side: two workers writing one cache
// line would pass it back and forth), so its state stays in one processor's caches from window
// to window instead of following whichever worker is free; a worker that has run its own list
// while another is still busy takes the busy one's next replicas too. Windows are short (tens of
// microseconds of work), so a helper waits for the next one spinning for a while before it
// sleeps: waking a sleeping goroutine costs about as much as a window.
type crew struct {
	n       int
	reps    int            // the fleet's replicas
	lists   [][]*replica   // by worker: the window's replicas it runs
	next    []atomic.Int32 // by worker: its list's next replica to take
	fn      func(*replica)
	gen     atomic.Uint64 // windows posted
	help    []helper
	stopped atomic.Bool
}

type helper struct {
	done     atomic.Uint64 // the last window it finished
	sleeping atomic.Bool
	wake     chan struct{}
}

// spinFor is how long a goroutine spins for a window or its end before it sleeps.
const spinFor = 200 * time.Microsecond

func newCrew(workers, replicas int) *crew {
	c := &crew{n: max(workers, 1), reps: max(replicas, 1)}
	c.lists = make([][]*replica, c.n)
	c.next = make([]atomic.Int32, c.n)
	c.help = make([]helper, c.n-1)
	for i := range c.help {
		c.help[i].wake = make(chan struct{}, 1)
		go c.work(i)
	}
	return c
}

// work is helper i's loop: it runs list i+1 of every window posted.
func (c *crew) work(i int) {
	h := &c.help[i]
	var seen uint64
	for {
		for start := time.Now(); c.gen.Load() == seen; {
			if c.stopped.Load() {
				return
			}
			if time.Since(start) < spinFor {
				runtime.Gosched()
				continue
			}
			// Sleep, unless a window came since (run reads sleeping after posting).
			h.sleeping.Store(true)
			if c.gen.Load() == seen && !c.stopped.Load() {
				<-h.wake
			}
			h.sleeping.Store(false)
			start = time.Now()
		}
		seen = c.gen.Load()
		c.drain(i + 1)
		h.done.Store(seen)
	}
}

// run calls fn on every replica of busy, each on its worker, and returns when all are done.
func (c *crew) run(busy []*replica, fn func(*replica)) {
	if c.n == 1 || len(busy) == 1 {
		for _, x := range busy {
			fn(x)
		}
		return
	}
	for i := range c.lists {
		c.lists[i] = c.lists[i][:0]
		c.next[i].Store(0)
	}
	for _, x := range busy {
		k := min(x.id*c.n/c.reps, c.n-1)
		c.lists[k] = append(c.lists[k], x)
	}
	c.fn = fn
	g := c.gen.Add(1)
	for i := range c.help {
		if h := &c.help[i]; h.sleeping.Load() {
			select {
			case h.wake <- struct{}{}:
			default:
			}
		}
	}
	c.drain(0)
	for i := range c.help {
		for c.help[i].done.Load() != g {
			runtime.Gosched()
		}
	}
}

// drain runs worker k's list, then what is left of the others'.
func (c *crew) drain(k int) {
	for j := range c.n {
		w := (k + j) % c.n
		l := c.lists[w]
		for {
			i := int(c.next[w].Add(1)) - 1
			if i >= len(l) {
				break
			}
			c.fn(l[i])
		}
	}
}

// stop ends the helpers.
func (c *crew) stop() {
	c.stopped.Store(true)
	for i := range c.help {
		select {
		case c.help[i].wake <- struct{}{}:
		default:
		}
	}
}
