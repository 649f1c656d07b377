package fleet

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/servesim/servesim/sim"
	"github.com/servesim/servesim/vtime"
	"github.com/servesim/servesim/workload"
)

// Traffic is what a fleet is fed: a trace file streamed row by row, or a generated workload;
// after Scan, its request count and last arrival.
type Traffic struct {
	Spec  *workload.Spec
	Trace string // the trace file ("" for a generated workload)
	Opt   workload.StreamOptions
	// Last and Requests are what Scan found: the last arrival (it sets the overload watch and
	// the series' buckets) and the number of requests.
	Last     vtime.Time
	Requests int
}

// TraceTraffic is the trace at path, replayed with opt; it is opened once to check it.
func TraceTraffic(path string, opt workload.StreamOptions) (*Traffic, error) {
	name := path
	if i := strings.LastIndexAny(name, "/\\"); i >= 0 {
		name = name[i+1:]
	}
	t := &Traffic{Trace: path, Opt: opt, Spec: &workload.Spec{Name: name, Kind: workload.KindTrace}}
	st, err := t.Open()
	if err != nil {
		return nil, err
	}
	CloseStream(st)
	return t, nil
}

// Rate is open-loop traffic at a rate: Requests requests or arrivals for DurationS seconds (at
// least one of them), from a Poisson or gamma (CV) process, with lengths around the means.
type Rate struct {
	Rate                      float64
	Requests                  int
	DurationS                 float64
	Process                   string
	CV                        float64
	InputTokens, OutputTokens int
	RangeRatio                float64
}

// RateTraffic is the open-loop workload r describes, checked as a workload file is.
func RateTraffic(r Rate) (*Traffic, error) {
	text := fmt.Sprintf("name = \"open %g req/s\"\nkind = \"open\"\n[open]\nprocess = %q\nrate = %g\n", r.Rate, r.Process, r.Rate)
	if r.Process == "gamma" {
		text += fmt.Sprintf("cv = %g\n", r.CV)
	}
	if r.Requests > 0 {
		// Checked below as a stream's count: a fleet keeps nothing per finished request.
		text += fmt.Sprintf("requests = %d\n", min(r.Requests, workload.MaxRequests))
	}
	if r.DurationS > 0 {
		text += fmt.Sprintf("duration_s = %g\n", r.DurationS)
	}
	text += fmt.Sprintf("[lengths]\ninput_tokens = %d\noutput_tokens = %d\nrange_ratio = %g\n", r.InputTokens, r.OutputTokens, r.RangeRatio)
	s, err := workload.Parse([]byte(text), "--rate")
	if err != nil {
		return nil, err
	}
	if r.Requests > 0 {
		s.Open.Requests = r.Requests
		if err := s.ValidateStream(); err != nil {
			return nil, fmt.Errorf("--requests: %w", err)
		}
	}
	return &Traffic{Spec: s}, nil
}

// Open starts the stream from the beginning.
func (t *Traffic) Open() (workload.Stream, error) {
	if t.Trace != "" {
		return workload.OpenTrace(t.Trace, t.Opt)
	}
	return t.Spec.Stream(t.Spec.Seed)
}

// CloseStream closes s if it holds a file.
func CloseStream(s workload.Stream) {
	if c, ok := s.(io.Closer); ok {
		c.Close()
	}
}

// Scan reads the stream once for its last arrival and request count.
func (t *Traffic) Scan() error {
	st, err := t.Open()
	if err != nil {
		return err
	}
	defer CloseStream(st)
	for q, ok := st.Next(); ok; q, ok = st.Next() {
		t.Last = q.At
		t.Requests++
	}
	if err := st.Err(); err != nil {
		return err
	}
	if t.Requests == 0 {
		return fmt.Errorf("the traffic has no request (check --from and --to)")
	}
	return nil
}

// Settings are a fleet run's choices besides its deployment, replica count and policy.
type Settings struct {
	// PricePerHour is one replica of the first group's price (negative: its GPUs' list price).
	PricePerHour         float64
	Seed                 uint64
	ReplicaCap, QueueCap int
	SeriesS              float64
	// RefreshS is the router's refresh interval (Config.RefreshS).
	RefreshS float64
	// Autoscale, when set, lets the fleet add and remove replicas.
	Autoscale *Autoscale
}

// ReplicaPrice is one replica of srv's price per hour: given when non-negative, else its GPUs'
// list price.
func ReplicaPrice(srv *sim.Server, given float64) float64 {
	if given >= 0 {
		return given
	}
	m := srv.Deployment.Hardware
	return m.GPU.PricePerHour * float64(m.Count) / float64(max(srv.Replicas, 1))
}

// Config is the run of n replicas of srv (named name) under policy p on t.
func (s *Settings) Config(name string, srv *sim.Server, n int, p Policy, t *Traffic) Config {
	return s.FleetConfig([]Group{{Name: name, Server: srv, Count: n}}, p, t)
}

// FleetConfig is the run of groups under policy p on t, each group priced: the first at
// PricePerHour when it is non-negative, every other at its GPUs' list price.
func (s *Settings) FleetConfig(groups []Group, p Policy, t *Traffic) Config {
	groups = slices.Clone(groups)
	for i := range groups {
		given := -1.0
		if i == 0 {
			given = s.PricePerHour
		}
		groups[i].PricePerHour = ReplicaPrice(groups[i].Server, given)
	}
	cfg := Config{Groups: groups,
		Policy: p, Seed: s.Seed, ReplicaCap: s.ReplicaCap, QueueCap: s.QueueCap, Spec: t.Spec, LastArrival: t.Last, SeriesS: s.SeriesS,
		RefreshS: s.RefreshS}
	if s.Autoscale != nil {
		a := *s.Autoscale
		cfg.Autoscale = &a
	}
	return cfg
}
