package fsutil

import (
	"fmt"
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

// TestBatchAllOrNothing: a batch changes nothing at its destinations until Commit; an interrupt
// (RemovePending) before Commit leaves every old file and no temporary one; Commit puts every
// new file in place.
func TestBatchAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a.svg", "b.svg", "c.svg"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var fs Files
	contents := func() string {
		var out []string
		for _, n := range names {
			b, _ := os.ReadFile(filepath.Join(dir, n))
			out = append(out, string(b))
		}
		ents, _ := os.ReadDir(dir)
		return fmt.Sprintf("%v %d entries", out, len(ents))
	}
	b := fs.NewBatch()
	for _, n := range names[:2] {
		if err := b.Add(filepath.Join(dir, n), []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
	if got := contents(); got != "[old old old] 5 entries" {
		t.Errorf("before commit: %s", got)
	}
	fs.RemovePending() // the interrupt
	if got := contents(); got != "[old old old] 3 entries" {
		t.Errorf("after an interrupt: %s, want the old files only", got)
	}
	if err := b.Commit(); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("commit after an interrupt: %v", err)
	}
	if got := contents(); got != "[old old old] 3 entries" {
		t.Errorf("after a refused commit: %s", got)
	}
	b = fs.NewBatch()
	for _, n := range names {
		if err := b.Add(filepath.Join(dir, n), []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := contents(); got != "[new new new] 3 entries" {
		t.Errorf("after commit: %s", got)
	}
	b = fs.NewBatch()
	if err := b.Add(filepath.Join(dir, "a.svg"), []byte("newer")); err != nil {
		t.Fatal(err)
	}
	b.Abort()
	if got := contents(); got != "[new new new] 3 entries" {
		t.Errorf("after abort: %s", got)
	}
}
