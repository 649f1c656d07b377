package priors

import (
	"slices"
	"strings"
	"testing"

	"github.com/servesim/servesim/model/deploy"
	"github.com/servesim/servesim/model/deploy/deploytest"
	"github.com/servesim/servesim/model/hardware"
	"github.com/servesim/servesim/model/param"
)

// TestUnseen: GLM-5-FP8 on an H200 runs a model family and an attention kind (sparse MLA) that no
// measured Hopper run covers, and its intervals widen by the unseen widths; DeepSeek-R1 FP8 on the
// same GPU (deepseek_v3, MLA, fp8: the dstack and SGLang runs) is covered; the seed on its own card
// is covered.
func TestUnseen(t *testing.T) {
	glm := deploytest.H200(t, deploytest.BuiltinHF(t, "zai-org/GLM-5-FP8"), 8, deploy.Speculative{})
	u := Unseen(glm)
	if len(u) != 2 || !strings.HasPrefix(u[0], "model family glm_moe_dsa on Hopper") || !strings.HasPrefix(u[1], "attention sparse_mla on Hopper") {
		t.Errorf("GLM-5-FP8 on H200: unseen %q, want its family and sparse_mla", u)
	}
	if u := Unseen(deploytest.H200(t, deploytest.BuiltinHF(t, "deepseek-ai/DeepSeek-R1"), 8, deploy.Speculative{})); len(u) != 0 {
		t.Errorf("DeepSeek-R1 on H200: unseen %q, want none", u)
	}
	if u := Unseen(deploytest.Seed(t)); len(u) != 0 {
		t.Errorf("the seed: unseen %q, want none", u)
	}
	_, prov := Of(glm)
	s := Summarize(glm, &prov)
	if !slices.Equal(s.Unseen, u) || !strings.Contains(s.Line(), "no measured support") {
		t.Errorf("provenance %+v: want the unseen list and a line that says so", s)
	}
	w := param.DefaultWidths()
	seen := s
	seen.Unseen = nil
	for _, m := range param.Metrics() {
		got, base, add := w.Sigma(&s, m), w.Sigma(&seen, m), w[param.ClassUnseen][m]
		if want := base*base + add*add; got*got < want-1e-12 || got*got > want+1e-12 {
			t.Errorf("%s: sigma %g, want sqrt(%g^2 + %g^2)", m, got, base, add)
		}
	}
}

// TestUnseenWithoutMeasuredRuns: on a generation no end-to-end measured run covers (Ampere: its
// priors rest on kernel profiles only), everything a deployment runs is unseen; UnseenIn a
// support that lists it, nothing is.
func TestUnseenWithoutMeasuredRuns(t *testing.T) {
	d := deploytest.H200(t, deploytest.BuiltinHF(t, "deepseek-ai/DeepSeek-R1"), 8, deploy.Speculative{})
	g, err := hardware.BuiltinCatalog().Find("A100-SXM-80GB")
	if err != nil {
		t.Fatal(err)
	}
	d.Hardware.GPU = g
	u := Unseen(d)
	if len(u) != 3 || !strings.HasPrefix(u[0], "model family deepseek_v3 on Ampere") || !strings.HasPrefix(u[1], "attention mla on Ampere") || !strings.HasPrefix(u[2], "weights ") {
		t.Errorf("DeepSeek-R1 on an A100: unseen %q, want its family, attention and weights", u)
	}
	if u := UnseenIn(d, Runs(d)); len(u) != 0 {
		t.Errorf("unseen in its own runs' support: %q, want none", u)
	}
}
