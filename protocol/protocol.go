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
	// PollS is how often the benchmark samples the server's metrics (/metrics: running, waiting,
	// generation tokens), for the readiness gate and inside the window.
	PollS float64 `toml:"poll_s"`
	// StableS is how long the readiness condition must hold on consecutive polls.
	StableS float64 `toml:"stable_s"`
	// MinReadyS is the earliest the window can start, counted from the cell's start.
	MinReadyS float64 `toml:"min_ready_s"`
	// ReadyTimeoutS, when positive, replaces the tool's readiness timeout for every context; 0
	// keeps the tool's default by context (see ReadyTimeout).
	ReadyTimeoutS float64 `toml:"ready_timeout_s"`
	// PauseS is the sleep after a cell's drain, before the next cell starts.
	PauseS float64 `toml:"pause_s"`
	// Warmup runs the tool's hidden warm-ups before the matrix (see Schedule).
	Warmup bool `toml:"warmup"`
	// WarmupDecodeS is how long the hidden C = 1 decode warm-up decodes.
	WarmupDecodeS float64 `toml:"warmup_decode_s"`
	// MarginTokens is subtracted from max_model_len with the output when fitting a context.
	MarginTokens int `toml:"margin_tokens"`
	// TrimSlack: a context up to this fraction above the room is trimmed to the room.
	TrimSlack float64 `toml:"trim_slack"`
}

// Seed is the seed run's protocol: contexts 8K..1024K (fitted to 1019K), prefill also at 1024K,
// concurrency 1..128, 30 s per cell, 4,096 output tokens, and the tool's defaults for everything
// else: polls every second, readiness after at least 2 s and 3 s stable, the readiness timeout
// by context, a 2 s pause between cells, the hidden warm-ups with a 3 s decode.
func Seed() Protocol {
	return Protocol{
		Name:          "llm-inference-bench",
		Contexts:      []string{"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1024K"},
		PrefillOnly:   []string{"1024K"},
		Concurrency:   []int{1, 2, 4, 8, 16, 32, 64, 128},
		DurationS:     30,
		MaxOutput:     4096,
		PollS:         1.0,
		StableS:       3.0,
		MinReadyS:     2.0,
		ReadyTimeoutS: 0,
		PauseS:        2.0,
		Warmup:        true,
		WarmupDecodeS: 3.0,
		MarginTokens:  matrix.ContextMarginTokens,
		TrimSlack:     0.10,
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
	case !(p.PollS > 0):
		return fmt.Errorf("protocol.poll_s = %v: must be positive", p.PollS)
	case p.PollS > 60:
		return fmt.Errorf("protocol.poll_s = %v: must be at most 60", p.PollS)
	case !inRange(p.StableS, 0, 3600):
		return fmt.Errorf("protocol.stable_s = %v: must be in [0, 3600]", p.StableS)
	case !inRange(p.MinReadyS, 0, 3600):
		return fmt.Errorf("protocol.min_ready_s = %v: must be in [0, 3600]", p.MinReadyS)
	case !inRange(p.ReadyTimeoutS, 0, 3600):
		return fmt.Errorf("protocol.ready_timeout_s = %v: must be in [0, 3600] (0: the tool's default by context)", p.ReadyTimeoutS)
	case !inRange(p.PauseS, 0, 3600):
		return fmt.Errorf("protocol.pause_s = %v: must be in [0, 3600]", p.PauseS)
	case !inRange(p.WarmupDecodeS, 0, 3600):
		return fmt.Errorf("protocol.warmup_decode_s = %v: must be in [0, 3600]", p.WarmupDecodeS)
	case p.MarginTokens < 0:
		return fmt.Errorf("protocol.margin_tokens = %d: must be >= 0", p.MarginTokens)
	case !(p.TrimSlack >= 0 && p.TrimSlack <= 1):
		return fmt.Errorf("protocol.trim_slack = %v: must be in [0, 1]", p.TrimSlack)
	}
	return nil
}

// inRange reports lo <= v <= hi (false for NaN).
func inRange(v, lo, hi float64) bool { return v >= lo && v <= hi }
