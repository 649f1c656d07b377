package matrix

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestSniff(t *testing.T) {
	tests := []struct {
		in   string
		want Format
	}{
		{`{"info": {}}`, FormatJSON},
		{"\ufeff\n  {", FormatJSON},
		{"phase,context,context_tokens", FormatCSV},
		{"\n\nphase,context", FormatCSV},
		{"Speed test matrix\n", FormatText},
		{"", FormatText},
	}
	for _, tt := range tests {
		if got := Sniff([]byte(tt.in)); got != tt.want {
			t.Errorf("Sniff(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestLoadEachFormat(t *testing.T) {
	m := loadSeed(t)
	dir := t.TempDir()
	var csvBuf, jsonBuf bytes.Buffer
	if err := WriteCSV(&csvBuf, m); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&jsonBuf, m); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"m.csv": append([]byte("\n"), csvBuf.Bytes()...), "m.json": jsonBuf.Bytes()} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatalf("Load(%s): %v", name, err)
		}
		requireSameCells(t, got, m)
	}
	if _, err := Load(filepath.Join(dir, "missing.txt")); err == nil {
		t.Errorf("Load(missing): want an error")
	}
}
