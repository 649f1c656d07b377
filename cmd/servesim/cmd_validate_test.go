package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const corpusExcerpt = "../../validate/testdata/corpus_excerpt.csv"

func TestValidate(t *testing.T) {
	// Cheap rows: the offline 405B batch of 4 and the DeepSeek-R1 closed loop are left out.
	args := []string{"validate", corpusExcerpt, "--filter", "case_id~(n4|c128)$", "--source", "dstack-benchmarks", "--format", "json", "--workers", "2"}
	code, out, errs := runCLI(args...)
	if code != 0 {
		t.Fatalf("validate: exit %d: %s", code, errs)
	}
	var rep struct {
		Cases []struct {
			ID        string `json:"case_id"`
			Expressed bool   `json:"expressed"`
		} `json:"cases"`
		Sources []struct {
			Source string `json:"source"`
			Rows   int    `json:"rows"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(rep.Cases) != 3 || len(rep.Sources) != 1 || rep.Sources[0].Rows != 3 {
		t.Errorf("cases %+v sources %+v", rep.Cases, rep.Sources)
	}
	for _, c := range rep.Cases {
		if !c.Expressed {
			t.Errorf("%s not expressed", c.ID)
		}
	}
	// Three rows take well under the two seconds before which progress stays silent: the stderr
	// has the run's summary lines only.
	if strings.Contains(errs, "simulations") || !strings.Contains(errs, "3 of 3 rows expressed") {
		t.Errorf("stderr of a short run: %q, want the summary and no progress lines", errs)
	}
	code, out, _ = runCLI("validate", corpusExcerpt, "--filter", "case_id~n4$", "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "case_id,source,scoring,expressed,reason_class,reason,metric,predicted,measured,err_pct,primary,scored\n") ||
		!strings.Contains(out, ",output_tok_s,") {
		t.Errorf("csv: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("validate", corpusExcerpt, "--filter", "case_id~n4$")
	if code != 0 || !strings.Contains(out, "1 of 1 rows expressed") || !strings.Contains(out, "architecture transcribed, not a config copy") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

// TestValidateResultFile: a vllm bench serve result file against a server given by flags.
func TestValidateResultFile(t *testing.T) {
	code, out, errs := runCLI("validate", "../../vllmbench/testdata/openai-4.0qps-GLM-5.3-Flash-NVFP4-20260914-101500.json", "--gpu", "RTX-PRO-6000-Server",
		"--vllm-cmd", "vllm serve nvidia/GLM-5.3-Flash-NVFP4 -tp 4 --enable-expert-parallel --kv-cache-dtype fp8 --max-model-len 65536")
	if code != 0 || !strings.Contains(out, "vllm-bench-result  1     1") || !strings.Contains(out, "ttft") && !strings.Contains(out, "TTFT") {
		t.Errorf("result file: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestValidateUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"validate", corpusExcerpt, "--filter", "nope=1"}, 2, `no column "nope"`},
		{[]string{"validate", corpusExcerpt, "--format", "xml"}, 2, "--format"},
		{[]string{"validate", corpusExcerpt, "--params", "x.toml", "--uncalibrated"}, 2, "contradict"},
		{[]string{"validate", "no-such-file.csv"}, 1, "no-such-file.csv"},
		{[]string{"validate", "../../vllmbench/testdata/none.json"}, 1, "none.json: no such file"},
		// Corpus rows carry their own server: a server flag without a result file is refused.
		{[]string{"validate", corpusExcerpt, "--gpu", "H100"}, 2, "--gpu applies only to vllm bench result files"},
		{[]string{"validate", corpusExcerpt, "--mean-acceptance-length", "2"}, 2, "--mean-acceptance-length applies only to vllm bench result files"},
	} {
		code, _, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}
