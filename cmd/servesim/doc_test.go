package main

import (
	"os"
	"strings"
	"testing"
)

// TestDocListsEveryCommand keeps doc.go's command list equal to the declared commands.
func TestDocListsEveryCommand(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	const head = "// Commands (cli.go, commands()): "
	i := strings.Index(doc, head)
	if i < 0 {
		t.Fatal("doc.go: no command list")
	}
	rest := doc[i+len(head):]
	list := strings.ReplaceAll(rest[:strings.Index(rest, ".")], "\n//", "")
	var names []string
	for _, c := range commands() {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(strings.Fields(list), " "), strings.Join(names, ", "); got != want {
		t.Errorf("doc.go lists %q, commands() has %q", got, want)
	}
}
