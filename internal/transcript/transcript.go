// Package transcript runs the command transcripts of servesim's tests. A transcript is a text
// file of commands, each followed by a line "----" and the output it should give, up to a blank
// line; comments (lines starting with #) and blank lines between commands are kept. A package's
// test supplies the harness that runs one command and returns its output; with -update the
// files are rewritten with the outputs got, so that a reviewed change of behaviour is one diff.
package transcript

import (
	"bufio"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/servesim/servesim/internal/fsutil"
)

// RunDir runs every testdata/*.txt file of the test's package as a subtest named after the file,
// each with a fresh harness from newRun. It fails when there is no transcript.
func RunDir(t *testing.T, update bool, newRun func() func(*testing.T, string) string) {
	t.Helper()
	files, _ := filepath.Glob("testdata/*.txt")
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			Run(t, f, update, newRun())
		})
	}
}

// Run runs the commands of file f through run and compares each output with the expected one
// (an error names the file, the command's line and both outputs), or, with update, rewrites the
// file with the outputs got.
func Run(t *testing.T, f string, update bool, run func(*testing.T, string) string) {
	t.Helper()
	data, err := fsutil.ReadFile(f, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	var rewritten strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	line := 0
	for sc.Scan() {
		line++
		cmd := sc.Text()
		if strings.TrimSpace(cmd) == "" || strings.HasPrefix(cmd, "#") {
			rewritten.WriteString(cmd + "\n")
			continue
		}
		cmdLine := line
		if !sc.Scan() || sc.Text() != "----" {
			t.Fatalf("%s:%d: command %q not followed by ----", f, cmdLine, cmd)
		}
		line++
		var want strings.Builder
		for sc.Scan() {
			line++
			if sc.Text() == "" {
				break
			}
			want.WriteString(sc.Text() + "\n")
		}
		got := run(t, cmd)
		if !update && got != want.String() {
			t.Errorf("%s:%d: %s\ngot:\n%swant:\n%s", f, cmdLine, cmd, got, want.String())
		}
		rewritten.WriteString(cmd + "\n----\n" + got + "\n")
	}
	if update {
		if err := fsutil.WriteFile(f, []byte(rewritten.String())); err != nil {
			t.Fatal(err)
		}
	}
}

// Args reads a command's key=value fields (a field without "=" is a key with an empty value).
func Args(fields []string) map[string]string {
	m := map[string]string{}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}

// Int is argument k as an integer, def when absent; a malformed value fails the test.
func Int(t *testing.T, a map[string]string, k string, def int) int {
	t.Helper()
	v, ok := a[k]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", k, v, err)
	}
	return n
}

// Num is argument k as a number, def when absent; a malformed value fails the test.
func Num(t *testing.T, a map[string]string, k string, def float64) float64 {
	t.Helper()
	v, ok := a[k]
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", k, v, err)
	}
	return f
}
