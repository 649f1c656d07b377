package leakcheck

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// leakPatterns are what a file of the product must not say: absolute paths of a development
// machine, and references to a tracker's items (the word followed by a number, or in the
// possessive after "the"). They are assembled from parts so that this file does not match itself.
func leakPatterns() []*regexp.Regexp {
	w := "/" + "work/"
	return []*regexp.Regexp{
		regexp.MustCompile(regexp.QuoteMeta(w)),
		regexp.MustCompile(regexp.QuoteMeta("/" + "tmp/servesim")),
		regexp.MustCompile(regexp.QuoteMeta("/" + "home/x/")),
		regexp.MustCompile(`(?i)\b` + "iss" + `ues?[ -]\d+`),
		regexp.MustCompile(`(?i)\bthe ` + "iss" + `ue's\b`),
	}
}

// skipped reports whether a tracked file is outside the check: go.sum (module hashes), the CI
// scripts (which name their scratch files) and docs/history (kept as written, if present).
func skipped(rel string) bool {
	return rel == "go.sum" || strings.HasPrefix(rel, ".ci/") || strings.HasPrefix(rel, "docs/history/")
}

// TestNoLeaks reads every tracked file of the repository (git ls-files; every file under the
// module root when git is not available) and fails on a line that names a development machine's
// path or a tracker item.
func TestNoLeaks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", root, err)
	}
	files := trackedFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("found only %d files under %s: is the listing working?", len(files), root)
	}
	pats := leakPatterns()
	for _, rel := range files {
		if skipped(rel) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the working tree, not yet in the index
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, p := range pats {
				if m := p.FindString(line); m != "" {
					t.Errorf("%s:%d: %q: the product speaks of itself only (no machine paths, no tracker items)", rel, i+1, m)
				}
			}
		}
	}
}

func TestLeakPatterns(t *testing.T) {
	bad := []string{"see " + "/" + "work/shared/x.csv", "as in " + "Iss" + "ue 14", "the " + "iss" + "ue-16 trace", "the " + "iss" + "ue's band", "/" + "tmp/servesim-x"}
	good := []string{"a GitHub issue " + "#870 comment", "tissue 12", "issues", "/tmp/x.log", "homework/"}
	pats := leakPatterns()
	match := func(s string) bool {
		for _, p := range pats {
			if p.MatchString(s) {
				return true
			}
		}
		return false
	}
	for _, s := range bad {
		if !match(s) {
			t.Errorf("%q: not caught", s)
		}
	}
	for _, s := range good {
		if match(s) {
			t.Errorf("%q: caught, but it is not a leak", s)
		}
	}
}

// trackedFiles lists the repository's tracked files relative to root.
func trackedFiles(t *testing.T, root string) []string {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil && len(out) > 0 {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
