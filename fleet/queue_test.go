package fleet

import (
	"bytes"
	"testing"

	"github.com/servesim/servesim/workload"
)

// TestFleetDeterministic: the same fleet, requests and seed give the same bytes.
func TestFleetDeterministic(t *testing.T) {
	srv := llama8B(t)
	spec := openSpec(t, 60, 3000, 2, 800, 100)
	a := mustJSON(t, runFleet(t, srv, 3, Random, spec, 9))
	b := mustJSON(t, runFleet(t, srv, 3, Random, spec, 9))
	if !bytes.Equal(a, b) {
		t.Error("two runs with the same seed differ")
	}
}

// TestRouterQueueCaps: with at most 4 requests outstanding per replica and 20 places in the
// router's queue, a burst far beyond both is partly rejected at the router; every request is
// either completed or counted rejected, no replica ever holds more than its cap, and the queue
// shows in the series.
func TestRouterQueueCaps(t *testing.T) {
	srv := llama8B(t)
	spec := openSpec(t, 400, 2000, 0, 2000, 300)
	st, err := spec.Stream(1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Groups: []Group{{Server: srv, Count: 2}}, Policy: LeastOutstanding, ReplicaCap: 4, QueueCap: 20, Spec: spec}, st)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected == 0 || int64(res.Fleet.Completed)+res.Rejected != res.Routed || res.Routed != 2000 {
		t.Errorf("routed %d, completed %d, rejected at the router %d: want some rejected and every request accounted for", res.Routed, res.Fleet.Completed, res.Rejected)
	}
	peakQ := 0
	for _, p := range res.Series {
		peakQ = max(peakQ, p.RouterQueue)
	}
	if peakQ != 20 {
		t.Errorf("router queue peaked at %d, want its cap 20", peakQ)
	}
	for _, r := range res.Replicas {
		if r.Metrics.KV.Peak <= 0 {
			t.Errorf("replica %s served nothing", r.Name)
		}
		for _, s := range r.Metrics.KV.Samples {
			if s.Running+s.Waiting > 4 {
				t.Errorf("replica %s: %d running + %d waiting at %.1f s, above the cap of 4", r.Name, s.Running, s.Waiting, s.TimeS)
				break
			}
		}
	}
}

// TestAutoscaler: one replica and a load three need; the autoscaler adds replicas (each serving
// only after its start-up time), and removes them once the load is gone and they idle; the
// replica-hours count every replica's life, start-up included.
func TestAutoscaler(t *testing.T) {
	if raceEnabled {
		t.Skip("54,600 requests")
	}
	srv := llama8B(t)
	// 10 minutes at a high rate, then 6 minutes at a low one.
	high := openSpec(t, 90, 54000, 0, 1000, 200)
	var reqs []workload.Request
	st, _ := high.Stream(1)
	for q, ok := st.Next(); ok; q, ok = st.Next() {
		reqs = append(reqs, q)
	}
	last := reqs[len(reqs)-1].At
	for i := range 600 {
		q := reqs[i]
		q.At = last + q.At*60
		reqs = append(reqs, q)
	}
	a := &Autoscale{Min: 1, Max: 6, StartupS: 60, IntervalS: 10, QueuePerReplica: 8, IdleS: 60}
	res, err := Run(Config{Groups: []Group{{Server: srv, Count: 1, PricePerHour: 3}}, Policy: LeastOutstanding, Autoscale: a, Spec: high}, workload.NewListStream(reqs))
	if err != nil {
		t.Fatal(err)
	}
	if res.PeakReplicas < 3 || len(res.Replicas) < 3 {
		t.Fatalf("peak %d replicas, %d started: want the autoscaler to add at least two", res.PeakReplicas, len(res.Replicas))
	}
	sum := 0.0
	for _, r := range res.Replicas[1:] {
		if r.UpS-r.StartS != 60 {
			t.Errorf("replica %s asked for at %.0f s serves from %.0f s: want the 60 s start-up", r.Name, r.StartS, r.UpS)
		}
		sum += r.StopS - r.StartS
	}
	sum += res.Replicas[0].StopS - res.Replicas[0].StartS
	if d := res.ReplicaHours - sum/3600; d > 1e-9 || d < -1e-9 {
		t.Errorf("replica-hours %.4f, lives sum to %.4f h", res.ReplicaHours, sum/3600)
	}
	stopped := 0
	for _, r := range res.Replicas {
		if r.StopS < res.EndS {
			stopped++
		}
	}
	if stopped == 0 || res.ReplicaHours >= float64(len(res.Replicas))*res.EndS/3600 {
		t.Errorf("%d replicas stopped before the end (%.0f s), %.2f replica-hours: want idle replicas removed", stopped, res.EndS, res.ReplicaHours)
	}
	t.Logf("peak %d replicas, %d started, %d stopped early, %.2f replica-hours over %.0f s, $%.2f/h", res.PeakReplicas, len(res.Replicas), stopped, res.ReplicaHours, res.EndS, res.CostPerHour)
}
