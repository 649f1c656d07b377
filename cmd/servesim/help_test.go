package main

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// placeholder is a value a help file names, {{name}}.
var placeholder = regexp.MustCompile(`\{\{[a-z0-9-]+\}\}`)

// TestHelpFiles: every command has a help file with an Example line and every value it names
// filled in, and every help file belongs to a command.
func TestHelpFiles(t *testing.T) {
	names := map[string]bool{}
	for _, c := range commands() {
		names[c.Name] = true
		b, err := helpFiles.ReadFile("help/" + c.Name + ".txt")
		if err != nil {
			t.Errorf("%s: no help file: %v", c.Name, err)
			continue
		}
		if !strings.Contains("\n"+string(b), "\nExample") {
			t.Errorf("help/%s.txt: no Example line", c.Name)
		}
		if p := placeholder.FindString(longHelp(c.Name)); p != "" {
			t.Errorf("help/%s.txt: placeholder %s is left unfilled (helpValues has no %[2]s)", c.Name, p)
		}
	}
	files, err := fs.Glob(helpFiles, "help/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if n := strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".txt"); !names[n] || !strings.HasSuffix(f, ".txt") {
			t.Errorf("%s belongs to no command", f)
		}
	}
}
