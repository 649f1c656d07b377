package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cli runs servesim and fails the test unless it exits 0; it returns stdout.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := runCLI(args...)
	if code != 0 {
		t.Fatalf("servesim %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// provenanceLines are the lines of a matrix's text output that say where its parameters come from
// and how wide its intervals are.
func provenanceLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Parameters' provenance") || strings.HasPrefix(l, "80% intervals") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestWrittenScenariosRoundTrip: every file servesim writes for itself to read (a scenario from
// import or config, a parameter file from fit --out, a plan) reads back to the same result. For
// each: write it, load it and write it again (the same bytes), and re-run a command on it (the
// same output, byte for byte, as on what it was written from, with the same parameter
// provenance and interval widths).
func TestWrittenScenariosRoundTrip(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs matrices and a fit (half a minute under the race detector; files, not concurrency)")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	// A model given as a path, relative to the directory the command runs in.
	if err := os.MkdirAll("models/llama-8b", 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(testdataRoot(t), "model", "hf", "testdata", "llama-3.1-8b", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	put(t, dir, "models/llama-8b/config.json", string(cfg))
	for _, d := range []string{"a", "b", "elsewhere"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	llama := "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 64 --max-model-len 32768"
	local := "vllm serve ./models/llama-8b --max-model-len 16384"
	// A scenario of the seed's with a [params] override, in a directory of its own.
	put(t, dir, "a/override.toml", strings.Replace(cli(t, "config"), "# frontend_ms_per_request = ", "frontend_ms_per_request = 9.5 #", 1))
	fitted := cli(t, "fit", "--free", "frontend_ms_per_request", "--starts", "1", "--out", "a/fit.toml")
	if !strings.Contains(fitted, "frontend_ms_per_request") {
		t.Fatalf("fit summary:\n%s", fitted)
	}
	m := regexp.MustCompile(`(?m)^frontend_ms_per_request = ([0-9.e+-]+) `).FindStringSubmatch(readFile(t, "a/fit.toml"))
	if m == nil {
		t.Fatalf("a/fit.toml lacks the fitted value:\n%s", readFile(t, "a/fit.toml"))
	}
	// The seed with the fitted value set: what loading the fit's file must give.
	put(t, dir, "a/fitted.toml", strings.Replace(cli(t, "config"), "# frontend_ms_per_request = ", "frontend_ms_per_request = "+m[1]+" #", 1))
	// The same for a fit to a vllm bench result file.
	result := filepath.Join(moduleRoot, "vllmbench", "testdata", "openai-infqps-concurrency16-GLM-5.3-Flash-NVFP4-20260914-103000.json")
	cli(t, "fit", "--measured", result, "--free", "frontend_ms_per_request", "--starts", "1", "--out", "a/bench-fit.toml")
	m = regexp.MustCompile(`(?m)^frontend_ms_per_request = ([0-9.e+-]+) `).FindStringSubmatch(readFile(t, "a/bench-fit.toml"))
	if m == nil {
		t.Fatalf("a/bench-fit.toml lacks the fitted value:\n%s", readFile(t, "a/bench-fit.toml"))
	}
	put(t, dir, "a/bench-fitted.toml", strings.Replace(cli(t, "config"), "# frontend_ms_per_request = ", "frontend_ms_per_request = "+m[1]+" #", 1))

	for _, c := range []struct {
		name string
		// write writes file (the flags that describe the scenario are given too: from)
		write []string
		file  string
		// from describes the same scenario without the file; rerun is run on both.
		from  []string
		rerun []string
	}{
		{"import", []string{"import", "vllm", "--gpu", "H100", "-o", "a/import.toml", llama}, "a/import.toml",
			[]string{"--gpu", "H100", "--vllm-cmd", llama}, []string{"matrix", "--measured", "none"}},
		{"import, model path", []string{"import", "vllm", "--gpu", "L40S", "-o", "b/local.toml", local}, "b/local.toml",
			[]string{"--gpu", "L40S", "--vllm-cmd", local}, []string{"matrix", "--measured", "none"}},
		{"config, seed", []string{"config", "-o", "a/seed.toml"}, "a/seed.toml", nil, []string{"matrix", "--measured", "none"}},
		{"config, uncalibrated", []string{"config", "--uncalibrated", "-o", "b/prior.toml"}, "b/prior.toml",
			[]string{"--uncalibrated"}, []string{"matrix", "--measured", "none"}},
		{"config, [params] and --params from another directory", []string{"config", "--config", "a/override.toml", "--params", "a/fit.toml", "-o", "b/override.toml"}, "b/override.toml",
			[]string{"--config", "a/override.toml", "--params", "a/fit.toml"}, []string{"matrix", "--measured", "none"}},
		{"fit --out", nil, "a/fit.toml", []string{"--config", "a/fitted.toml"}, []string{"matrix", "--measured", "none"}},
		{"fit --out, vllm bench result", nil, "a/bench-fit.toml", []string{"--config", "a/bench-fitted.toml"}, []string{"simulate", "--measured", result}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.write != nil {
				cli(t, c.write...)
			}
			written := readFile(t, c.file)
			want := cli(t, append(c.rerun, c.from...)...)
			load := []string{"--config", c.file}
			if strings.HasPrefix(c.name, "fit") {
				load = []string{"--params", c.file}
			} else {
				// Loaded from another directory and written again: the same bytes.
				again := filepath.Join(dir, filepath.Dir(c.file), "again.toml")
				t.Chdir(filepath.Join(dir, "elsewhere"))
				cli(t, "config", "--config", filepath.Join(dir, c.file), "-o", again)
				t.Chdir(dir)
				if got := readFile(t, again); got != written {
					t.Errorf("%s written again differs:\n--- first\n%s\n--- again\n%s", c.file, written, got)
				}
				if strings.Contains(written, "\n[params]\n") && regexp.MustCompile(`(?m)^[a-z_]+ = .*source: (generic|Hopper|Ada|Blackwell|calibrated|transferred)`).MatchString(written) {
					t.Errorf("%s sets a prior or a calibrated value under [params]:\n%s", c.file, written)
				}
			}
			got := cli(t, append(c.rerun, load...)...)
			if strings.HasPrefix(c.name, "fit") {
				// The run it is compared with sets the fitted value in a scenario: only the line
				// naming where the parameters come from may differ.
				drop := regexp.MustCompile(`(?m)^Parameters   .*\n`)
				got, want = drop.ReplaceAllString(got, ""), drop.ReplaceAllString(want, "")
			}
			if got != want {
				t.Errorf("%s on %s differs from the run it was written from:\n--- from %v\n%s\n--- loaded\n%s", strings.Join(c.rerun, " "), c.file, c.from, want, got)
			}
			if p := provenanceLines(want); c.rerun[0] == "matrix" && (p == "" || p != provenanceLines(got)) {
				t.Errorf("provenance %q, loaded %q", p, provenanceLines(got))
			}
		})
	}
}

// TestWrittenPlanRoundTrip: a plan written as JSON reads back (merge) to the same table, and
// --explain-row on the saved plan prints the row the plan itself prints.
func TestWrittenPlanRoundTrip(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	table := cli(t, smallPlan...)
	cli(t, append(smallPlan, "--format", "json", "-o", file)...)
	if got := cli(t, "merge", file); got != table {
		t.Errorf("the saved plan, read back, prints another table:\n--- plan\n%s\n--- merge\n%s", table, got)
	}
	if got, want := cli(t, "plan", "--from", file, "--explain-row", "1"), cli(t, append(smallPlan, "--explain-row", "1")...); got != want {
		t.Errorf("--explain-row on the saved plan differs:\n--- plan\n%s\n--- saved\n%s", want, got)
	}
}

// testdataRoot is the module's root directory (the tests run in cmd/servesim, before any Chdir).
func testdataRoot(t *testing.T) string {
	t.Helper()
	return moduleRoot
}

var moduleRoot = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Join(wd, "..", "..")
}()
