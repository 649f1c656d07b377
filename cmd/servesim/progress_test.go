package main

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestQuietCommand: --quiet leaves stderr empty on a successful run, and its stdout is the same.
func TestQuietCommand(t *testing.T) {
	args := []string{"simulate", "--workload", "chat", "--requests", "40", "--format", "csv"}
	var out1, err1, out2, err2 bytes.Buffer
	if code := run(args, &out1, &err1); code != 0 {
		t.Fatalf("exit %d: %s", code, err1.String())
	}
	if code := run(append(args, "--quiet"), &out2, &err2); code != 0 {
		t.Fatalf("--quiet: exit %d: %s", code, err2.String())
	}
	if err1.Len() == 0 || err2.Len() != 0 {
		t.Errorf("stderr without --quiet %q, with %q (want something, then nothing)", err1.String(), err2.String())
	}
	if out1.String() != out2.String() {
		t.Errorf("--quiet changed the results")
	}
	// Every command that reports on stderr is silent with --quiet (matrix printed its scenario
	// and parameter line; the parameter source is in its CSV and JSON).
	for _, args := range [][]string{{"matrix", "--format", "csv"}, {"capacity"}, {"explain", "--context", "8K", "--concurrency", "2"}, {"report", "--out", filepath.Join(t.TempDir(), "r.html")},
		{"validate", "--filter", "isim-llama2-7b-tp1-general", "--source", "inference-sim-training"}} {
		var out, errb bytes.Buffer
		if code := run(append(args, "--quiet"), &out, &errb); code != 0 || errb.Len() != 0 {
			t.Errorf("%v --quiet: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
