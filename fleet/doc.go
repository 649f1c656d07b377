// Package fleet simulates replicas of serving deployments behind one router, on one virtual
// clock: each replica is an engine of package sim, a full deployment as servesim simulates it
// (replicas may be of different GPUs or engine flags), and the router sends each request of a
// stream (package workload: a trace read row by row, or an open loop generated as it goes) to
// one of them.
//
// Reading order: fleet.go (Config, Group, Autoscale; the replica, its load and the two heaps),
// router.go (Policy, Policies, the policies and the router's prefix index), run.go (Run: the
// event loop, the router queue, the autoscaler, Result), window.go (routing ahead), ahead.go
// (routing ahead with an exact view), crew.go (the workers that replay the replicas).
//
// # The event loop
//
// Two kinds of time order the run. The engines' own events (steps, arrivals after the API
// server) are each engine's; the fleet's events are the next arrival, each replica's KV sample,
// the autoscaler's decisions and replicas coming up, in a heap ordered by (time, sequence of
// setting). Before the fleet handles an event at t, every engine whose next wake is at or before
// t runs up to t (a heap of the engines' next wakes finds them), so the router sees every replica
// as it is at t; engines with nothing to do before t are not touched. A busy engine's next wake is
// its step's end (sim.Engine.NextWake): a request reaching it before then only joins its waiting
// queue, so the router holds requests sent to a busy replica and gives them, at their times, when
// the engine next runs; the router reads every replica's outstanding requests and KV usage from
// one slab (load), not from the replicas. Engines are
// independent between the router's decisions, so they advance one after the other; only while
// the router's queue holds requests can a finish on one engine send a request to another, and
// then the engines advance one event time at a time, earliest first. Engine events at t come
// before the fleet's events at t, which come in the order they were set: an arrival counts as set
// when the previous arrival was handled, as a trace run's timers are (package workload). That is
// why a fleet of one replica measures, byte for byte, what a run of the same deployment on the
// same requests measures (fleet_test.go).
//
// Routing ahead (window.go). Round-robin and random routing look at no replica, so without caps
// or an autoscaler where a request goes depends only on the requests before it: the router routes
// a window of requests (some hundreds per replica) at once, and each replica then runs through
// the window alone, on Config.Workers goroutines, each given its arrivals and KV samples in the
// order the event loop gives them (window_test.go compares the two byte for byte). A replica's
// state stays in the processor's caches through the window, instead of being evicted by the
// others' between two of its steps, and the replicas share the cores.
//
// Routing ahead with an exact view (ahead.go). Least-outstanding, prefix-aware and session read
// only outstanding counts, which change by the router's sends and at the end of an engine's
// step; an engine foresees, when it schedules a step, how many requests it will finish, and no
// step is shorter than its floor (sim.Engine.Foresee, without speculative decoding). So from the
// earliest running step's end no replica finishes a request unforeseen before a floor later: the
// router routes the arrivals before then as the event loop would, and the replicas replay the
// window on the workers (a replica busy past the window only receives its requests when it next
// runs). The engines check both promises and stop the run with an error if one fails.
// ahead_test.go compares the two byte for byte but for engine event counts.
//
// Least-kv with an exact view (ahead.go) reads every replica's KV usage, which changes whenever an
// engine schedules a step: nothing foresees it, but a replica's usage stays as it is until its
// next wake, and under foresight an engine bounds it from below until a step floor after its
// running step's end (sim.Engine.KVFloor). The router routes on the usage of the replicas whose
// wake has not come and on the floors of those whose wake has, as long as its pick is strictly
// below every floor; then every replica with an event up to the window's end runs up to it on the
// workers. ahead_test.go compares it with the event loop too.
//
// Memory: the stream holds one request ahead; a request's state lives in its engine from
// submission to its last token and is then dropped; latencies go into the bounded distributions
// of package workload; the series over the run has one point per bucket. So memory follows the
// requests in flight and the run's length, not the requests finished.
//
// # Routing
//
// round-robin, random (seeded), least-outstanding (Vidur's global scheduler), least-kv (the
// smallest share of KV blocks in use, what vLLM's kv_cache_usage metric shows a router: it lags a
// burst, whose requests have not reached the cache yet, and herds it onto one replica),
// prefix-aware (llm-d's inference scheduler: a prefix-cache score, the share of the prompt's
// leading spans the router has sent to that replica before, from its own bounded index, minus
// PrefixLoadWeight times the replica's load relative to the busiest), and session (affinity by
// the trace's session, least-outstanding for a session's first request and for requests without
// one). The router's queue (Config.ReplicaCap, QueueCap) holds requests while every replica has
// its cap outstanding and rejects, counting them, those that find it full.
//
// A round-robin split of a Poisson stream is not N Poisson streams: each replica receives every
// N-th arrival, gaps that are sums of N exponentials (Erlang-N), smoother than Poisson, so each
// replica queues less than one replica fed Poisson arrivals at the per-replica rate (TTFT p99
// some 40 % lower for N = 4 near 60 % load). Random routing does thin Poisson into Poisson.
// routing_test.go checks both.
//
// # Autoscaling and cost
//
// The autoscaler decides every IntervalS: it asks for one more replica of the first group when
// the requests waiting (router queue and engines' waiting queues) exceed QueuePerReplica per
// serving replica, or the p90 TTFT of the interval's finished requests exceeds TTFTms, and no
// replica is starting; the new replica serves after StartupS (model load and start-up, given). A
// replica idle for IdleS is stopped while more than Min remain. Min and Max count the first
// group's replicas, and only they are added and stopped; the other groups stay as given.
// Replica-hours count each replica from the decision that asked for it to its stop; cost is
// replica-hours times each group's price.
//
// # Groups
//
// A fleet of several groups (Config.Groups: different GPUs or engine flags of one model) routes
// as one fleet; Result.Groups gives each group's share (FleetGroups builds the groups of the
// command's --group flags, Settings.FleetConfig prices them), and the text report names each
// replica's group.
//
// # Prefix-cache accounting
//
// Result.PrefixQueries and PrefixHits count, per finished request, its prompt tokens and the
// tokens its last admission found in the prefix cache: vLLM's prefix_cache_queries and
// prefix_cache_hits, per replica and for the fleet.
//
// # Determinism
//
// Replica i's engine is seeded with the seed xor i times a constant (replica 0 with the seed
// itself), the random policy draws from its own PCG stream of the seed, and the event loop is one
// goroutine. Routing ahead replays each replica on one goroutine with what it would get in the
// loop and merges their counts (sums of integers) after each window. The same configuration,
// requests and seed give the same result, bit for bit, on any number of workers.
package fleet
