package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/servesim/servesim/internal/numfmt"
)

// answerTable is the report's opening answer, row by row (header, value), tags stripped.
func answerTable(t *testing.T, html string) [][2]string {
	t.Helper()
	i := strings.Index(html, `<table class="answer">`)
	if i < 0 {
		t.Fatal("no answer table in the report")
	}
	j := strings.Index(html[i:], "</table>")
	tags := regexp.MustCompile(`<[^>]+>`)
	var rows [][2]string
	for _, m := range regexp.MustCompile(`(?s)<th scope="row">(.*?)</th><td>(.*?)</td>`).FindAllStringSubmatch(html[i:i+j], -1) {
		rows = append(rows, [2]string{tags.ReplaceAllString(m[1], ""), tags.ReplaceAllString(m[2], "")})
	}
	return rows
}

// TestReportAnswersTheQuestion: given a workload, the report's opening answers that workload (its
// throughput as simulate measures it), and given a plan, the plan (its first-ranked row); the
// benchmark's peak follows, named as such.
func TestReportAnswersTheQuestion(t *testing.T) {
	dir := t.TempDir()
	code, js, errs := runCLI("simulate", "--workload", "chat", "--format", "json", "--quiet")
	if code != 0 {
		t.Fatalf("simulate: %d %s", code, errs)
	}
	var m struct {
		OutputTokS float64 `json:"output_tok_s"`
	}
	if err := json.Unmarshal([]byte(js), &m); err != nil || m.OutputTokS <= 0 {
		t.Fatalf("simulate json: %v %v", err, m)
	}
	out := filepath.Join(dir, "w.html")
	if code, _, errs := runCLI("report", "--workload", "chat", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("report --workload: %d %s", code, errs)
	}
	b, _ := os.ReadFile(out)
	rows := answerTable(t, string(b))
	if len(rows) < 2 || rows[0][0] != "Your workload" || !strings.Contains(rows[0][1], "chat") {
		t.Fatalf("report --workload: the answer does not open with the workload: %q", rows)
	}
	want := numfmt.Commas(strconv.FormatFloat(m.OutputTokS, 'f', 0, 64)) + " output tok/s"
	if rows[1][0] != "Throughput" || !strings.Contains(rows[1][1], want) {
		t.Errorf("report --workload: throughput row %q, want %q (simulate's)", rows[1], want)
	}
	for _, r := range rows {
		if r[0] == "Peak throughput" {
			t.Errorf("report --workload: the matrix peak is still called the answer: %q", r)
		}
	}

	plan := filepath.Join(dir, "plan.json")
	if code, _, errs := runCLI(append(smallPlan, "--format", "json", "--out", plan, "--quiet")...); code != 0 {
		t.Fatalf("plan: %d %s", code, errs)
	}
	var p struct {
		Results []struct {
			Rank   int `json:"rank"`
			Config struct {
				GPU   string `json:"gpu"`
				Count int    `json:"gpus"`
				TP    int    `json:"tp"`
			} `json:"config"`
			Status string `json:"status"`
		} `json:"results"`
	}
	pb, _ := os.ReadFile(plan)
	if err := json.Unmarshal(pb, &p); err != nil {
		t.Fatal(err)
	}
	first := ""
	for _, r := range p.Results {
		if r.Rank == 1 {
			first = fmt.Sprintf("%d x %s TP%d", r.Config.Count, r.Config.GPU, r.Config.TP)
		}
	}
	if first == "" {
		t.Fatal("the plan has no rank 1")
	}
	out = filepath.Join(dir, "p.html")
	if code, _, errs := runCLI("report", "--plan", plan, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("report --plan: %d %s", code, errs)
	}
	b, _ = os.ReadFile(out)
	rows = answerTable(t, string(b))
	if len(rows) < 2 || rows[0][0] != "Your plan" || rows[1][0] != "Best configuration" || !strings.HasPrefix(rows[1][1], first) || !strings.Contains(rows[1][1], "P(meet)") {
		t.Errorf("report --plan: the answer does not open with the plan's rank 1 (%s): %q", first, rows)
	}
}

// TestReportBoldsOnlyMovedParameters: the report's parameter table bolds a value that differs
// from the deployment's prior (its GPU generation's), not one equal to it: an uncalibrated H100
// run has none bold (Hopper's priors differ from the generic ones it was compared with).
func TestReportBoldsOnlyMovedParameters(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, errs := runCLI("report", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384", "--gpu", "H100",
		"--uncalibrated", "--measured", "none", "--explain", "none", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(out)
	s := string(b)
	i := strings.Index(s, `id="table-params"`)
	if i < 0 {
		t.Fatal("no parameter table")
	}
	tbl := s[i:]
	tbl = tbl[:strings.Index(tbl, "</table>")]
	if n := strings.Count(tbl, "moved"); n > 1 { // the caption names it once
		t.Errorf("uncalibrated H100: %d parameters bold as moved from their prior, want none", n-1)
	}
}
