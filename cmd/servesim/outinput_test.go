package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutNeverReplacesAnInput: --out naming one of the command's inputs (a flag's file or an
// argument) is a usage error and the input is left as it was.
func TestOutNeverReplacesAnInput(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.toml")
	var out, errb bytes.Buffer
	if code := run([]string{"config", "--out", sc}, &out, &errb); code != 0 {
		t.Fatalf("config: %d %s", code, errb.String())
	}
	before, _ := os.ReadFile(sc)
	for _, args := range [][]string{
		{"matrix", "--config", sc, "--out", sc},
		{"capacity", "--config", sc, "-o", sc},
	} {
		errb.Reset()
		code := run(args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "is also an input (--config)") {
			t.Errorf("%v: exit %d, %s", args, code, errb.String())
		}
		if after, _ := os.ReadFile(sc); !bytes.Equal(before, after) {
			t.Errorf("%v: the input was changed", args)
		}
	}
}
