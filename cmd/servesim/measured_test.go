package main

import (
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var resultFiles = []string{
	"../../vllmbench/testdata/openai-2.0qps-GLM-5.3-Flash-NVFP4-20260914-104500.json",
	"../../vllmbench/testdata/openai-4.0qps-GLM-5.3-Flash-NVFP4-20260914-101500.json",
	"../../vllmbench/testdata/openai-infqps-concurrency16-GLM-5.3-Flash-NVFP4-20260914-103000.json",
}

// csvColumn reads a CSV's rows as maps by header.
func csvRows(t *testing.T, text string) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("csv: %v\n%s", err, text)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			if i < len(r) {
				m[h] = r[i]
			}
		}
		out = append(out, m)
	}
	return out
}

// TestValidateAndSimulateMeasuredAgree: validate and simulate --measured predict the same numbers
// for the same result file and scenario (one mapping, one seed), and validate runs the seed's own
// result files without --config.
func TestValidateAndSimulateMeasuredAgree(t *testing.T) {
	for _, f := range resultFiles {
		code, vout, verr := runCLI("validate", f, "--format", "csv", "--quiet")
		if code != 0 {
			t.Fatalf("validate %s (no --config): exit %d: %s", f, code, verr)
		}
		code, sout, serr := runCLI("simulate", "--measured", f, "--format", "csv", "--quiet")
		if code != 0 {
			t.Fatalf("simulate --measured %s: exit %d: %s", f, code, serr)
		}
		sim := map[string]string{}
		for _, r := range csvRows(t, sout) {
			sim[r["key"]] = r["predicted"]
		}
		pairs := map[string]string{"output_tok_s": "output_throughput", "tpot_ms_median": "median_tpot_ms", "ttft_ms_median": "median_ttft_ms"}
		seen := 0
		for _, r := range csvRows(t, vout) {
			k, ok := pairs[r["metric"]]
			if !ok {
				continue
			}
			seen++
			a, _ := strconv.ParseFloat(r["predicted"], 64)
			b, _ := strconv.ParseFloat(sim[k], 64)
			if a == 0 || abs(a/b-1) > 1e-6 {
				t.Errorf("%s: %s: validate predicts %v, simulate --measured %v", filepath.Base(f), r["metric"], r["predicted"], sim[k])
			}
		}
		if seen != len(pairs) {
			t.Errorf("%s: validate's csv has %d of the %d compared metrics:\n%s", f, seen, len(pairs), vout)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// otherModelFile is a result file of the seed's run relabelled as another model's, or with server
// flags recorded in its metadata.
func editedResult(t *testing.T, dir, name string, edit func(string) string) string {
	t.Helper()
	b, err := os.ReadFile(resultFiles[1])
	if err != nil {
		t.Fatal(err)
	}
	return put(t, dir, name, edit(string(b)))
}

// TestMeasuredModelChecked: a result file of another model, or one whose metadata records other
// server flags, is refused by simulate --measured, fit and validate, naming both sides; the
// refusal names only flags that exist.
func TestMeasuredModelChecked(t *testing.T) {
	dir := t.TempDir()
	llama := []string{"--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100"}
	glm := resultFiles[1]
	for _, args := range [][]string{
		append([]string{"simulate", "--measured", glm}, llama...),
		append([]string{"fit", "--measured", glm}, llama...),
		append([]string{"validate", glm}, llama...),
	} {
		code, _, errs := runCLI(append(args, "--quiet")...)
		if code != 2 || !strings.Contains(errs, `measured model "nvidia/GLM-5.3-Flash-NVFP4"`) || !strings.Contains(errs, "Llama-3.1-8B-Instruct") {
			t.Errorf("%v: exit %d, want 2 and both models named: %s", args[:2], code, errs)
		}
	}
	tp8 := editedResult(t, dir, "tp8.json", func(s string) string {
		return strings.Replace(s, `"date"`, `"tensor_parallel_size": "8", "date"`, 1)
	})
	code, _, errs := runCLI("simulate", "--measured", tp8, "--quiet")
	if code != 2 || !strings.Contains(errs, "tensor_parallel_size 8 (the scenario: 4)") {
		t.Errorf("simulate --measured with tensor_parallel_size=8 recorded: exit %d: %s", code, errs)
	}
	tp4 := editedResult(t, dir, "tp4.json", func(s string) string {
		return strings.Replace(s, `"date"`, `"tensor_parallel_size": "4", "date"`, 1)
	})
	if code, _, errs := runCLI("simulate", "--measured", tp4, "--quiet"); code != 0 {
		t.Errorf("simulate --measured with the scenario's TP recorded: exit %d: %s", code, errs)
	}
	// validate without a server, on a file of a model that is not the seed's: the error names
	// the flags to give, and they exist.
	other := editedResult(t, dir, "llama.json", func(s string) string {
		return strings.ReplaceAll(s, "nvidia/GLM-5.3-Flash-NVFP4", "meta-llama/Llama-3.1-8B-Instruct")
	})
	code, _, errs = runCLI("validate", other, "--quiet")
	if code != 2 || !strings.Contains(errs, "--gpu") {
		t.Fatalf("validate without a server on a Llama file: exit %d: %s", code, errs)
	}
	fs := newFlagSet(findCommand("validate"), io.Discard)
	findCommand("validate").Setup(fs, &env{stdout: io.Discard, stderr: io.Discard})
	msg := regexp.MustCompile(`"[^"]*"`).ReplaceAllString(errs, "")
	for _, m := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(msg, -1) {
		if fs.Lookup(m[1]) == nil && m[1] != "help" {
			t.Errorf("validate's error names --%s, which validate does not have: %s", m[1], errs)
		}
	}
}

// TestMeasuredQuiet: -q silences simulate --measured's notes on what the file does not record.
func TestMeasuredQuiet(t *testing.T) {
	code, _, errs := runCLI("simulate", "--measured", resultFiles[1])
	if code != 0 || !strings.Contains(errs, "note:") {
		t.Fatalf("simulate --measured: exit %d, want notes on stderr: %s", code, errs)
	}
	code, _, errs = runCLI("simulate", "--measured", resultFiles[1], "-q")
	if code != 0 || errs != "" {
		t.Errorf("simulate --measured -q: exit %d, stderr not empty:\n%s", code, errs)
	}
}

// TestMeasuredResultFileFigures: plot and report take a vllm bench result file as --measured
// (they refused it: unknown field "date"): the run is simulated and its latency distributions
// are drawn predicted against measured; a fit to result files reads back into the report with
// each file's metrics measured, at the start and fitted (the matrix error table was all zeros).
func TestMeasuredResultFileFigures(t *testing.T) {
	dir := t.TempDir()
	f := resultFiles[1]
	code, out, errs := runCLI("plot", "--measured", f, "--out", dir, "--format", "svg", "--explain", "none", "--quiet")
	if code != 0 {
		t.Fatalf("plot --measured RESULT.json: exit %d: %s", code, errs)
	}
	for _, name := range []string{"measured-ttft-tpot.svg", "measured-itl-e2e.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.Contains(out, name) {
			t.Errorf("plot --measured RESULT.json: no %s: %v", name, err)
			continue
		}
		if !strings.Contains(string(b), "measured") || !strings.Contains(string(b), "predicted") {
			t.Errorf("%s: no predicted and measured legend", name)
		}
	}
	html := filepath.Join(dir, "r.html")
	if code, _, errs := runCLI("report", "--measured", f, "--out", html, "--quiet"); code != 0 {
		t.Fatalf("report --measured RESULT.json: exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(html)
	for _, want := range []string{`id="measured-run"`, "Predicted vs measured", "output throughput (tok/s)", `id="fig-measured-ttft-tpot"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report --measured RESULT.json: no %q", want)
		}
	}
	// The opening answers the measured run, with the measurement beside the prediction.
	rows := answerTable(t, string(b))
	if len(rows) < 4 || rows[0][0] != "Your measured run" || !strings.HasPrefix(rows[0][1], filepath.Base(f)) ||
		rows[3][0] != "Against the run" || !strings.Contains(rows[3][1], "433.0 tok/s measured") {
		t.Errorf("report --measured RESULT.json: the answer does not open with the run: %q", rows)
	}
	// The other model's file is refused here too.
	if code, _, errs := runCLI("plot", "--measured", f, "--out", dir, "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100", "--quiet"); code != 2 || !strings.Contains(errs, "measured model") {
		t.Errorf("plot --measured with another model's file: exit %d: %s", code, errs)
	}

	fit := filepath.Join(dir, "fit.json")
	if code, _, errs := runCLI("fit", "--measured", f, "--report", fit, "--quiet"); code != 0 {
		t.Fatalf("fit --measured: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI("report", "--fit-report", fit, "--measured", "none", "--out", html, "--quiet"); code != 0 {
		t.Fatalf("report --fit-report: exit %d: %s", code, errs)
	}
	b, _ = os.ReadFile(html)
	s := string(b)
	if strings.Contains(s, `id="table-fit-errors"`) {
		t.Errorf("report of a result-file fit shows the matrix error table (all zeros)")
	}
	i := strings.Index(s, `id="table-fit-target-1"`)
	if i < 0 {
		t.Fatalf("report of a result-file fit: no per-file table")
	}
	tbl := s[i:]
	tbl = tbl[:strings.Index(tbl, "</table>")]
	// The measured output throughput of the file (433.03 tok/s) is in its row.
	row := tbl[strings.Index(tbl, "output_throughput"):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, "433") {
		t.Errorf("per-file table's output_throughput row lacks the measured 433 tok/s: %s", row)
	}
}

// TestMeasuredBeyondPhysicsRefused: simulate --measured and matrix --measured refuse measured
// values the simulated deployment cannot physically give, naming the field (exit 1, no run).
func TestMeasuredBeyondPhysicsRefused(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "r.json")
	m := "meta-llama/Llama-3.1-8B-Instruct"
	body := `{"model_id":"` + m + `","num_prompts":20,"request_rate":2.0,"burstiness":0.5,"max_concurrency":null,"duration":12.0,"completed":20,"failed":0,"total_input_tokens":20000,"total_output_tokens":2000,"request_throughput":1.66,"output_throughput":166,"total_token_throughput":1800,"mean_ttft_ms":0.5,"median_ttft_ms":300.3,"mean_tpot_ms":17,"median_tpot_ms":16.8}`
	if err := os.WriteFile(res, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("simulate", "--gpu", "H100-SXM", "--vllm-cmd", "vllm serve "+m+" --max-model-len 8192", "--measured", res)
	if code != 1 || !strings.Contains(stderr, "mean_ttft_ms 0.5 ms is implausible") || !strings.Contains(stderr, "forward pass") {
		t.Errorf("simulate --measured (TTFT 0.5 ms for 15 GB at 3,350 GB/s): exit %d: %s", code, stderr)
	}
	seed, err := os.ReadFile("../../scenario/data/seed_measured.txt")
	if err != nil {
		t.Fatal(err)
	}
	row := "| Sustained decode | 8K | 1 | Valid | 179.7 | 184.7 | 746 ms |"
	if !strings.Contains(string(seed), row) {
		t.Fatalf("%q not in the seed's measured matrix", row)
	}
	mat := filepath.Join(dir, "m.txt")
	if err := os.WriteFile(mat, []byte(strings.Replace(string(seed), row, strings.Replace(row, "746 ms", "0.5 ms", 1), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI("matrix", "--measured", mat)
	if code != 1 || !strings.Contains(stderr, "decode 8K x 1: ttft_ms 0.5 is implausible") {
		t.Errorf("matrix --measured (TTFT 0.5 ms): exit %d: %s", code, stderr)
	}
}
