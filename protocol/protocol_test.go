package protocol

import (
	"errors"
	"fmt"
	"github.com/servesim/servesim/internal/stats"
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
		{func(p *Protocol) { p.StableS = math.NaN() }, "protocol.stable_s = NaN"},
		{func(p *Protocol) { p.MinReadyS = -1 }, "protocol.min_ready_s = -1"},
		{func(p *Protocol) { p.ReadyTimeoutS = -1 }, "protocol.ready_timeout_s = -1"},
		{func(p *Protocol) { p.PauseS = 4000 }, "protocol.pause_s = 4000"},
		{func(p *Protocol) { p.WarmupDecodeS = -1 }, "protocol.warmup_decode_s = -1"},
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

// TestScheduleSeed checks the tool's order on the seed: the hidden warm-ups, the prefill-only row,
// the decode warm-up at 1019K, the C = 1 column (whose scouts give the prefill rows), then the 8K
// row, then the other rows, over-capacity cells left out.
func TestScheduleSeed(t *testing.T) {
	p := Seed()
	const kv = 3_000_000
	jobs, st, err := p.Schedule(seedMML, kv)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range st {
		switch s.Kind {
		case StageWarmup, StageWarmupDecode:
			got = append(got, fmt.Sprintf("%s %d/%d", s.Kind, s.PromptTokens, s.MaxTokens))
		case StagePrefill:
			got = append(got, "prefill "+jobs[s.Job].Label)
		case StageCell:
			j := jobs[s.Job]
			x := fmt.Sprintf("%s x %d", j.Label, j.Concurrency)
			if s.Scout >= 0 {
				x += " (prefill " + jobs[s.Scout].Label + ")"
			}
			got = append(got, x)
		}
	}
	want := []string{
		"warm-up 32/64", "warm-up 8192/1", "prefill 1024K", "warm-up decode 1044416/4096",
		"8K x 1 (prefill 8K)", "16K x 1 (prefill 16K)", "32K x 1 (prefill 32K)", "64K x 1 (prefill 64K)",
		"128K x 1 (prefill 128K)", "256K x 1 (prefill 256K)", "512K x 1 (prefill 512K)", "1019K x 1 (prefill 1019K)",
		"8K x 2", "8K x 4", "8K x 8", "8K x 16", "8K x 32", "8K x 64", "8K x 128",
		"16K x 2", "16K x 4", "16K x 8", "16K x 16", "16K x 32", "16K x 64", "16K x 128",
		"32K x 2", "32K x 4", "32K x 8", "32K x 16", "32K x 32", "32K x 64",
		"64K x 2", "64K x 4", "64K x 8", "64K x 16", "64K x 32",
		"128K x 2", "128K x 4", "128K x 8", "128K x 16",
		"256K x 2", "256K x 4", "256K x 8",
		"512K x 2", "512K x 4",
		"1019K x 2",
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("schedule:\n got %s\nwant %s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
	seen := map[uint64]bool{}
	for _, s := range st {
		if s.Kind == StageWarmup || s.Kind == StageWarmupDecode {
			if seen[s.PromptID] || s.PromptID < WarmupPromptID(0) {
				t.Errorf("warm-up prompt %#x is not distinct", s.PromptID)
			}
			seen[s.PromptID] = true
		}
	}
	// Without warm-ups; a first column over capacity still measures its prefill row.
	p.Warmup = false
	p.Contexts, p.PrefillOnly, p.Concurrency = []string{"8K", "1024K"}, nil, []int{4, 1}
	jobs, st, err = p.Schedule(seedMML, kv)
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, s := range st {
		j := jobs[s.Job]
		got = append(got, fmt.Sprintf("%s %s x %d scout %d", s.Kind, j.Label, j.Concurrency, s.Scout))
	}
	want = []string{"cell 8K x 4 scout 0", "prefill 1019K x 1 scout -1", "cell 8K x 1 scout -1", "cell 1019K x 1 scout -1"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("schedule without warm-ups:\n got %s\nwant %s", strings.Join(got, "; "), strings.Join(want, "; "))
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
		s       Poll
		flowing bool
		c       int
		want    bool
	}{
		{Poll{Running: 4, Waiting: 0, Streaming: 4}, true, 4, true},
		{Poll{Running: 5, Waiting: 0, Streaming: 4}, true, 4, true}, // a finished request's successor still counted as running
		{Poll{Running: 4, Waiting: 0, Streaming: 4}, false, 4, false},
		{Poll{Running: 4, Waiting: 1, Streaming: 4}, true, 4, false},
		{Poll{Running: 3, Waiting: 0, Streaming: 4}, true, 4, false},
		{Poll{Running: 4, Waiting: 0, Streaming: 3}, true, 4, false},
		{Poll{Running: 32, Waiting: 32, Streaming: 32}, true, 64, false},
	} {
		if got := Ready(c.s, c.flowing, c.c); got != c.want {
			t.Errorf("Ready(%+v, flowing %v, %d) = %v, want %v", c.s, c.flowing, c.c, got, c.want)
		}
	}
}

// TestReadyTimeout: the tool's timeout depends on the context only (60 s up to 32K, 120 s at
// 64K, 180 s from 128K, the seed's 1019K included); ready_timeout_s replaces it.
func TestReadyTimeout(t *testing.T) {
	p := Seed()
	for _, c := range []struct {
		tokens int
		want   float64
	}{{8192, 60}, {32768, 60}, {65535, 60}, {65536, 120}, {131071, 120}, {131072, 180}, {1044416, 180}} {
		if got := p.ReadyTimeout(c.tokens).Seconds(); got != c.want {
			t.Errorf("ReadyTimeout(%d) = %v s, want %v s", c.tokens, got, c.want)
		}
	}
	p.ReadyTimeoutS = 2.5
	if got := p.ReadyTimeout(1044416).Seconds(); got != 2.5 {
		t.Errorf("ReadyTimeout with ready_timeout_s 2.5 = %v s, want 2.5 s", got)
	}
}

// gateStep is one poll: what the gate sees (ready: the other conditions hold; gen: the
// generation counter) and its verdict. Polls come every second from the streams' launch.
type gateStep struct {
	ready bool
	gen   int64
	want  GateState
}

func runGate(t *testing.T, name string, g *Gate, streams vtime.Time, c int, steps []gateStep) {
	t.Helper()
	for i, s := range steps {
		at := streams + vtime.Time(i+1)*vtime.Time(vtime.Second)
		if got := g.Next(); got != at {
			t.Fatalf("%s: poll %d at %v, want %v", name, i, got, at)
		}
		p := Poll{At: at, Running: c - 1, Streaming: c, Generated: s.gen}
		if s.ready {
			p.Running = c
		}
		if got := g.Observe(p); got != s.want {
			t.Fatalf("%s: poll %d at %v: %v, want %v", name, i, at, got, s.want)
		}
	}
}

func TestGate(t *testing.T) {
	p := Seed() // polls every 1 s, stable for 3 s, at least 2 s after the cell's start
	const ctx = 8192
	w, r := GateWaiting, GateReady
	// Ready on every poll from the first: the first poll has no previous counter (tokens not
	// known to flow), so the condition holds from the second poll, and 3 s later the window starts.
	runGate(t, "stable for 3 s", p.NewGate(0, ms(500), 4, ctx, 0), ms(500), 4, []gateStep{
		{true, 10, w}, {true, 20, w}, {true, 30, w}, {true, 40, w}, {true, 50, r},
	})
	runGate(t, "a lapse restarts the stable time", p.NewGate(0, 0, 4, ctx, 0), 0, 4, []gateStep{
		{true, 10, w}, {true, 20, w}, {false, 30, w}, {true, 40, w}, {true, 50, w}, {true, 60, w}, {true, 70, r},
	})
	runGate(t, "tokens must flow", p.NewGate(0, 0, 4, ctx, 0), 0, 4, []gateStep{
		{true, 10, w}, {true, 20, w}, {true, 30, w}, {true, 30, w}, {true, 40, w}, {true, 50, w}, {true, 60, w}, {true, 70, r},
	})
	// The cell's clock starts before the scout: with a long scout the 2 s minimum has passed.
	noStable := p
	noStable.StableS = 0
	runGate(t, "stable 0: the second poll", noStable.NewGate(0, ms(5000), 4, ctx, 0), ms(5000), 4, []gateStep{
		{true, 10, w}, {true, 20, r},
	})
	// ... and with a short one the window cannot start before 2 s after the cell's start.
	noStable.MinReadyS = 4
	runGate(t, "at least min_ready_s after the cell's start", noStable.NewGate(0, ms(100), 4, ctx, 0), ms(100), 4, []gateStep{
		{true, 10, w}, {true, 20, w}, {true, 30, w}, {true, 40, r},
	})
	// C > max_num_seqs never passes: the window starts at the first poll 60 s (8K) after the
	// cell's start, the scout's time included.
	timeout := make([]gateStep, 60)
	for i := range timeout {
		timeout[i] = gateStep{false, int64(10 * i), w}
	}
	timeout[59].want = GateTimeout
	runGate(t, "timeout at 60 s from the cell's start", p.NewGate(0, ms(300), 64, ctx, 0), ms(300), 64, timeout)
	g := p.NewGate(0, ms(300), 64, 131072, 0)
	if g.Timeout() != 180*vtime.Second {
		t.Errorf("128K gate timeout %v, want 180 s", g.Timeout())
	}
	runGate(t, "a simulation limit gives up first", p.NewGate(0, 0, 64, 131072, 3*vtime.Second), 0, 64, []gateStep{
		{false, 10, w}, {false, 20, w}, {false, 30, GateGaveUp},
	})
	short := p
	short.ReadyTimeoutS, short.StableS = 2, 0
	runGate(t, "passing on the timeout's poll is ready", short.NewGate(0, 0, 4, ctx, 0), 0, 4, []gateStep{
		{true, 10, w}, {true, 20, GateReady},
	})
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
	polls := p.WindowPolls(w)
	if len(polls) != 30 || polls[0] != ms(3500) || polls[29] != ms(32500) {
		t.Errorf("WindowPolls: %d polls from %v to %v, want 30 from 3.5 s to 32.5 s", len(polls), polls[0], polls[len(polls)-1])
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
		if got := stats.Median(in); got != c.want {
			t.Errorf("stats.Median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Errorf("Median reordered its input: %v", in)
			}
		}
	}
	if got := stats.Median(nil); !math.IsNaN(got) {
		t.Errorf("stats.Median(nil) = %v, want NaN", got)
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

// windowPolls are n polls a second apart from start+1 s, with the running counts given (the rest
// repeat the last).
func windowPolls(start vtime.Time, n int, running ...int) []Poll {
	out := make([]Poll, n)
	for i := range out {
		out[i] = Poll{At: start + vtime.Time(i+1)*vtime.Time(vtime.Second), Running: running[min(i, len(running)-1)]}
	}
	return out
}

func TestDecodeCell(t *testing.T) {
	// Two streams; the first finished once and was restarted, the restart has one token, and
	// a fourth request (a later restart) has none. Window [10 s, 12 s), last token at 11.6 s.
	reqs := []Request{
		{Send: 0, FirstToken: ms(100), LastToken: ms(1100), Tokens: 11},        // TTFT 100, TBT 100
		{Send: 0, FirstToken: ms(300), LastToken: ms(4300), Tokens: 21},        // TTFT 300, TBT 200
		{Send: ms(1100), FirstToken: ms(1300), LastToken: ms(1300), Tokens: 1}, // TTFT 200, no TBT
		{Send: ms(1200), FirstToken: -1, LastToken: -1},                        // nothing
	}
	o := Observation{Concurrency: 2, Gate: GateReady, Window: Window{Start: ms(10000), End: ms(12000)},
		Polls: windowPolls(ms(10000), 2, 2, 1), WindowTokens: 320, LastToken: ms(11600), Completed: 1}
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
		{"total tok/s (320 tokens / 1.6 s to the last token)", c.TotalTokS, 200},
		{"measured s (to the last token)", c.MeasuredS, 1.6},
		{"average active (polls 2, 1: 1.5)", c.AvgActive, 1.5},
	} {
		if !near(x.got, x.want) {
			t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
		}
	}
	if c.Status != matrix.RequestsQueued || c.Completed != 1 || c.OutputTokens != 320 || c.Context != "8K" || c.ContextTokens != 8192 || c.Concurrency != 2 {
		t.Errorf("cell %+v: want Requests queued (average 1.5 of 2) 8K x 2, 1 completed, 320 output tokens", c)
	}
	o.Polls = windowPolls(ms(10000), 2, 2)
	if c := DecodeCell("8K", 8192, &o, reqs); c.Status != matrix.Valid || c.AvgActive != 2 {
		t.Errorf("2 running on every poll: %s, average %v; want Valid, 2", c.Status, c.AvgActive)
	}
	o.Gate = GateGaveUp
	if c := DecodeCell("8K", 8192, &o, reqs); c.Status != matrix.Error || !math.IsNaN(c.TotalTokS) || c.Completed != -1 {
		t.Errorf("gave up: %+v, want Error with no numbers", c)
	}
	o.Gate = GateReady
	if c := DecodeCell("8K", 8192, &o, nil); !math.IsNaN(c.TTFTms) || !math.IsNaN(c.TBTms) || c.TotalTokS != 200 {
		t.Errorf("no requests: TTFT %v, TBT %v, total %v; want absent latencies and the window's throughput", c.TTFTms, c.TBTms, c.TotalTokS)
	}
	o.WindowTokens, o.LastToken = 0, -1
	if c := DecodeCell("8K", 8192, &o, reqs); c.TotalTokS != 0 || c.MeasuredS != 0 {
		t.Errorf("no token in the window: total %v over %v s, want 0 over 0", c.TotalTokS, c.MeasuredS)
	}
}

func TestAvgActive(t *testing.T) {
	for _, c := range []struct {
		running []int
		want    float64
	}{
		{[]int{32}, 32},
		{[]int{1, 1, 1, 0}, 0.8},          // 0.75 rounds up
		{[]int{2, 2, 2, 2, 2, 2, 1}, 1.9}, // 1.857
		{[]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, 0.9},
	} {
		polls := make([]Poll, len(c.running))
		for i, r := range c.running {
			polls[i].Running = r
		}
		if got := AvgActive(polls); got != c.want {
			t.Errorf("AvgActive(%v) = %v, want %v", c.running, got, c.want)
		}
	}
	if got := AvgActive(nil); !math.IsNaN(got) {
		t.Errorf("AvgActive(nil) = %v, want NaN", got)
	}
}

func TestDecodeStatus(t *testing.T) {
	const n = 30
	steady := func(r int) []Poll { return windowPolls(0, n, r) }
	withWaiting := steady(4)
	withWaiting[17].Waiting = 1
	for _, c := range []struct {
		name  string
		c     int
		gate  GateState
		polls []Poll
		want  matrix.Status
	}{
		{"all running", 32, GateReady, steady(32), matrix.Valid},
		{"more running than streams (a successor counted)", 32, GateReady, steady(33), matrix.Valid},
		{"timed out", 4, GateTimeout, steady(4), matrix.RequestsQueued},
		{"capped by max_num_seqs", 64, GateTimeout, steady(32), matrix.RequestsQueued},
		{"never C running", 4, GateReady, steady(3), matrix.RequestsQueued},
		{"a poll saw waiting", 4, GateReady, withWaiting, matrix.RequestsQueued},
		{"average 3.8 of 4 (>= 0.95 C)", 4, GateReady, windowPolls(0, n, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 4), matrix.Valid},
		{"average below 0.95 C", 4, GateReady, windowPolls(0, n, 4, 3, 3, 3, 3, 3, 3, 3, 4), matrix.RequestsQueued},
		// The seed's 1019K x 1: 3 of 30 polls between a request and its successor, average 0.9,
		// Valid: the average test applies from C = 2.
		{"C = 1 average 0.9", 1, GateReady, append(steady(1)[:27], Poll{}, Poll{}, Poll{}), matrix.Valid},
		{"no polls", 1, GateReady, nil, matrix.RequestsQueued},
	} {
		o := Observation{Concurrency: c.c, Gate: c.gate, Polls: c.polls}
		if got := DecodeStatus(&o); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
