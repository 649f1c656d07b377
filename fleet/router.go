package fleet

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/servesim/servesim/internal/editdist"
	"github.com/servesim/servesim/workload"
)

// Policy is a routing policy: how the router picks the replica a request goes to.
type Policy string

// The routing policies.
const (
	// RoundRobin deals requests to the serving replicas in turn.
	RoundRobin Policy = "round-robin"
	// Random picks a serving replica uniformly, from the fleet's seeded source.
	Random Policy = "random"
	// LeastOutstanding picks the replica with the fewest requests sent and not finished
	// (Vidur's global scheduler "least outstanding requests"; ties: the lowest index).
	LeastOutstanding Policy = "least-outstanding"
	// LeastKV picks the replica whose KV cache has the smallest share of blocks in use (ties:
	// fewer outstanding, then the lowest index).
	LeastKV Policy = "least-kv"
	// PrefixAware scores each replica by the share of the prompt it is expected to find in its
	// prefix cache minus PrefixLoadWeight times its load (its outstanding requests over the most
	// any serving replica has) and picks
	// the best (llm-d's inference scheduler: a prefix-cache scorer and a load scorer, weighted).
	// The expected hit comes from the router's own index of the prompt blocks it sent to each
	// replica (bounded by the replica's KV capacity, least recently routed dropped first), as
	// llm-d's approximate prefix index, not from the engines.
	PrefixAware Policy = "prefix-aware"
	// Session sends every request of a session to the replica its first request went to (that
	// one picked as least-outstanding); requests without a session go to the least outstanding.
	Session Policy = "session"
)

// Policies lists the routing policies, in the order they are documented.
func Policies() []Policy {
	return []Policy{RoundRobin, Random, LeastOutstanding, LeastKV, PrefixAware, Session}
}

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies() {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, 0, 6)
	for _, p := range Policies() {
		names = append(names, string(p))
	}
	if n := editdist.Nearest(s, names); n != "" {
		return "", fmt.Errorf("routing policy %q: did you mean %q? (want one of %s)", s, n, strings.Join(names, ", "))
	}
	return "", fmt.Errorf("routing policy %q: want one of %s", s, strings.Join(names, ", "))
}

// router holds the policies' state.
type router struct {
	policy Policy
	// view: the router reads its refreshed view of the replicas, not their state now.
	view bool
	rr   int
	rng  *rand.Rand
	w    float64
	// sessions maps a session to its replica's id (bounded: the oldest sessions are forgotten).
	sessions   map[uint64]int
	sessionLog []uint64
	sessionAt  int
}

// maxSessions bounds the session table: a session unseen for this many new sessions starts over.
const maxSessions = 1 << 20

func newRouter(p Policy, seed uint64, weight float64) *router {
	return &router{policy: p, rng: rand.New(rand.NewPCG(seed, 0x726f75746572)), w: weight, sessions: map[uint64]int{}}
}

// pick chooses among up (replicas serving, in index order, never empty; ld their loads) for q.
func (r *router) pick(up []*replica, ld []*load, q *workload.Request) *replica {
	switch r.policy {
	case RoundRobin:
		x := up[r.rr%len(up)]
		r.rr++
		return x
	case Random:
		return up[r.rng.IntN(len(up))]
	case LeastKV:
		best := 0
		for i, l := range ld[1:] {
			u, b := r.kv(l), r.kv(ld[best])
			if u < b || (u == b && r.out(l) < r.out(ld[best])) {
				best = i + 1
			}
		}
		return up[best]
	case PrefixAware:
		most := 1
		for _, l := range ld {
			most = max(most, r.out(l))
		}
		best := -1
		var bestScore float64
		blocks := len(q.Blocks) > 0 // (without, nothing is expected anywhere: no replica is read)
		for i, x := range up {
			var hit float64
			if blocks {
				hit = x.index.expected(q)
			}
			s := hit - r.w*float64(r.out(ld[i]))/float64(most)
			if best < 0 || s > bestScore || (s == bestScore && r.out(ld[i]) < r.out(ld[best])) {
				best, bestScore = i, s
			}
		}
		return up[best]
	case Session:
		if q.Session != 0 {
			if id, ok := r.sessions[q.Session]; ok {
				for i, l := range ld {
					if int(l.id) == id {
						return up[i]
					}
				}
			}
			x := r.least(up, ld)
			r.remember(q.Session, x.id)
			return x
		}
	}
	return r.least(up, ld)
}

// out is a replica's outstanding requests as the router sees them.
func (r *router) out(l *load) int {
	if r.view {
		return int(l.view)
	}
	return int(l.out)
}

// kv is a replica's KV-cache usage as the router sees it.
func (r *router) kv(l *load) float64 {
	if r.view {
		return l.viewKV
	}
	return l.kv
}

func (r *router) remember(s uint64, id int) {
	if len(r.sessionLog) < maxSessions {
		r.sessionLog = append(r.sessionLog, s)
	} else {
		delete(r.sessions, r.sessionLog[r.sessionAt])
		r.sessionLog[r.sessionAt] = s
		r.sessionAt = (r.sessionAt + 1) % maxSessions
	}
	r.sessions[s] = id
}

// least is the replica with the fewest outstanding requests as the router sees them (ties: the
// first).
func (r *router) least(up []*replica, ld []*load) *replica {
	// (A loop per view: this one runs at every arrival over every replica.)
	best := 0
	if r.view {
		bo := ld[0].view
		for i, l := range ld[1:] {
			if l.view < bo {
				best, bo = i+1, l.view
			}
		}
	} else {
		bo := ld[0].out
		for i, l := range ld[1:] {
			if l.out < bo {
				best, bo = i+1, l.out
			}
		}
	}
	return up[best]
}

// prefixIndex is the router's view of one replica's prefix cache: the chained hashes of the
// prompt spans it routed there, at most capacity of them, the least recently routed dropped
// first.
type prefixIndex struct {
	capacity int
	stamp    map[uint64]uint64 // chain hash -> last use
	ring     []ringEnt
	head     int
	clock    uint64
}

type ringEnt struct{ h, at uint64 }

func newPrefixIndex(capacity int) *prefixIndex {
	return &prefixIndex{capacity: max(capacity, 1), stamp: map[uint64]uint64{}}
}

func chainNext(parent, id uint64) uint64 {
	x := parent ^ (id + 0x9e3779b97f4a7c15 + (parent << 6) + (parent >> 2))
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	return x
}

// expected is the share of q's prompt found in the index: leading spans all present.
func (p *prefixIndex) expected(q *workload.Request) float64 {
	if p == nil || len(q.Blocks) == 0 || q.InputTokens == 0 {
		return 0
	}
	var h uint64 = 0xcafe
	n := 0
	for _, id := range q.Blocks {
		h = chainNext(h, id)
		if _, ok := p.stamp[h]; !ok {
			break
		}
		n++
	}
	return float64(min(n*q.BlockSpan, q.InputTokens)) / float64(q.InputTokens)
}

// add records that q's prompt was routed here.
func (p *prefixIndex) add(q *workload.Request) {
	if p == nil || len(q.Blocks) == 0 {
		return
	}
	var h uint64 = 0xcafe
	for _, id := range q.Blocks {
		h = chainNext(h, id)
		p.clock++
		p.stamp[h] = p.clock
		p.ring = append(p.ring, ringEnt{h, p.clock})
	}
	// Drop the least recently routed beyond capacity (ring entries whose stamp moved on are
	// stale and only compacted away).
	for len(p.stamp) > p.capacity && p.head < len(p.ring) {
		e := p.ring[p.head]
		p.head++
		if p.stamp[e.h] == e.at {
			delete(p.stamp, e.h)
		}
	}
	if len(p.ring)-p.head > 4*p.capacity+1024 {
		n := 0
		for _, e := range p.ring[p.head:] {
			if p.stamp[e.h] == e.at {
				p.ring[n] = e
				n++
			}
		}
		p.ring, p.head = p.ring[:n], 0
	} else if p.head > len(p.ring)/2 && p.head > 1024 {
		p.ring = append(p.ring[:0], p.ring[p.head:]...)
		p.head = 0
	}
}

// PolicyNames lists the policies as "a, b, c" (the help of --router).
func PolicyNames() string {
	var n []string
	for _, p := range Policies() {
		n = append(n, string(p))
	}
	return strings.Join(n, ", ")
}
