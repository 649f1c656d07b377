package protocol

import (
	"fmt"

	"github.com/servesim/servesim/matrix"
)

// Protocol is llm-inference-bench's matrix protocol: which cells it runs and how it measures them.
type Protocol struct {
	Name string `toml:"name"`
	// Contexts are the decode rows, nominal sizes in tokens (labels "8K" = 8,192).
	Contexts []string `toml:"contexts"`
	// PrefillOnly are extra prefill rows with a one-token output (the seed's "1024K").
	PrefillOnly []string `toml:"prefill_only"`
	Concurrency []int    `toml:"concurrency"`
	DurationS   float64  `toml:"duration_s"`
	MaxOutput   int      `toml:"max_output"`
	// PollS is how often the benchmark samples the server's metrics for the readiness gate.
	PollS float64 `toml:"poll_s"`
	// StableS is how long the readiness condition must hold before the window starts.
	StableS float64 `toml:"stable_s"`
	// MarginTokens is subtracted from max_model_len with the output when fitting a context.
	MarginTokens int `toml:"margin_tokens"`
	// TrimSlack: a context up to this fraction above the room is trimmed to the room.
	TrimSlack float64 `toml:"trim_slack"`
}

// Seed is the seed run's protocol: contexts 8K..1024K (fitted to 1019K), prefill also at 1024K,
// concurrency 1..128, 30 s per cell, 4,096 output tokens.
func Seed() Protocol {
	return Protocol{
		Name:         "llm-inference-bench",
		Contexts:     []string{"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1024K"},
		PrefillOnly:  []string{"1024K"},
		Concurrency:  []int{1, 2, 4, 8, 16, 32, 64, 128},
		DurationS:    30,
		MaxOutput:    4096,
		PollS:        0.5,
		StableS:      1.0,
		MarginTokens: 64,
		TrimSlack:    0.10,
	}
}

// Validate checks the protocol's fields.
func (p *Protocol) Validate() error {
	if len(p.Contexts) == 0 && len(p.PrefillOnly) == 0 {
		return fmt.Errorf("protocol.contexts: empty: want at least one context such as \"8K\"")
	}
	for i, c := range p.Contexts {
		if _, err := matrix.ParseContext(c); err != nil {
			return fmt.Errorf("protocol.contexts[%d]: %w", i, err)
		}
	}
	for i, c := range p.PrefillOnly {
		if _, err := matrix.ParseContext(c); err != nil {
			return fmt.Errorf("protocol.prefill_only[%d]: %w", i, err)
		}
	}
	for i, c := range p.Concurrency {
		if c <= 0 || c > 100000 {
			return fmt.Errorf("protocol.concurrency[%d] = %d: must be in 1..100000", i, c)
		}
	}
	switch {
	case !(p.DurationS > 0 && p.DurationS <= 3600): // also NaN
		return fmt.Errorf("protocol.duration_s = %v: must be in (0, 3600]", p.DurationS)
	case p.MaxOutput <= 0:
		return fmt.Errorf("protocol.max_output = %d: must be a positive integer", p.MaxOutput)
	case !(p.PollS > 0 && p.PollS <= 3600):
		return fmt.Errorf("protocol.poll_s = %v: must be in (0, 3600]", p.PollS)
	case !(p.StableS >= 0 && p.StableS <= 3600):
		return fmt.Errorf("protocol.stable_s = %v: must be in [0, 3600]", p.StableS)
	case p.MarginTokens < 0:
		return fmt.Errorf("protocol.margin_tokens = %d: must be >= 0", p.MarginTokens)
	case !(p.TrimSlack >= 0 && p.TrimSlack <= 1):
		return fmt.Errorf("protocol.trim_slack = %v: must be in [0, 1]", p.TrimSlack)
	}
	return nil
}
