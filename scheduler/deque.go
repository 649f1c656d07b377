package scheduler

import "fmt"

// deque is the waiting queue: a ring buffer, so the FCFS pop at the front, the append of a new
// request at the back and the return of a preempted request to the front each take constant
// time, whatever the queue's length (an overloaded server queues a large share of a long trace).
type deque struct {
	buf  []*Request // len(buf) is zero or a power of two
	head int
	n    int
}

func (q *deque) len() int { return q.n }

// at returns the i-th request from the front.
func (q *deque) at(i int) *Request { return q.buf[(q.head+i)&(len(q.buf)-1)] }

func (q *deque) front() *Request { return q.buf[q.head] }

func (q *deque) grow() {
	if q.n < len(q.buf) {
		return
	}
	buf := make([]*Request, max(2*len(q.buf), 16))
	for i := 0; i < q.n; i++ {
		buf[i] = q.at(i)
	}
	q.buf, q.head = buf, 0
}

func (q *deque) pushBack(r *Request) {
	q.grow()
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = r
	q.n++
}

func (q *deque) pushFront(r *Request) {
	q.grow()
	q.head = (q.head - 1) & (len(q.buf) - 1)
	q.buf[q.head] = r
	q.n++
}

func (q *deque) popFront() *Request {
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return r
}

// remove takes r out of the queue, keeping the others' order (an abort: linear in the length).
func (q *deque) remove(r *Request) {
	for i := 0; i < q.n; i++ {
		if q.at(i) != r {
			continue
		}
		for j := i; j < q.n-1; j++ {
			q.buf[(q.head+j)&(len(q.buf)-1)] = q.at(j + 1)
		}
		q.buf[(q.head+q.n-1)&(len(q.buf)-1)] = nil
		q.n--
		return
	}
	panic(fmt.Sprintf("scheduler: %v not in the waiting queue", r))
}

// slice returns the queue front to back (tests and diagnostics).
func (q *deque) slice() []*Request {
	out := make([]*Request, q.n)
	for i := range out {
		out[i] = q.at(i)
	}
	return out
}
