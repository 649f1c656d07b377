package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesim/servesim/internal/buildinfo"
)

// TestReportWorkloadAndPlan: report --workload adds the run's table and its figures (latency
// CDFs, KV cache and queue over time), --plan a plan's table and its cost figure; the page opens
// with the answer and its footer gives the version.
func TestReportWorkloadAndPlan(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	if code, _, errs := runCLI(append(smallPlan, "--format", "json", "--out", plan, "--quiet")...); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	out := filepath.Join(dir, "report.html")
	code, _, errs := runCLI("report", "--workload", "chat", "--rate", "2", "--requests", "100", "--slo-ttft-ms", "2000",
		"--plan", plan, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if errs != "" {
		t.Errorf("--quiet report wrote to stderr: %q", errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`id="answer"`, `id="workload"`, `id="fig-latency-cdf"`, `id="fig-kv-queue"`, `id="plan"`, `id="fig-plan-cost"`,
		"chat at 2 req/s", "Best configuration of each hardware layout", "servesim " + buildinfo.Version()} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if a, w := strings.Index(page, `id="answer"`), strings.Index(page, `id="workload"`); a > w {
		t.Errorf("the answer comes after the workload section")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--rate", "2"}, "--rate and --requests change a --workload"},
		{[]string{"report", "--plan", filepath.Join(dir, "missing.json")}, "--plan: "},
		{[]string{"report", "--plan", out}, "--plan: "},
		{[]string{"report", "--workload", "nosuchpreset"}, "nosuchpreset"},
	} {
		if code, _, errs := runCLI(c.args...); code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error with %q", c.args, code, errs, c.want)
		}
	}
}
