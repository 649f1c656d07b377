package priors

import (
	"math"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy/deploytest"
	"github.com/servesim/servesim/model/param"
)

// TestProvenanceApproxEngine: a vLLM V0 release marks the deployment's engine as approximated and
// widens its intervals by that engine's width in quadrature; a V1 release and another engine's
// name do not.
func TestProvenanceApproxEngine(t *testing.T) {
	d := deploytest.Seed(t)
	_, prov := Of(d)
	v1 := Summarize(d, &prov)
	if v1.ApproxEngine != "" || d.RunsVLLMV0() {
		t.Fatalf("V1 seed deployment: approximated engine %q", v1.ApproxEngine)
	}
	d.Engine.Version = "0.7.3"
	v0 := Summarize(d, &prov)
	if v0.ApproxEngine == "" || !strings.Contains(v0.Line(), "engine approximated") {
		t.Fatalf("vLLM 0.7.3: summary %q, want the engine marked approximated", v0.Line())
	}
	w := param.DefaultWidths()
	for _, m := range param.Metrics() {
		base, got, extra := w.Sigma(&v1, m), w.Sigma(&v0, m), w[param.ClassApproxEngine][m]
		if math.Abs(got*got-(base*base+extra*extra)) > 1e-12 || extra <= 0 {
			t.Errorf("%s: sigma %g, want sqrt(%g^2 + %g^2)", m, got, base, extra)
		}
	}
	d.Engine.Name = "sglang"
	if s := Summarize(d, &prov); s.ApproxEngine != "" {
		t.Errorf("engine sglang 0.7.3 marked as vLLM V0: %q", s.ApproxEngine)
	}
}
