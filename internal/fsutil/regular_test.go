//go:build unix

package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadRefusesNonRegular: a named pipe with no writer, a device and a directory are refused
// at once by ReadFile and Open (a pipe would block the open forever, a device never ends).
func TestReadRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	paths := []string{fifo, dir}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths = append(paths, "/dev/zero")
	}
	for _, p := range paths {
		done := make(chan [2]error, 1)
		go func() {
			_, e1 := ReadFile(p, MaxConfigBytes)
			f, e2 := Open(p, MaxConfigBytes)
			if e2 == nil {
				f.Close()
			}
			done <- [2]error{e1, e2}
		}()
		select {
		case errs := <-done:
			for i, err := range errs {
				var nr *NotRegularError
				if !errors.As(err, &nr) {
					t.Errorf("%s (call %d): %v, want a NotRegularError", p, i, err)
				}
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the read blocked", p)
		}
	}
	// A symbolic link to a regular file is read.
	reg := filepath.Join(dir, "a.txt")
	os.WriteFile(reg, []byte("x"), 0o644)
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(reg, link); err == nil {
		if b, err := ReadFile(link, 10); err != nil || string(b) != "x" {
			t.Errorf("symlink to a regular file: %q %v", b, err)
		}
	}
}

// TestWriteOnlyOverRegular: an output replaces a regular file or creates one; a named pipe, a
// device, a directory or a symbolic link at the path is refused and left as it was.
func TestWriteOnlyOverRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	target := filepath.Join(dir, "target.txt")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	bad := []string{fifo, link, sub}
	if st, err := os.Stat("/dev/null"); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		bad = append(bad, "/dev/null")
	}
	for _, p := range bad {
		before, _ := os.Lstat(p)
		var nr *NotRegularError
		if err := WriteFile(p, []byte("new")); !errors.As(err, &nr) || !nr.Output {
			t.Errorf("WriteFile(%s): %v, want a NotRegularError", p, err)
		}
		if err := CheckWritable(p); !errors.As(err, &nr) {
			t.Errorf("CheckWritable(%s): %v, want a NotRegularError", p, err)
		}
		var fs Files
		b := fs.NewBatch()
		if err := b.Add(p, []byte("new")); !errors.As(err, &nr) {
			t.Errorf("Batch.Add(%s): %v, want a NotRegularError", p, err)
		}
		b.Abort()
		after, err := os.Lstat(p)
		if err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s changed: %v -> %v (%v)", p, before.Mode(), after, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was changed: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 {
		t.Errorf("%d entries in the directory, want 4 (no temporary files left)", len(ents))
	}
	reg := filepath.Join(dir, "out.txt")
	for i := 0; i < 2; i++ { // new, then over the regular file
		if err := WriteFile(reg, []byte("v")); err != nil {
			t.Errorf("regular output: %v", err)
		}
	}
}
