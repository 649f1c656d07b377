package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Files tracks the temporary files of the WriteFile calls in progress, so that an interrupt can
// remove them. The zero value is ready to use; the CLI holds one for its outputs.
type Files struct {
	pending sync.Map
}

// RemovePending deletes every temporary file a WriteFile has not yet renamed into place. The CLI
// calls it on SIGINT/SIGTERM so an interrupted run leaves no partial file behind.
func (fs *Files) RemovePending() {
	fs.pending.Range(func(k, _ any) bool {
		os.Remove(k.(string))
		fs.pending.Delete(k)
		return true
	})
}

// WriteFile atomically replaces path with data, untracked.
func WriteFile(path string, data []byte) error {
	var fs Files
	return fs.WriteFile(path, data)
}

// WriteFile atomically replaces path with data; until the file is in place its temporary file
// is pending.
func (fs *Files) WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	tmp := f.Name()
	fs.pending.Store(tmp, true)
	ok := false
	defer func() {
		fs.pending.Delete(tmp)
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	ok = true
	return nil
}

// CheckWritable fails early, before long work, when path's directory does not exist or cannot
// take a new file.
func CheckWritable(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot write %s: directory %s: %w", path, dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("cannot write %s: it is a directory", path)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".check-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// EnsureDir creates dir (and parents) and checks it is writable.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	return CheckWritable(filepath.Join(dir, "x"))
}
