package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "new" {
		t.Fatalf("content %q, want new", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("directory has %d entries, want only the output (no temp files left)", len(ents))
	}
}

func TestWriteFileErrorKeepsOld(t *testing.T) {
	dir := t.TempDir()
	// Writing into a missing directory fails and names the path.
	err := WriteFile(filepath.Join(dir, "missing", "x.csv"), []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "x.csv") {
		t.Fatalf("err = %v, want an error naming the file", err)
	}
}

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable(filepath.Join(dir, "ok.txt")); err != nil {
		t.Errorf("writable dir: %v", err)
	}
	if err := CheckWritable(filepath.Join(dir, "nope", "x.txt")); err == nil {
		t.Error("missing directory: want an error")
	}
	if err := CheckWritable(dir); err == nil {
		t.Error("a directory as the output path: want an error")
	}
	if os.Getuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if err := CheckWritable(filepath.Join(ro, "x.txt")); err == nil {
			t.Error("read-only directory: want an error")
		}
	}
}

func TestRemovePending(t *testing.T) {
	dir := t.TempDir()
	f, _ := os.CreateTemp(dir, "x")
	f.Close()
	var fs Files
	fs.pending.Store(f.Name(), true)
	fs.RemovePending()
	if _, err := os.Stat(f.Name()); !os.IsNotExist(err) {
		t.Fatalf("pending temp file still exists: %v", err)
	}
}
