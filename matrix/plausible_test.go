package matrix

import (
	"os"
	"strings"
	"testing"
)

// TestPlausible: the seed's published matrix agrees with its own numbers and with limits it
// respects; one edited field at a time is refused, naming the cell and the field.
func TestPlausible(t *testing.T) {
	data, err := os.ReadFile("testdata/seed.txt")
	if err != nil {
		t.Fatal(err)
	}
	// The seed's deployment: a forward pass of at least 2.96 ms, 8 tokens per step, at most
	// 86,000 output tok/s.
	lim := Limits{ForwardS: 2.96e-3, TokensPerStep: 8, OutputTokS: 86000, Margin: 2, Why: "w"}
	load := func(text string) *Matrix {
		t.Helper()
		m, err := ParseText(strings.NewReader(text), "seed.txt")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := load(string(data)).Plausible(lim); err != nil {
		t.Fatalf("the seed: %v", err)
	}
	row := "| Sustained decode | 8K | 1 | Valid | 179.7 | 184.7 | 746 ms | 5.4 ms | 1.0 | 1 | 5,391 | 30.0 s |"
	row32 := "| Sustained decode | 8K | 32 | Valid | 1,335.7 | 38.2 | 4,917 ms | 26.2 ms | 32.0 | 0 | 40,011 | 30.0 s |"
	pre := "| Prefill | 8K | 1 | Valid | 12K | — | 682 ms |"
	for _, c := range []struct{ old, new, want string }{
		// Own numbers.
		{row32, strings.Replace(row32, "1,335.7", "2,335.7", 1), "decode 8K x 32: total_tok_s"},
		{row, strings.Replace(row, "184.7", "1,847", 1), "decode 8K x 1: per_request_tok_s"},
		{row32, strings.Replace(row32, "| 32.0 |", "| 64.0 |", 1), "decode 8K x 32: avg_active"},
		{row, strings.Replace(row, "30.0 s", "300.0 s", 1), "decode 8K x 1: total_tok_s"},
		{pre, strings.Replace(pre, "12K", "120K", 1), "prefill 8K: total_tok_s"},
		// 10,000 tok/s for one stream (TBT 0.1 ms): consistent with itself, not with the total.
		{row, strings.NewReplacer("184.7", "10,000", "5.4 ms", "0.1 ms").Replace(row), "decode 8K x 1: per_request_tok_s"},
		// Physics.
		{row, strings.Replace(row, "746 ms", "1 ms", 1), "decode 8K x 1: ttft_ms"},
		{pre, strings.NewReplacer("682 ms", "1 ms", "12K", "8,192,000").Replace(pre), "prefill 8K: ttft_ms"},
	} {
		text := strings.Replace(string(data), c.old, c.new, 1)
		if text == string(data) {
			t.Fatalf("%q not in the seed", c.old)
		}
		err := load(text).Plausible(lim)
		if err == nil || !strings.Contains(err.Error(), c.want+" ") || !strings.Contains(err.Error(), "implausible") {
			t.Errorf("%s: %v, want %q implausible", c.new, err, c.want)
		}
	}
	// Physics beyond the margin with consistent own numbers: a 0.15 ms time between tokens
	// (6,667 tok/s per request, within 10 x a total raised to match) is below 2.96 ms / 8 / 2.
	fast := strings.NewReplacer("179.7", "1,000", "5,391", "30,000", "184.7", "6,667", "5.4 ms", "0.15 ms").Replace(row)
	err = load(strings.Replace(string(data), row, fast, 1)).Plausible(lim)
	if err == nil || !strings.Contains(err.Error(), "tbt_ms ") {
		t.Errorf("0.15 ms between tokens: %v, want tbt_ms implausible", err)
	}
	// Output tok/s above the limit (the cell's own totals raised with it).
	huge := strings.NewReplacer("1,335.7", "200K", "40,011", "6,000,000").Replace(row32)
	err = load(strings.Replace(string(data), row32, huge, 1)).Plausible(lim)
	if err == nil || !strings.Contains(err.Error(), "total_tok_s ") || !strings.Contains(err.Error(), "physical limit") {
		t.Errorf("200K tok/s: %v, want total_tok_s above the physical limit", err)
	}
	// No limits: only the own numbers are checked.
	if err := load(strings.Replace(string(data), row, strings.Replace(row, "746 ms", "1 ms", 1), 1)).Plausible(Limits{}); err != nil {
		t.Errorf("no limits, 1 ms TTFT: %v", err)
	}
}
