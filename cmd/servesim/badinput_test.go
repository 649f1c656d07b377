package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile puts a test input in the test's temp dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBadInputs runs the CLI on bad input and checks each gets a clear message and the right exit
// status (2 usage, 1 failed run), and never a Go stack trace. The table doubles as the list of
// bad inputs in the robustness issue; `go test -run TestBadInputs -v` prints every message.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	unknownKey := writeFile(t, dir, "unknown.toml", "[engine]\nmax_num_seq = 4\n")
	negSeqs := writeFile(t, dir, "scenario.toml", "seed = 1\n\n[engine]\nmax_num_seqs = -4\n")
	// A scenario file names its model and GPU; its engine flags default to vLLM's.
	glm := func(gpu, engine string) string {
		return "[model]\nname = \"nvidia/GLM-5.3-Flash-NVFP4\"\n\n[hardware]\ngpu = \"" + gpu + "\"\n\n[engine]\ntensor_parallel_size = 4\nenable_expert_parallel = true\n" + engine
	}
	mi300 := writeFile(t, dir, "mi300x.toml", glm("MI300X", "max_model_len = 131072\n"))
	lowUtil := writeFile(t, dir, "lowutil.toml", glm("RTX-PRO-6000-Server", "max_model_len = 1048576\ngpu_memory_utilization = 0.45\n"))
	longCtx := writeFile(t, dir, "long.toml", glm("RTX-PRO-6000-Server", "max_model_len = 4194304\n"))
	badParams := writeFile(t, dir, "params.toml", "[params]\nmem_bw_eff = 1.5\n")
	garbage := writeFile(t, dir, "garbage.txt", "this is not a benchmark page\n| a | b |\n")
	otherProto := writeFile(t, dir, "other.csv", "phase,context,context_tokens,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,avg_active,completed,output_tokens,measured_s\ndecode,8K,8192,3,Valid,100,50,100,10,3,0,3000,30\n")
	badTOML := writeFile(t, dir, "syntax.toml", "[engine\nmax_num_seqs = 4\n")
	bigCtx := writeFile(t, dir, "bigctx.toml", glm("RTX-PRO-6000-Server", "max_model_len = 1048576\n")+"\n[protocol]\ncontexts = [\"8K\", \"2048K\"]\n")
	noModel := writeFile(t, dir, "nomodel.toml", "[hardware]\ngpu = \"B200\"\n")
	plan := func(name, shard string, idx ...int) string {
		var rs []string
		for _, i := range idx {
			rs = append(rs, fmt.Sprintf(`{"index":%d,"status":"pruned","stage":"memory"}`, i))
		}
		return writeFile(t, dir, name, fmt.Sprintf(`{"servesim_plan":1,"fingerprint":"f","rows":4,"shard":%s,"results":[%s]}`, shard, strings.Join(rs, ",")))
	}
	shard1 := plan("shard1.json", `{"index":1,"count":2}`, 1, 3)
	shard5of2 := plan("shard5of2.json", `{"index":5,"count":2}`)
	shardOf0 := plan("shardof0.json", `{"index":0,"count":0}`)
	shardOfNeg := plan("shardofneg.json", `{"index":0,"count":-1}`)
	shardHuge := plan("shardhuge.json", `{"index":0,"count":1000000000000}`)
	shardDup := plan("sharddup.json", `{"index":0,"count":2}`, 0, 0)
	shardNegRow := plan("shardnegrow.json", `{"index":0,"count":2}`, 0, -1)
	gpuEntry := "[[gpu]]\nname = \"RTX-PRO-6000-Server\"\nmemory_gib = 95.59\nbf16_tflops = 480\nfp8_tflops = 960\nfp4_tflops = 1920\nfp4_formats = [\"nvfp4\"]\nlink = \"pcie\"\nlink_gbps = 64\nlink_latency_us = 10\n"
	notDir := writeFile(t, dir, "notadir", "")
	nanGPU := writeFile(t, dir, "nangpu.toml", gpuEntry+"bandwidth_gbps = nan\n")
	hugeGPU := writeFile(t, dir, "hugegpu.toml", strings.Replace(gpuEntry, "95.59", "1e300", 1)+"bandwidth_gbps = 1597\n")
	negPrice := writeFile(t, dir, "negprice.toml", gpuEntry+"bandwidth_gbps = 1597\nprice_per_hour = -1\n")
	nanScenario := writeFile(t, dir, "nanscenario.toml", strings.Replace(glm("RTX-PRO-6000-Server", "max_model_len = 1048576\n"), "[hardware]\n", "[hardware]\ngpu_file = \"nangpu.toml\"\n", 1))
	nanPoll := writeFile(t, dir, "nanpoll.toml", glm("RTX-PRO-6000-Server", "max_model_len = 1048576\n")+"\n[protocol]\npoll_s = nan\n")
	longLine := writeFile(t, dir, "longline.csv", "arrival_s,input_tokens,output_tokens\n0,100,10\n"+strings.Repeat("9", 2<<20)+",100,10\n")
	negMeasured := writeFile(t, dir, "negmeasured.csv", "phase,context,context_tokens,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,avg_active,completed,output_tokens,measured_s\nprefill,8K,8192,1,Valid,-12677.8,,646.2,,,1,,\n")
	negSeedScenario := writeFile(t, dir, "negseed.toml", "seed = -1\n")
	negSeedWorkload := writeFile(t, dir, "negseedwl.toml", "kind = \"closed\"\nseed = -1\n[lengths]\ninput_tokens = 100\noutput_tokens = 10\n[closed]\nrequests = 4\nconcurrency = 2\n")
	wrapTP := writeFile(t, dir, "wraptp.toml", strings.Replace(glm("RTX-PRO-6000-Server", "max_model_len = 1048576\ndata_parallel_size = 4\n"), "tensor_parallel_size = 4", "tensor_parallel_size = 4611686018427387905", 1))
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "Usage"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"matrix", "--format", "xml"}, 2, `--format "xml": want table, markdown, csv or json`},
		{[]string{"matrix", "--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"capacity", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"matrix", "--config", filepath.Join(dir, "missing.toml")}, 1, "missing.toml: no such file"},
		{[]string{"matrix", "--config", unknownKey}, 1, `unknown.toml:2: unknown key "engine.max_num_seq"`},
		{[]string{"matrix", "--config", negSeqs}, 1, "scenario.toml:4: engine.max_num_seqs = -4: must be a positive integer"},
		{[]string{"matrix", "--config", badTOML}, 1, "syntax.toml: line 2: expected"},
		{[]string{"capacity", "--config", mi300}, 1, "vLLM does not run NVFP4"},
		{[]string{"capacity", "--config", noModel}, 1, "model: not given: want a name"},
		{[]string{"capacity", "--config", lowUtil}, 1, "weights need"},
		{[]string{"capacity", "--config", longCtx}, 1, "less than one request of max_model_len 4194304"},
		{[]string{"matrix", "--config", bigCtx, "--measured", "none"}, 1, "protocol.contexts[1] = 2048K: 2097152 tokens do not fit max_model_len 1048576"},
		{[]string{"explain", "--context", "8Q"}, 2, `--context: context "8Q"`},
		{[]string{"explain", "--concurrency", "0"}, 2, "--concurrency 0: must be a positive integer"},
		{[]string{"explain", "--context", "2M"}, 1, "--context 2M: 2097152 tokens do not fit max_model_len 1048576 with 4096 output tokens"},
		{[]string{"matrix", "--params", filepath.Join(dir, "nope.toml")}, 1, "--params: open"},
		{[]string{"matrix", "--params", badParams}, 1, "params.mem_bw_eff = 1.5"},
		{[]string{"matrix", "--params", badParams, "--uncalibrated"}, 2, "--params and --uncalibrated contradict"},
		{[]string{"matrix", "--ready-timeout-s", "5000"}, 2, "--ready-timeout-s: protocol.ready_timeout_s = 5000: must be in [0, 3600]"},
		{[]string{"matrix", "--ready-timeout-s", "-5"}, 2, `invalid argument "-5" for "--ready-timeout-s" flag: want seconds >= 0`},
		{[]string{"matrix", "--ready-timeout-s", "nan"}, 2, `"--ready-timeout-s" flag: want seconds >= 0`},
		{[]string{"fit", "--exclude", "phase=x"}, 2, "--exclude: filter"},
		{[]string{"capacity", "--vllm-cmd", "vllm serve m --max-num-seqs abc"}, 2, `--max-num-seqs "abc": want a positive integer`},
		{[]string{"capacity", "--gpu", "H100", "--vllm-cmd", "vllm serve glm-5.3-flash --tensor-parallel-size 3 --max-model-len 8192"}, 1, "tensor_parallel_size = 3 does not divide"},
		{[]string{"capacity", "--vllm-cmd", "vllm serve glm-5.3-flash"}, 1, "hardware.gpu: not given: want a GPU name (--gpu NAME"},
		{[]string{"capacity", "--gpu", "B200", "--vllm-cmd", "vllm serve glm-5.3-flash"}, 1, "engine.max_model_len: not given, and model \"glm-5.3-flash\" does not say its context length"},
		{[]string{"capacity", "--gpu", "B200", "--vllm-cmd", "vllm serve meta-llama/Llama-9-1T"}, 1, "huggingface-cli download meta-llama/Llama-9-1T config.json"},
		{[]string{"capacity", "--gpu", "B200", "--model-config", "../../model/hf/testdata/llama-3.1-8b", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B -pp 2 --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3}'"}, 1, "pipeline_parallel_size = 2 with engine.speculative.method = \"ngram\": not simulated yet"},
		{[]string{"capacity", "--gpu", "B200", "--model-config", "../../model/hf/testdata/llama-3.1-8b", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B --max-model-len 1M"}, 1, "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"},
		{[]string{"capacity", "--gpus", "-2"}, 2, "--gpus -2"},
		{[]string{"capacity", "--vllm-version", "latest"}, 2, `--vllm-version "latest"`},
		{[]string{"capacity", "--vllm-cmd", "vllm serve m --speculative-config '{\"method\": dflash}'"}, 2, "--speculative-config"},
		{[]string{"import", "vllm", "--", "vllm serve 'unterminated"}, 1, "unterminated single quote"},
		// A misspelt vLLM flag is refused as vLLM refuses it, not simulated as TP 1.
		{[]string{"simulate", "--workload", "chat", "--gpu", "H100", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-paralel-size 2"}, 2,
			"--tensor-paralel-size 2 (did you mean --tensor-parallel-size?)"},
		{[]string{"import", "vllm", "--gpu", "H100", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max_num_seq", "8"}, 2, "did you mean --max-num-seqs?"},
		{[]string{"config", "--gpu", "H100", "--vllm-cmd", "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora"}, 2, "unrecognized arguments: --enable-lora"},
		{[]string{"matirx"}, 2, `unknown command "matirx": did you mean "matrix"?`},
		{[]string{"matrix", "--uncalibratd"}, 2, "unknown flag: --uncalibratd (did you mean --uncalibrated?)"},
		{[]string{"import", "vllm"}, 2, "no vllm command given"},
		{[]string{"capacity", "--gpu", "RTX-PRO-6000-Server", "--vllm-cmd", "vllm serve m --speculative-model \xf90"}, 2, "not valid UTF-8"},
		{[]string{"matrix", "--measured", filepath.Join(dir, "absent.txt")}, 1, "--measured: "},
		{[]string{"matrix", "--measured", garbage}, 1, "garbage.txt"},
		{[]string{"matrix", "--measured", otherProto}, 1, "is not one the scenario's protocol runs"},
		{[]string{"plot", "--measured", otherProto, "--out", filepath.Join(dir, "figs")}, 1, "is not one the scenario's protocol runs"},
		{[]string{"matrix", "--out", filepath.Join(dir, "no", "such", "dir.csv")}, 1, "cannot write"},
		{[]string{"fit", "--train", "speed>3"}, 2, `unknown field "speed"`},
		{[]string{"fit", "--kv-tokens", "-5"}, 2, "--kv-tokens -5"},
		{[]string{"fit", "--free", "warp_drive"}, 2, `--free: unknown parameter "warp_drive"`},
		{[]string{"fit", "--weights", "ttft=-1"}, 2, "want a non-negative number"},
		{[]string{"fit", "--method", "annealing"}, 2, `--method "annealing": want lm, bfgs or nelder-mead`},
		{[]string{"fit", "--starts", "0"}, 2, "--starts 0: must be a positive integer"},
		{[]string{"merge", shard5of2, shard1}, 1, `shard5of2.json: field "shard": shard 5/2: want i/n with 0 <= i < n <= 65536`},
		{[]string{"merge", shardOf0, shard1}, 1, `shardof0.json: field "shard": shard 0/0`},
		{[]string{"merge", shardOfNeg, shard1}, 1, `shardofneg.json: field "shard": shard 0/-1`},
		{[]string{"merge", shardHuge, shard1}, 1, `shardhuge.json: field "shard": shard 0/1000000000000`},
		{[]string{"merge", shardDup, shard1}, 1, `sharddup.json: results[1]: field "index" = 0: row given twice`},
		{[]string{"merge", shardNegRow, shard1}, 1, `shardnegrow.json: results[1]: field "index" = -1: want 0 <= index < rows (4)`},
		{[]string{"plan", "--context", "128K", "--users", "16", "--shard", "0/100000"}, 2, "want i/n with 0 <= i < n <= 65536"},
		{[]string{"capacity", "--config", nanScenario}, 1, "nangpu.toml: gpu[0]: gpu \"RTX-PRO-6000-Server\": bandwidth_gbps = NaN: want a finite number in 10..100000 GB/s"},
		{[]string{"plan", "--context", "128K", "--users", "16", "--gpu-catalog", nanGPU}, 1, "bandwidth_gbps = NaN"},
		{[]string{"hardware", "list", "--gpu-catalog", hugeGPU}, 1, "memory_gib = 1e+300: want a finite number in 0.5..4096 GiB"},
		{[]string{"hardware", "list", "--gpu-catalog", negPrice}, 1, "price_per_hour = -1: want a finite number in 0..10000 USD per GPU-hour"},
		{[]string{"matrix", "--config", nanPoll}, 1, "nanpoll.toml:13: protocol.poll_s = NaN: must be positive"},
		{[]string{"capacity", "--config", "/dev/zero"}, 1, "/dev/zero: it is a character device, not a regular file: servesim reads only regular files"},
		{[]string{"matrix", "--measured", "/dev/zero"}, 1, "/dev/zero: it is a character device"},
		{[]string{"hardware", "list", "--gpu-catalog", "/dev/zero"}, 1, "/dev/zero: it is a character device"},
		{[]string{"simulate", "--workload", longLine}, 1, "longline.csv: line 3: longer than 1 MiB"},
		{[]string{"matrix", "--measured", negMeasured}, 1, "negmeasured.csv: want a consistent matrix: prefill[0] (prefill 8K): total_tok_s = -12677.8: want a finite number >= 0"},
		{[]string{"config", "--config", negSeedScenario}, 1, "negseed.toml:1: seed = -1: want a non-negative integer"},
		{[]string{"simulate", "--workload", negSeedWorkload}, 1, "negseedwl.toml:2: seed = -1: want a non-negative integer"},
		{[]string{"matrix", "--seed", "-5"}, 2, `invalid argument "-5" for "--seed" flag: want a non-negative integer`},
		{[]string{"simulate", "--seed", "-1"}, 2, `"--seed" flag: want a non-negative integer`},
		{[]string{"fit", "--workers", "-1"}, 2, "--workers -1: want a positive number of parallel simulations (or 0: all CPUs)"},
		{[]string{"fit", "--max-iter", "-1"}, 2, "--max-iter -1: want a positive number of iterations per start (or 0: the method's)"},
		{[]string{"plan", "--context", "128K", "--users", "16", "--max-gpus", "0"}, 2, "--max-gpus 0: want a number of GPUs in 1..4096"},
		{[]string{"plan", "--context", "128K", "--users", "16", "--spec-methods", "medusa"}, 2, `--spec-methods "medusa": want auto, mtp, ngram`},
		{[]string{"plan", "--context", "128K", "--users", "16", "--workers", "-1"}, 2, "--workers -1: want a positive number"},
		{[]string{"plan", "--context", "128K", "--users", "16", "--top", "0"}, 2, "--top 0: want a positive number of layouts"},
		{[]string{"plan", "--context", "128K", "--users", "16", "--explain-row", "-5"}, 2, "--explain-row -5: want a row index >= 0"},
		{[]string{"merge", "--top", "-1", shard1}, 2, "--top -1: want a positive number of layouts"},
		// The buyer's-view flags: --rate/--requests on a --workload, --plot, report --plan,
		// --exhaustive, --quiet.
		{[]string{"plan", "--workload", "chat", "--rate", "-1"}, 2, "--rate -1: want a positive number of requests per second"},
		{[]string{"plan", "--workload", "chat", "--rate", "nan"}, 2, "--rate NaN: want a positive number of requests per second"},
		{[]string{"plan", "--context", "8K", "--users", "2", "--rate", "3"}, 2, "--rate and --requests change a --workload"},
		{[]string{"plan", "--workload", "chat", "--requests", "0"}, 2, "--requests 0: want a positive number of requests"},
		{[]string{"plan", "--workload", "chat", "--exhaustive=maybe"}, 2, `invalid argument "maybe" for "--exhaustive" flag`},
		{[]string{"plan", "--context", "8K", "--users", "2", "--gpu-kinds", "H200", "--plot", notDir, "--quiet"}, 1, "notadir: not a directory"},
		{[]string{"simulate", "--workload", "chat", "--rate", "0"}, 2, "--rate 0: want a positive number of requests per second"},
		{[]string{"simulate", "--workload", "chat", "--requests", "-5"}, 2, "--requests -5: want a positive number of requests"},
		{[]string{"simulate", "--workload", "chat", "--requests", "5", "--plot", notDir}, 1, "notadir: not a directory"},
		{[]string{"simulate", "--quiet=2"}, 2, `invalid argument "2" for "-q, --quiet" flag`},
		{[]string{"report", "--rate", "2"}, 2, "--rate and --requests change a --workload"},
		{[]string{"report", "--workload", "chat", "--rate", "inf"}, 2, "--rate +Inf: want a positive number of requests per second"},
		{[]string{"report", "--plan", notDir}, 1, "--plan: " + notDir + ": not a servesim plan"},
		{[]string{"report", "--plan", filepath.Join(dir, "absent-plan.json")}, 1, "--plan: "},
		{[]string{"matrix", "--compare"}, 2, "--compare: only with --format csv"},
		{[]string{"matrix", "--compare", "--format", "json"}, 2, "--compare: only with --format csv"},
		{[]string{"workload"}, 2, "give --example, or one workload file or preset"},
		{[]string{"workload", "--example", "chat"}, 2, `--example takes no argument (got "chat")`},
		{[]string{"workload", "nosuchpreset"}, 2, "nosuchpreset"},
		{[]string{"workload", filepath.Join(dir, "absent.toml")}, 1, "absent.toml"},
		{[]string{"capacity", "--config", wrapTP}, 1, "engine.tensor_parallel_size = 4611686018427387905: must be at most 4096"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		msg := errb.String()
		t.Logf("servesim %s\n    -> exit %d: %s", strings.Join(c.args, " "), code, strings.TrimSpace(firstLine(msg)))
		if code != c.code {
			t.Errorf("servesim %v: exit %d, want %d; stderr:\n%s", c.args, code, c.code, msg)
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("servesim %v: stderr does not mention %q:\n%s", c.args, c.want, msg)
		}
		if strings.Contains(msg, "goroutine ") || strings.Contains(msg, "panic") {
			t.Errorf("servesim %v: stack trace reached the user:\n%s", c.args, msg)
		}
	}
}

// firstLine picks the error line from stderr (notes and progress lines come first).
func firstLine(s string) string {
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "servesim ") && !strings.HasPrefix(l, "servesim fit: seed") && !strings.HasPrefix(l, "servesim: ") {
			return l
		}
	}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return s
}

func TestHelpEverywhere(t *testing.T) {
	for _, c := range commands() {
		var out, errb bytes.Buffer
		if code := run([]string{c.Name, "--help"}, &out, &errb); code != 0 {
			t.Errorf("%s --help: exit %d", c.Name, code)
		}
		if !strings.Contains(out.String(), "Usage: servesim "+c.Name) {
			t.Errorf("%s --help: no usage line:\n%s", c.Name, out.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "matrix") {
		t.Errorf("help: exit %d, output %q", code, out.String())
	}
}
