package workload

import (
	"github.com/servesim/servesim/internal/stats"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

// TestSampleSetExactThenBounded checks the latency distributions: exact (the same Dist as sorting
// every value) up to exactLimit values, and past it every quantile within QuantileRelErr of the
// exact one, on a log-normal spread over six decades with ties and zeros, merged from replicas.
func TestSampleSetExactThenBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func() float64 {
		switch rng.IntN(50) {
		case 0:
			return 0
		case 1:
			return 250 // a tie
		}
		return math.Exp(rng.NormFloat64()*2.5 + 3)
	}
	for _, n := range []int{1, 2, 1000, exactLimit, exactLimit + 1, 3*exactLimit + 17} {
		var s sampleSet
		all := make([]float64, 0, n)
		for i := 0; i < n; i++ {
			v := draw()
			s.add(v)
			all = append(all, v)
		}
		s.add(math.NaN()) // skipped
		sort.Float64s(all)
		want := dist(all)
		sum := s.summary()
		got := sum.dist()
		if n <= exactLimit {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("n=%d: %+v, want exactly %+v", n, got, want)
			}
			continue
		}
		if got.N != want.N || got.Max != want.Max || got.RelErr != QuantileRelErr || math.Abs(got.Mean-want.Mean) > 1e-9*want.Mean {
			t.Fatalf("n=%d: %+v, want n, mean, max of %+v and rel_err %v", n, got, want, QuantileRelErr)
		}
		for _, q := range []float64{0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 1} {
			g, w := sum.quantile(q), stats.Quantile(all, q)
			if math.Abs(g-w) > QuantileRelErr*w {
				t.Errorf("n=%d q=%g: %v, exact %v: relative error %.2g > %.2g", n, q, g, w, math.Abs(g-w)/w, QuantileRelErr)
			}
		}
	}
	// Replicas: 3 copies of a large set equal the set of 3 copies of every value.
	var one, three, direct sampleSet
	for i := 0; i < exactLimit/2; i++ {
		v := draw()
		one.add(v)
		for k := 0; k < 3; k++ {
			direct.add(v)
		}
	}
	three.merge(&one, 3)
	a, b := three.summary(), direct.summary()
	for _, q := range []float64{0.5, 0.9, 0.99} {
		if a.quantile(q) != b.quantile(q) {
			t.Errorf("merged replicas q=%g: %v, adding each value 3 times: %v", q, a.quantile(q), b.quantile(q))
		}
	}
}

// TestCollectorHoldsInOrder checks that a collector's held latencies and gaps give the same
// distributions as adding each as it comes: exact sets, sets turned into histograms part-way
// (a fleet replica's share of the exact budget), NaNs left out, and flushing at any point.
func TestCollectorHoldsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	val := func() float64 {
		switch rng.IntN(20) {
		case 0:
			return math.NaN()
		case 1:
			return 0
		}
		return math.Exp(rng.NormFloat64() + 4)
	}
	for _, limit := range []int{0, 1, 50, 1000} {
		var held collector
		direct := collector{itl: newITLHist()}
		held.itl = newITLHist()
		for _, c := range []*collector{&held, &direct} {
			for _, s := range c.sets() {
				s.limit = limit
			}
		}
		for i := range 3*pendLen + 5 {
			s := reqSample{ttft: val(), tpot: val(), e2e: val(), queue: val()}
			held.hold(&s)
			for m, v := range [4]float64{s.ttft, s.tpot, s.e2e, s.queue} {
				direct.sets()[m].add(v)
			}
			gap, n := int64(rng.IntN(1e8)), uint64(rng.IntN(3))
			held.holdGap(gap, n)
			direct.itl.Add(gap, n)
			if i == pendLen+3 {
				held.flush() // a summary part-way
			}
		}
		held.flush()
		held.flush() // twice: nothing more
		for m, s := range held.sets() {
			got, want := s.summary().dist(), direct.sets()[m].summary().dist()
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("limit %d, metric %d: held %+v, added one by one %+v", limit, m, got, want)
			}
		}
		if got, want := intDist(&held.itl), intDist(&direct.itl); !reflect.DeepEqual(got, want) {
			t.Fatalf("limit %d, ITL: held %+v, added one by one %+v", limit, got, want)
		}
	}
}
