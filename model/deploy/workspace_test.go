package deploy_test

import (
	"math"
	"testing"

	"github.com/servesim/servesim/model/deploy/deploytest"
	"github.com/servesim/servesim/model/param"
	"github.com/servesim/servesim/model/priors"
)

// The sparse-MLA workspace: 5 x max_model_len bf16 entries of 512 + 64 at the prior, 5.625 GiB
// for a 1M-token context, a quarter of it with decode context parallel 4.
func TestSparseWorkspace(t *testing.T) {
	d := deploytest.Seed(t)
	p, _ := priors.Of(d)
	if got := d.SparseWorkspace(&p) / (1 << 30); math.Abs(got-5.625) > 1e-9 {
		t.Errorf("workspace %.3f GiB, want 5.625", got)
	}
	d.Engine.DecodeContextParallel = 4
	if got := d.SparseWorkspace(&p) / (1 << 30); math.Abs(got-5.625/4) > 1e-9 {
		t.Errorf("workspace at DCP 4 %.3f GiB, want %.3f", got, 5.625/4)
	}
	p[param.SparseWorkspaceEntries] = 0.5
	d.Engine.DecodeContextParallel = 1
	if got := d.SparseWorkspace(&p) / (1 << 30); math.Abs(got-0.5625) > 1e-9 {
		t.Errorf("workspace at 0.5 entries %.4f GiB, want 0.5625", got)
	}
}
