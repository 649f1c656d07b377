package fsutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFileLimit: a file larger than the limit, or a device that never ends (/dev/zero), is
// an error naming the file and the limit, after reading at most the limit.
func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(p, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p, 1024); err == nil || err.Error() != p+": larger than 1 KiB: servesim reads at most that much from such a file" {
		t.Errorf("big regular file: %v", err)
	}
	if data, err := ReadFile(p, 2048); err != nil || len(data) != 2048 {
		t.Errorf("file at the limit: %d bytes, %v", len(data), err)
	}
	// A stream that never ends fails at the limit (devices are refused before: see
	// TestReadRefusesNonRegular).
	_, err := io.ReadAll(LimitReader(zeros{}, "stream", 4096))
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "stream: larger than 4 KiB") {
		t.Errorf("endless stream: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.toml"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(p, 100); err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Errorf("Open of a big file: %v", err)
	}
}

// TestLineLimitReader: a line longer than the limit fails with the file and the line number;
// shorter lines pass through unchanged.
func TestLineLimitReader(t *testing.T) {
	in := "a,b\n" + strings.Repeat("x", 10) + "\n" + strings.Repeat("y", 11) + "\nz\n"
	got, err := io.ReadAll(LineLimitReader(strings.NewReader(in), "t.csv", 10))
	if err == nil || err.Error() != "t.csv: line 3: longer than 10 bytes: servesim reads lines of at most that length" {
		t.Errorf("err = %v", err)
	}
	if !strings.HasPrefix(in, string(got)) || len(got) > 4+11+10 {
		t.Errorf("read %q before the error", got)
	}
	ok := "a\nbb\n\nccc"
	got, err = io.ReadAll(LineLimitReader(strings.NewReader(ok), "ok", 3))
	if err != nil || string(got) != ok {
		t.Errorf("short lines: %q, %v", got, err)
	}
	// One byte at a time, as a slow pipe would give it.
	_, err = io.ReadAll(LineLimitReader(io.MultiReader(strings.NewReader("ab\n"), strings.NewReader("abcd")), "p", 3))
	if err == nil || !strings.Contains(err.Error(), "p: line 2") {
		t.Errorf("split reads: %v", err)
	}
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
