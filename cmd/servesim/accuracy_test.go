package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccuracyPage holds docs/accuracy.md to the code: its generated validate block must be what
// `servesim validate` (the shipped corpus, no arguments) prints now before the per-case listing,
// as scripts/accuracy.sh writes it.
func TestAccuracyPage(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("simulates the whole corpus (about 15 s of CPU)")
	}
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "accuracy.md"))
	if err != nil {
		t.Fatal(err)
	}
	block, ok := generatedBlock(string(page), "validate")
	if !ok {
		t.Fatal("docs/accuracy.md: no generated validate block (BEGIN/END markers with a text fence)")
	}
	code, out, errs := runCLI("validate", "--quiet")
	if code != 0 {
		t.Fatalf("servesim validate: exit %d: %s", code, errs)
	}
	if i := strings.Index(out, "\nPer case"); i >= 0 {
		out = out[:i+1]
	}
	if block != out {
		gl, wl := strings.Split(block, "\n"), strings.Split(out, "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("docs/accuracy.md differs from 'servesim validate' at block line %d:\n page: %s\n  now: %s\nrun scripts/accuracy.sh validate", i+1, g, w)
			}
		}
	}
}

// generatedBlock is the text inside the ```text fence between the page's markers for name.
func generatedBlock(page, name string) (string, bool) {
	begin := "<!-- BEGIN generated: " + name + " -->\n```text\n"
	end := "```\n<!-- END generated: " + name + " -->"
	i := strings.Index(page, begin)
	if i < 0 {
		return "", false
	}
	rest := page[i+len(begin):]
	j := strings.Index(rest, end)
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

func TestGeneratedBlock(t *testing.T) {
	page := "x\n<!-- BEGIN generated: v -->\n```text\na\nb\n```\n<!-- END generated: v -->\ny\n"
	if got, ok := generatedBlock(page, "v"); !ok || got != "a\nb\n" {
		t.Errorf("got %q %v, want \"a\\nb\\n\" true", got, ok)
	}
	if _, ok := generatedBlock(page, "w"); ok {
		t.Error("found a block that is not there")
	}
}
