package fleet

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/servesim/servesim/internal/usage"
)

func TestParseGroupSpec(t *testing.T) {
	for _, c := range []struct {
		in   string
		want GroupSpec
		ok   bool
	}{
		{"h200.toml:2", GroupSpec{"h200.toml", 2}, true},
		{"dir/a:b.toml:12", GroupSpec{"dir/a:b.toml", 12}, true},
		{"h200.toml:x", GroupSpec{}, false},
		{"h200.toml", GroupSpec{}, false},
		{"h200.toml:0", GroupSpec{}, false},
		{"h200.toml:-1", GroupSpec{}, false},
		{":3", GroupSpec{}, false},
		{"", GroupSpec{}, false},
	} {
		got, err := ParseGroupSpec(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseGroupSpec(%q) = %+v, %v; want %+v, ok %v", c.in, got, err, c.want, c.ok)
		}
		if err != nil && (!usage.Is(err) || !strings.Contains(err.Error(), `--group "`+c.in+`": want FILE:N`)) {
			t.Errorf("ParseGroupSpec(%q): %v: want a usage error naming the flag, the value and FILE:N", c.in, err)
		}
	}
}

// TestFleetGroups: the --replicas deployment first, then the --group files in order; with
// --replicas 0 the groups alone; a taken name is made unique; another model is refused, naming
// both; a file that does not load is named with its --group value.
func TestFleetGroups(t *testing.T) {
	h100, h200 := llama8B(t), vllmServer(t, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768", "H200-SXM")
	other := vllmServer(t, "vllm serve meta-llama/Llama-2-7b-hf", "H100-SXM")
	load := func(file string) (Group, error) {
		switch file {
		case "h200.toml":
			return Group{Name: "h200", Server: h200}, nil
		case "h100.toml":
			return Group{Name: "h100", Server: h100}, nil
		case "llama2.toml":
			return Group{Name: "llama2", Server: other}, nil
		}
		return Group{}, errors.New("open " + file + ": no such file or directory")
	}
	main := Group{Name: "h100", Server: h100}
	names := func(gs []Group) (out []string) {
		for _, g := range gs {
			out = append(out, g.Name+"/"+g.Source+"/"+string(rune('0'+g.Count)))
		}
		return out
	}
	for _, c := range []struct {
		replicas int
		groups   []string
		want     string
	}{
		{3, nil, "h100//3"},
		{4, []string{"h200.toml:2"}, "h100//4 h200/h200.toml/2"},
		{0, []string{"h200.toml:2", "h100.toml:1"}, "h200/h200.toml/2 h100/h100.toml/1"},
		{1, []string{"h100.toml:1", "h100.toml:2"}, "h100//1 h100 (group 1)/h100.toml/1 h100 (group 2)/h100.toml/2"},
	} {
		o := Options{Replicas: c.replicas, Groups: c.groups}
		gs, err := o.FleetGroups(main, load)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(gs), " "); got != c.want {
			t.Errorf("--replicas %d --group %v: got %s, want %s", c.replicas, c.groups, got, c.want)
		}
	}
	o := Options{Replicas: 2, Groups: []string{"h200.toml:1", "llama2.toml:1"}}
	_, err := o.FleetGroups(main, load)
	if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), `--group "llama2.toml:1"`) ||
		!strings.Contains(err.Error(), "meta-llama/Llama-2-7b-hf") || !strings.Contains(err.Error(), "meta-llama/Llama-3.1-8B-Instruct") {
		t.Errorf("another model: %v: want a usage error naming the value and both models", err)
	}
	o = Options{Replicas: 2, Groups: []string{"missing.toml:1"}}
	if _, err := o.FleetGroups(main, load); err == nil || !strings.Contains(err.Error(), `--group "missing.toml:1": open missing.toml`) {
		t.Errorf("missing file: %v", err)
	}
}

// twoGPUs is two H100 replicas and two H200 replicas of Llama-3.1-8B.
func twoGPUs(t testing.TB) []Group {
	return []Group{{Name: "h100", Server: llama8B(t), Count: 2, PricePerHour: 2},
		{Name: "h200", Server: vllmServer(t, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768", "H200-SXM"), Count: 2, PricePerHour: 3}}
}

// TestTwoGPUGroups: behind least-outstanding, the H200 replicas (more memory bandwidth: shorter
// decode steps) finish their requests sooner, so the router finds them less loaded and sends
// them more than the H100 replicas, which round-robin splits evenly; the groups' shares add up
// to the fleet; cost is each group's price; the bytes do not depend on the workers.
func TestTwoGPUGroups(t *testing.T) {
	groups := twoGPUs(t)
	spec := openSpec(t, 75, 400, 0, 1000, 250)
	run := func(p Policy, workers int) *Result {
		st, err := spec.Stream(3)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(Config{Groups: groups, Policy: p, Seed: 3, Spec: spec, Workers: workers}, st)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(LeastOutstanding, 0)
	if len(res.Groups) != 2 {
		t.Fatalf("%d group results, want 2", len(res.Groups))
	}
	h100, h200 := res.Groups[0], res.Groups[1]
	t.Logf("least-outstanding: H100 routed %d, %.0f output tok/s, TPOT p50 %.1f ms; H200 routed %d, %.0f output tok/s, TPOT p50 %.1f ms",
		h100.Routed, h100.Metrics.OutputTokS, h100.Metrics.TPOT.P50, h200.Routed, h200.Metrics.OutputTokS, h200.Metrics.TPOT.P50)
	if h100.Routed == 0 || h200.Routed <= h100.Routed || h200.Metrics.OutputTokens <= h100.Metrics.OutputTokens {
		t.Errorf("least-outstanding: H100 group routed %d (%d output tokens), H200 group %d (%d): want the faster H200s to take more",
			h100.Routed, h100.Metrics.OutputTokens, h200.Routed, h200.Metrics.OutputTokens)
	}
	if h200.Metrics.TPOT.P50 >= h100.Metrics.TPOT.P50 {
		t.Errorf("TPOT p50: H200 %.2f ms, H100 %.2f ms: want the H200 faster", h200.Metrics.TPOT.P50, h100.Metrics.TPOT.P50)
	}
	if h100.Routed+h200.Routed != res.Routed || h100.Metrics.Completed+h200.Metrics.Completed != res.Fleet.Completed {
		t.Errorf("groups' shares (%d + %d routed, %d + %d completed) do not add up to the fleet's (%d, %d)",
			h100.Routed, h200.Routed, h100.Metrics.Completed, h200.Metrics.Completed, res.Routed, res.Fleet.Completed)
	}
	for i, r := range res.Replicas {
		if want := []string{"h100", "h200"}[i/2]; r.Group != want {
			t.Errorf("replica %s in group %q, want %q", r.Name, r.Group, want)
		}
	}
	if want := (2*h100.ReplicaHours + 3*h200.ReplicaHours) / (res.EndS / 3600); !near(res.CostPerHour, want, 1e-9) {
		t.Errorf("cost per hour %.6f, want %.6f from the groups' prices", res.CostPerHour, want)
	}
	rr := run(RoundRobin, 1)
	if rr.Groups[0].Routed != 200 || rr.Groups[1].Routed != 200 {
		t.Errorf("round-robin: routed %d and %d, want 200 each", rr.Groups[0].Routed, rr.Groups[1].Routed)
	}
	if a, b := mustJSON(t, rr), mustJSON(t, run(RoundRobin, 3)); !bytes.Equal(a, b) {
		t.Errorf("two groups, round-robin: 1 and 3 workers differ")
	}
	var text bytes.Buffer
	WriteText(&text, res, &Traffic{Spec: spec, Requests: 400}, "")
	for _, want := range []string{"4 replicas in 2 groups", "  g1  2 x h200\n", "per group", "group  routed"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

func near(a, b, rel float64) bool { return a == b || (a-b)*(a-b) <= rel*rel*b*b }

// TestAutoscaleFirstGroup: the autoscaler adds replicas of the first group only, up to its Max
// counted in that group (the other group's replica does not count), and never stops the other
// group's replica, however idle.
func TestAutoscaleFirstGroup(t *testing.T) {
	groups := twoGPUs(t)
	groups[0].Count, groups[1].Count = 1, 1
	spec := openSpec(t, 80, 600, 0, 1000, 250)
	st, err := spec.Stream(3)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Groups: groups, Policy: LeastOutstanding, Seed: 3, Spec: spec,
		Autoscale: &Autoscale{Max: 2, StartupS: 1, IntervalS: 1, QueuePerReplica: 1, IdleS: 1}}, st)
	if err != nil {
		t.Fatal(err)
	}
	var added []*ReplicaResult
	for i := range res.Replicas {
		r := &res.Replicas[i]
		if r.StartS > 0 {
			added = append(added, r)
		}
		if r.Group == "h200" && (r.StartS != 0 || r.StopS != res.EndS) {
			t.Errorf("the second group's replica %s ran %.0f-%.0f s of %.0f s: want it fixed", r.Name, r.StartS, r.StopS, res.EndS)
		}
	}
	if len(added) != 1 || added[0].Group != "h100" {
		t.Fatalf("%d replicas added (%+v): want one, of the first group (max 2 counts the first group only)", len(added), added)
	}
	if res.Groups[0].Replicas != 2 || res.Groups[1].Replicas != 1 {
		t.Errorf("replicas per group %d, %d: want 2, 1", res.Groups[0].Replicas, res.Groups[1].Replicas)
	}
}
