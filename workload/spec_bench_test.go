package workload

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/servesim/servesim/protocol"
)

// TestBenchCellProtocol checks that a bench cell carries its protocol's settings, zeros included,
// and that absent settings are the seed protocol's.
func TestBenchCellProtocol(t *testing.T) {
	seed := protocol.Seed()
	zero := protocol.Seed()
	zero.StableS, zero.MarginTokens, zero.TrimSlack = 0, 0, 0
	other := protocol.Seed()
	other.TrimSlack, other.MarginTokens, other.ReadyTimeoutS = 0.25, 128, 5
	for _, p := range []protocol.Protocol{seed, zero, other} {
		got := BenchFromProtocol(&p, "128K", 16).Protocol()
		if got.StableS != p.StableS || got.MarginTokens != p.MarginTokens || got.TrimSlack != p.TrimSlack ||
			got.DurationS != p.DurationS || got.MaxOutput != p.MaxOutput || got.PollS != p.PollS || got.ReadyTimeoutS != p.ReadyTimeoutS {
			t.Errorf("BenchFromProtocol(%+v).Protocol() = %+v: settings differ", p, got)
		}
		if len(got.Contexts) != 1 || got.Contexts[0] != "128K" || len(got.Concurrency) != 1 || got.Concurrency[0] != 16 || len(got.PrefillOnly) != 0 {
			t.Errorf("cell protocol: contexts %v, concurrency %v, prefill-only %v; want [128K], [16], none", got.Contexts, got.Concurrency, got.PrefillOnly)
		}
	}
	// The seed's trim slack is implied, not written.
	b, err := json.Marshal(BenchFromProtocol(&seed, "128K", 16))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"context":"128K","concurrency":16,"duration_s":30,"max_output":4096,"poll_s":1,"stable_s":3,"margin_tokens":64}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	s, err := Parse([]byte("kind = \"bench\"\n[bench]\ncontext = \"1024K\"\nconcurrency = 1\nmargin_tokens = 0\ntrim_slack = 0\nstable_s = 0\n"), "w.toml")
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Cell.Protocol(); p.MarginTokens != 0 || p.TrimSlack != 0 || p.StableS != 0 {
		t.Errorf("TOML zeros: margin %d, trim slack %v, stable %v; want 0, 0, 0", p.MarginTokens, p.TrimSlack, p.StableS)
	}
	s, err = Parse([]byte("kind = \"bench\"\n[bench]\ncontext = \"1024K\"\nconcurrency = 1\n"), "w.toml")
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Cell.Protocol(); p.MarginTokens != seed.MarginTokens || p.TrimSlack != seed.TrimSlack || p.StableS != seed.StableS {
		t.Errorf("absent settings: %+v, want the seed's", p)
	}
	// The seed's margin: a 1024K cell needs 1,048,576 + 4,096 + 64 tokens of max_model_len.
	if got := s.MaxRequestTokens(); got != 1052736 {
		t.Errorf("MaxRequestTokens = %d, want 1,052,736", got)
	}
	_, err = Parse([]byte("kind = \"bench\"\n[bench]\ncontext = \"8K\"\nconcurrency = 1\ntrim_slack = 2\n"), "w.toml")
	if err == nil || !strings.Contains(err.Error(), "protocol.trim_slack = 2") {
		t.Errorf("trim_slack = 2: %v, want the protocol's validation error", err)
	}
}
