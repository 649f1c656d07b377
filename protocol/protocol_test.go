package protocol

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/vtime"
)

const seedMML = 1 << 20 // the seed's --max-model-len 1048576

func ms(n int64) vtime.Time { return vtime.Time(n * int64(vtime.Millisecond)) }

func TestValidate(t *testing.T) {
	seed := Seed()
	if err := seed.Validate(); err != nil {
		t.Fatalf("Seed().Validate() = %v, want nil", err)
	}
	for _, c := range []struct {
		edit func(*Protocol)
		want string
	}{
		{func(p *Protocol) { p.Contexts, p.PrefillOnly = nil, nil }, "protocol.contexts: empty"},
		{func(p *Protocol) { p.Contexts[1] = "8Q" }, "protocol.contexts[1]"},
		{func(p *Protocol) { p.PrefillOnly[0] = "x" }, "protocol.prefill_only[0]"},
		{func(p *Protocol) { p.Concurrency[2] = 0 }, "protocol.concurrency[2] = 0"},
		{func(p *Protocol) { p.DurationS = 0 }, "protocol.duration_s = 0"},
		{func(p *Protocol) { p.MaxOutput = -1 }, "protocol.max_output = -1"},
		{func(p *Protocol) { p.PollS = 0 }, "protocol.poll_s = 0"},
		{func(p *Protocol) { p.StableS = -1 }, "protocol.stable_s = -1"},
		{func(p *Protocol) { p.MarginTokens = -1 }, "protocol.margin_tokens = -1"},
		{func(p *Protocol) { p.TrimSlack = 1.5 }, "protocol.trim_slack = 1.5"},
	} {
		p := Seed()
		c.edit(&p)
		if err := p.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Validate() = %v, want an error starting %q", err, c.want)
		}
	}
	for _, edit := range []func(*Protocol){
		func(p *Protocol) { p.StableS = 0 },
		func(p *Protocol) { p.MarginTokens = 0 },
		func(p *Protocol) { p.TrimSlack = 0 },
		func(p *Protocol) { p.Contexts = nil }, // prefill-only rows alone
	} {
		p := Seed()
		edit(&p)
		if err := p.Validate(); err != nil {
			t.Errorf("Validate() = %v, want nil", err)
		}
	}
}

func TestFit(t *testing.T) {
	seed := Seed()
	noSlack, noMargin := Seed(), Seed()
	noSlack.TrimSlack = 0
	noMargin.MarginTokens = 0
	// 131,072 - 4,096 - 64 = 126,912 tokens of room; 10 % above it is 139,603.2.
	const room128K = 126912
	for _, c := range []struct {
		name                    string
		p                       *Protocol
		nominal, mml, out, want int
		ok                      bool
	}{
		{"fits", &seed, 8192, seedMML, 4096, 8192, true},
		{"seed 1024K decode row: trimmed to 1019K", &seed, 1 << 20, seedMML, 4096, 1044416, true},
		{"seed 1024K prefill-only row", &seed, 1 << 20, seedMML, 1, 1048511, true},
		{"far above the room", &seed, 200000, 131072, 4096, 0, false},
		{"exactly the room", &seed, room128K, 131072, 4096, room128K, true},
		{"one above the room: trimmed", &seed, room128K + 1, 131072, 4096, room128K, true},
		{"at the trim slack: trimmed", &seed, 139603, 131072, 4096, room128K, true},
		{"past the trim slack", &seed, 139604, 131072, 4096, 0, false},
		{"the nominal context at its own max_model_len", &seed, 131072, 131072, 4096, room128K, true},
		{"no trim slack: 1024K does not fit", &noSlack, 1 << 20, seedMML, 4096, 0, false},
		{"no trim slack, within the room", &noSlack, 8192, seedMML, 4096, 8192, true},
		{"no margin", &noMargin, 1 << 20, seedMML, 4096, 1044480, true},
		{"no room", &seed, 1, 4096, 4096, 0, false},
	} {
		got, ok := c.p.Fit(c.nominal, c.mml, c.out)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: Fit(%d, %d, %d) = %d %v, want %d %v", c.name, c.nominal, c.mml, c.out, got, ok, c.want, c.ok)
		}
	}
	if got, want := seed.NeedModelLen(131072, 4096), 135232; got != want {
		t.Errorf("NeedModelLen(131072, 4096) = %d, want %d", got, want)
	}
	if got, ok := seed.Fit(131072, seed.NeedModelLen(131072, 4096), 4096); got != 131072 || !ok {
		t.Errorf("Fit at NeedModelLen = %d %v, want the nominal context untrimmed", got, ok)
	}
}

func TestFitContext(t *testing.T) {
	p := Seed()
	for _, c := range []struct {
		context string
		want    int
		err     string
	}{
		{"8K", 8192, ""},
		{"1024K", 1044416, ""},
		{"1019K", 1043456, ""},
		{"2048K", 0, "2097152 tokens do not fit max_model_len 1048576 with 4096 output tokens and a 64-token margin (room 1044416; only contexts up to 10% above the room are trimmed)"},
		{"8Q", 0, "8Q"},
	} {
		got, err := p.FitContext(c.context, seedMML)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("FitContext(%q) = %d, %v; want %d", c.context, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("FitContext(%q) = %d, %v; want an error containing %q", c.context, got, err, c.err)
		}
	}
	_, err := p.FitContext("2048K", seedMML)
	var fe *FitError
	if !errors.As(err, &fe) || fe.Nominal != 2097152 {
		t.Errorf("FitContext(2048K) error %v: want a *FitError for 2,097,152 tokens", err)
	}
}

func TestOverCapacity(t *testing.T) {
	p := Seed()
	// The seed's statuses: 16K x 128 ran with 128 x (16,384 + 4,096) = 2,621,440 tokens; 1019K x 4
	// did not with 4 x (1,044,416 + 4,096) = 4,194,048.
	for _, c := range []struct {
		c, tokens, kv int
		want          bool
	}{
		{128, 16384, 2621440, false},
		{128, 16384, 2621439, true},
		{4, 1044416, 4194048, false},
		{4, 1044416, 4194047, true},
		{3, 1044416, 4194047, false},
		{128, 8192, 2621440, false},
		{128, 32768, 4194047, true},
	} {
		if got := p.OverCapacity(c.c, c.tokens, c.kv); got != c.want {
			t.Errorf("OverCapacity(%d, %d, %d) = %v, want %v", c.c, c.tokens, c.kv, got, c.want)
		}
	}
	for _, c := range []struct{ tokens, kv, want int }{
		{16384, 2621440, 128},
		{16384, 2621439, 127},
		{1044416, 4194047, 3},
		{1044416, 4194048, 4},
	} {
		if got := p.MaxConcurrencyFor(c.tokens, c.kv); got != c.want {
			t.Errorf("MaxConcurrencyFor(%d, %d) = %d, want %d", c.tokens, c.kv, got, c.want)
		}
	}
}

func TestPlanSeed(t *testing.T) {
	p := Seed()
	const kv = 3_000_000 // within the seed's bound [2,621,440, 4,194,048)
	jobs, err := p.Plan(seedMML, kv)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 9+64 {
		t.Fatalf("%d jobs, want 9 prefill rows + 64 decode cells", len(jobs))
	}
	for i, j := range jobs {
		if j.Index != i {
			t.Errorf("jobs[%d].Index = %d", i, j.Index)
		}
	}
	labels := []string{"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1019K", "1024K"}
	for i, l := range labels {
		j := jobs[i]
		if j.Phase != matrix.Prefill || j.Label != l || j.Concurrency != 1 || j.PromptID != PromptID(i) {
			t.Errorf("jobs[%d] = %+v, want the prefill row %s with prompt %#x", i, j, l, PromptID(i))
		}
	}
	if jobs[7].Tokens != 1044416 || jobs[8].Tokens != 1048511 {
		t.Errorf("1019K and 1024K prefill rows: %d and %d tokens, want 1,044,416 and 1,048,511", jobs[7].Tokens, jobs[8].Tokens)
	}
	// Decode cells context by context, concurrency by concurrency, sharing the row's prompt.
	for k, j := range jobs[9:] {
		row, c := k/8, p.Concurrency[k%8]
		if j.Phase != matrix.Decode || j.Label != labels[row] || j.Concurrency != c || j.PromptID != PromptID(row) || j.Tokens != jobs[row].Tokens {
			t.Errorf("jobs[%d] = %+v, want decode %s x %d", 9+k, j, labels[row], c)
		}
	}
	over := map[matrix.Key]bool{}
	for _, j := range jobs {
		over[j.Key()] = j.Over
	}
	for _, c := range []struct {
		ctx  string
		conc int
		want bool
	}{{"8K", 128, false}, {"16K", 128, false}, {"32K", 128, true}, {"1019K", 2, false}, {"1019K", 4, true}} {
		if got := over[matrix.Key{Phase: matrix.Decode, Context: c.ctx, Concurrency: c.conc}]; got != c.want {
			t.Errorf("%s x %d: Over = %v, want %v", c.ctx, c.conc, got, c.want)
		}
	}
	keys := p.Keys(seedMML)
	if len(keys) != len(jobs) {
		t.Fatalf("Keys: %d, want %d", len(keys), len(jobs))
	}
	for i, k := range keys {
		if k != jobs[i].Key() {
			t.Errorf("Keys()[%d] = %v, want %v", i, k, jobs[i].Key())
		}
	}
}

func TestPlanErrors(t *testing.T) {
	p := Seed()
	p.Contexts = append(p.Contexts, "2048K")
	if _, err := p.Plan(seedMML, 3_000_000); err == nil || !strings.HasPrefix(err.Error(), "protocol.contexts[8] = 2048K: 2097152 tokens do not fit max_model_len 1048576") {
		t.Errorf("Plan with 2048K: %v", err)
	}
	// Keys leaves out what does not fit.
	if got := len(p.Keys(seedMML)); got != 73 {
		t.Errorf("Keys with an unfit context: %d, want 73", got)
	}
	p = Seed()
	p.PrefillOnly = []string{"2048K"}
	if _, err := p.Plan(seedMML, 3_000_000); err == nil || !strings.HasPrefix(err.Error(), "protocol.prefill_only[0] = 2048K: 2097152 tokens do not fit max_model_len 1048576 with 1 output token") {
		t.Errorf("Plan with prefill-only 2048K: %v", err)
	}
	p.Concurrency = []int{0}
	if _, err := p.Plan(seedMML, 3_000_000); err == nil || !strings.HasPrefix(err.Error(), "protocol.concurrency[0]") {
		t.Errorf("Plan of an invalid protocol: %v, want the validation error", err)
	}
}

func TestCheckMeasured(t *testing.T) {
	p := Seed()
	m := &matrix.Matrix{
		Prefill: []matrix.Cell{matrix.NewCell(matrix.Prefill, "1024K", 1048511, 1)},
		Decode:  []matrix.Cell{matrix.NewCell(matrix.Decode, "1019K", 1044416, 2)},
	}
	if err := p.CheckMeasured(m, seedMML); err != nil {
		t.Errorf("CheckMeasured = %v, want nil", err)
	}
	m.Decode = append(m.Decode, matrix.NewCell(matrix.Decode, "1019K", 1044416, 3))
	if err := p.CheckMeasured(m, seedMML); err == nil || !strings.Contains(err.Error(), "decode 1019K x 3") {
		t.Errorf("CheckMeasured with 1019K x 3 = %v, want an error naming it", err)
	}
	if err := p.CheckMeasured(&matrix.Matrix{}, seedMML); err == nil {
		t.Error("CheckMeasured of an empty matrix: nil, want an error")
	}
}

func TestReady(t *testing.T) {
	for _, c := range []struct {
		s    Poll
		c    int
		want bool
	}{
		{Poll{Running: 4, Waiting: 0, Streaming: 4}, 4, true},
		{Poll{Running: 5, Waiting: 0, Streaming: 4}, 4, true}, // a finished request's successor still counted as running
		{Poll{Running: 4, Waiting: 1, Streaming: 4}, 4, false},
		{Poll{Running: 3, Waiting: 0, Streaming: 4}, 4, false},
		{Poll{Running: 4, Waiting: 0, Streaming: 3}, 4, false},
		{Poll{Running: 32, Waiting: 32, Streaming: 32}, 64, false},
	} {
		if got := Ready(c.s, c.c); got != c.want {
			t.Errorf("Ready(%+v, %d) = %v, want %v", c.s, c.c, got, c.want)
		}
	}
	if _, ok := ReadyTimeout(32, 32, vtime.Second); ok {
		t.Error("ReadyTimeout(32, max_num_seqs 32): a timeout, want none (the gate can pass)")
	}
	if d, ok := ReadyTimeout(64, 32, 3*vtime.Second); !ok || d != 3*vtime.Second {
		t.Errorf("ReadyTimeout(64, max_num_seqs 32, 3 s) = %v %v, want 3 s", d, ok)
	}
}

// gateStep is one poll: the time the gate asks for, what it sees, and its verdict.
type gateStep struct {
	at    vtime.Time
	ready bool
	want  GateState
}

func runGate(t *testing.T, name string, g *Gate, c int, steps []gateStep) {
	t.Helper()
	for i, s := range steps {
		if got := g.Next(); got != s.at {
			t.Fatalf("%s: poll %d at %v, want %v", name, i, got, s.at)
		}
		p := Poll{Running: c - 1, Streaming: c}
		if s.ready {
			p.Running = c
		}
		if got := g.Observe(s.at, p); got != s.want {
			t.Fatalf("%s: poll %d at %v: %v, want %v", name, i, s.at, got, s.want)
		}
	}
}

func TestGate(t *testing.T) {
	p := Seed() // polls every 0.5 s, stable for 1 s
	const mns = 32
	timeout := 2900 * vtime.Millisecond
	runGate(t, "stable for 1 s", p.NewGate(0, 4, mns, timeout, 0), 4, []gateStep{
		{ms(500), false, GateWaiting}, {ms(1000), true, GateWaiting}, {ms(1500), true, GateWaiting}, {ms(2000), true, GateReady},
	})
	runGate(t, "a lapse restarts the stable time", p.NewGate(0, 4, mns, timeout, 0), 4, []gateStep{
		{ms(500), true, GateWaiting}, {ms(1000), false, GateWaiting}, {ms(1500), true, GateWaiting}, {ms(2000), true, GateWaiting}, {ms(2500), true, GateReady},
	})
	runGate(t, "C > max_num_seqs: the window starts at the timeout", p.NewGate(0, 64, mns, timeout, 0), 64, []gateStep{
		{ms(500), false, GateWaiting}, {ms(1000), false, GateWaiting}, {ms(1500), false, GateWaiting}, {ms(2000), false, GateWaiting},
		{ms(2500), false, GateWaiting}, {ms(2900), false, GateTimeout},
	})
	start := vtime.Time(10 * vtime.Second)
	runGate(t, "no timeout: given up past the limit", p.NewGate(start, 4, mns, timeout, 2*vtime.Second), 4, []gateStep{
		{start + ms(500), false, GateWaiting}, {start + ms(1000), false, GateWaiting}, {start + ms(1500), false, GateWaiting},
		{start + ms(2000), false, GateWaiting}, {start + ms(2500), false, GateGaveUp},
	})
	noStable := p
	noStable.StableS = 0
	runGate(t, "passing on the timeout's poll is ready", noStable.NewGate(0, 64, mns, 500*vtime.Millisecond, 0), 64, []gateStep{
		{ms(500), true, GateReady},
	})
	if got, want := p.NewGate(0, 4, mns, timeout, 0).Limit(), 1800*vtime.Second; got != want {
		t.Errorf("default wait limit %v, want ReadyWaitLimit, %v", got, want)
	}
}

func TestWindow(t *testing.T) {
	p := Seed()
	w := p.Window(ms(2500))
	if w.Start != ms(2500) || w.End != ms(32500) || w.Seconds() != 30 {
		t.Errorf("Window(2.5 s) = %+v (%v s), want [2.5 s, 32.5 s)", w, w.Seconds())
	}
	for _, c := range []struct {
		t    vtime.Time
		want bool
	}{{ms(2499), false}, {ms(2500), true}, {ms(32499), true}, {ms(32500), false}} {
		if got := w.Contains(c.t); got != c.want {
			t.Errorf("Contains(%v) = %v, want %v", c.t, got, c.want)
		}
	}
	if NoWindow().Contains(0) || NoWindow().Contains(vtime.Never-1) {
		t.Error("NoWindow contains a time")
	}
	if got := p.NextPoll(ms(1000), ms(1200)); got != ms(1200) {
		t.Errorf("NextPoll(1 s, end 1.2 s) = %v, want the end", got)
	}
	if got := p.NextPoll(ms(1000), ms(5000)); got != ms(1500) {
		t.Errorf("NextPoll(1 s, end 5 s) = %v, want 1.5 s", got)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{2, 2, 9, 9}, 5.5},
	} {
		in := append([]float64(nil), c.in...)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Errorf("Median reordered its input: %v", in)
			}
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v, want NaN", got)
	}
}

func TestPrefillCell(t *testing.T) {
	c := PrefillCell("16K", 16384, Request{Send: ms(1000), FirstToken: ms(3000), LastToken: ms(3000), Tokens: 1})
	if c.Status != matrix.Valid || c.TTFTms != 2000 || c.TotalTokS != 8192 || c.Completed != 1 || c.ContextTokens != 16384 {
		t.Errorf("prefill 16K in 2 s: %+v, want Valid, TTFT 2000 ms, 8192 tok/s, 1 completed", c)
	}
	c = PrefillCell("16K", 16384, Request{Send: 0, FirstToken: -1, LastToken: -1})
	if c.Status != matrix.Error || !math.IsNaN(c.TTFTms) {
		t.Errorf("prefill without a token: %+v, want Error with no numbers", c)
	}
}

func TestDecodeCell(t *testing.T) {
	// Two streams; the first finished once and was restarted, the restart has one token, and
	// a fourth request (a later restart) has none. Window [10 s, 12 s).
	reqs := []Request{
		{Send: 0, FirstToken: ms(100), LastToken: ms(1100), Tokens: 11},        // TTFT 100, TBT 100
		{Send: 0, FirstToken: ms(300), LastToken: ms(4300), Tokens: 21},        // TTFT 300, TBT 200
		{Send: ms(1100), FirstToken: ms(1300), LastToken: ms(1300), Tokens: 1}, // TTFT 200, no TBT
		{Send: ms(1200), FirstToken: -1, LastToken: -1},                        // nothing
	}
	o := Observation{Concurrency: 2, Gate: GateReady, Window: Window{Start: ms(10000), End: ms(12000)},
		WindowTokens: 300, Completed: 1, Peak: 2, RunningSeconds: 3.5}
	c := DecodeCell("8K", 8192, &o, reqs)
	// The inputs are whole milliseconds, exact in float seconds up to rounding of 1e-16 relative.
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }
	for _, x := range []struct {
		name      string
		got, want float64
	}{
		{"TTFT ms (median of 100, 300, 200)", c.TTFTms, 200},
		{"time between tokens ms (median of 100, 200)", c.TBTms, 150},
		{"per-request tok/s (1000 / 150)", c.PerRequestTokS, 1000.0 / 150},
		{"total tok/s (300 tokens / 2 s)", c.TotalTokS, 150},
		{"average active (3.5 / 2 s)", c.AvgActive, 1.75},
		{"measured s", c.MeasuredS, 2},
	} {
		if !near(x.got, x.want) {
			t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
		}
	}
	if c.Status != matrix.Valid || c.Completed != 1 || c.OutputTokens != 300 || c.Context != "8K" || c.ContextTokens != 8192 || c.Concurrency != 2 {
		t.Errorf("cell %+v: want Valid 8K x 2, 1 completed, 300 output tokens", c)
	}
	o.Peak = 1
	if c := DecodeCell("8K", 8192, &o, reqs); c.Status != matrix.RequestsQueued {
		t.Errorf("peak 1 of 2: %s, want Requests queued", c.Status)
	}
	o.Gate = GateGaveUp
	if c := DecodeCell("8K", 8192, &o, reqs); c.Status != matrix.Error || !math.IsNaN(c.TotalTokS) || c.Completed != -1 {
		t.Errorf("gave up: %+v, want Error with no numbers", c)
	}
	o.Gate, o.Peak = GateReady, 2
	if c := DecodeCell("8K", 8192, &o, nil); !math.IsNaN(c.TTFTms) || !math.IsNaN(c.TBTms) || c.TotalTokS != 150 {
		t.Errorf("no requests: TTFT %v, TBT %v, total %v; want absent latencies and the window's throughput", c.TTFTms, c.TBTms, c.TotalTokS)
	}
}

func TestDecodeStatus(t *testing.T) {
	for _, c := range []struct {
		peak, c int
		want    matrix.Status
	}{{1, 1, matrix.Valid}, {32, 32, matrix.Valid}, {32, 64, matrix.RequestsQueued}, {33, 32, matrix.Valid}} {
		if got := DecodeStatus(c.peak, c.c); got != c.want {
			t.Errorf("DecodeStatus(peak %d, C %d) = %s, want %s", c.peak, c.c, got, c.want)
		}
	}
}
