package llmbench_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servesim/servesim/llmbench"
	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/scenario"
)

// TestExplainCellFollowsMatrix: explain fits a context and applies capacity as the matrix does.
// "--context 512K --concurrency 16" used to say 16 run at once although the KV cache holds 7 and
// the matrix says Over capacity; "--context 1019K" was 1,043,456 tokens while the matrix's 1019K
// row is 1,044,416.
func TestExplainCellFollowsMatrix(t *testing.T) {
	res, srv := seedRun(t)
	p := scenario.Default().Protocol
	mml := srv.Deployment.Engine.MaxModelLen
	for _, c := range res.Matrix.Decode {
		x, err := llmbench.ExplainCell(srv, &p, c.Context, c.Concurrency)
		if err != nil {
			t.Fatalf("%s x %d: %v", c.Context, c.Concurrency, err)
		}
		if x.Context != c.ContextTokens {
			t.Errorf("%s: explain uses %d tokens, the matrix %d", c.Context, x.Context, c.ContextTokens)
		}
		if over := c.Status == matrix.OverCapacity; x.OverCapacity != over {
			t.Errorf("%s x %d: explain over capacity %v, matrix status %s", c.Context, c.Concurrency, x.OverCapacity, c.Status)
		}
		if x.OverCapacity && (x.Running != min(x.MaxConcurrency, srv.Deployment.Engine.MaxNumSeqs) || x.Running >= c.Concurrency) {
			t.Errorf("%s x %d: %d run at once, the KV cache holds %d", c.Context, c.Concurrency, x.Running, x.MaxConcurrency)
		}
	}
	x, err := llmbench.ExplainCell(srv, &p, "512K", 16)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := x.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Over capacity: the benchmark does not run this cell") || strings.Contains(b.String(), "16 run at once") {
		t.Errorf("512K x 16:\n%s", b.String())
	}
	// The nominal 1024K is fitted (trimmed to the room) like the matrix's row; 2M does not fit.
	if n, err := llmbench.ContextTokens(&p, "1024K", mml); err != nil || n != 1_044_416 {
		t.Errorf("1024K: %d, %v; want 1044416", n, err)
	}
	if n, err := llmbench.ContextTokens(&p, "1019K", mml); err != nil || n != 1_044_416 {
		t.Errorf("1019K: %d, %v; want 1044416 (the matrix's row)", n, err)
	}
	if n, err := llmbench.ContextTokens(&p, "100000", mml); err != nil || n != 100_000 {
		t.Errorf("100000: %d, %v", n, err)
	}
	if _, err := llmbench.ContextTokens(&p, "2M", mml); err == nil || !strings.Contains(err.Error(), "do not fit max_model_len") {
		t.Errorf("2M: %v", err)
	}
}
