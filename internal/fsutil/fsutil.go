package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Files tracks the temporary files of the WriteFile calls and batches in progress, so that an
// interrupt can remove them. The zero value is ready to use; the CLI holds one for its outputs.
type Files struct {
	pending sync.Map
	// commit is held while a batch renames its files into place, so that RemovePending (an
	// interrupt) waits for the batch to be in place whole rather than cutting it in two.
	commit sync.Mutex
}

// RemovePending deletes every temporary file a WriteFile or a Batch has not yet renamed into
// place. The CLI calls it on SIGINT/SIGTERM so an interrupted run leaves no partial file behind;
// a batch renaming its files finishes first, so it is either wholly in place or not at all.
func (fs *Files) RemovePending() {
	fs.commit.Lock()
	defer fs.commit.Unlock()
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
// is pending. Only a regular file (or nothing) at path is replaced: a device, a named pipe, a
// socket, a directory or a symbolic link there is a *NotRegularError.
func (fs *Files) WriteFile(path string, data []byte) error {
	tmp, err := fs.writeTemp(path, data)
	if err != nil {
		return err
	}
	defer fs.pending.Delete(tmp)
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// writeTemp writes data to a pending temporary file beside path and returns its name.
func (fs *Files) writeTemp(path string, data []byte) (string, error) {
	if err := checkOutput(path); err != nil {
		return "", err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("cannot write %s: %w", path, err)
	}
	tmp := f.Name()
	fs.pending.Store(tmp, true)
	ok := false
	defer func() {
		if !ok {
			fs.pending.Delete(tmp)
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	ok = true
	return tmp, nil
}

// Batch writes several files that belong together (a set of figures): each Add writes a
// temporary file beside its destination, and Commit renames them all into place at the end.
// Until Commit nothing at the destinations changes, so an interrupted or failed run leaves the
// old files, never a mix of old and new.
type Batch struct {
	fs    *Files
	files []batchFile
}

type batchFile struct{ tmp, path string }

// NewBatch starts a batch whose temporary files fs tracks.
func (fs *Files) NewBatch() *Batch { return &Batch{fs: fs} }

// Add writes data for path under a temporary name.
func (b *Batch) Add(path string, data []byte) error {
	tmp, err := b.fs.writeTemp(path, data)
	if err != nil {
		return err
	}
	b.files = append(b.files, batchFile{tmp, path})
	return nil
}

// Commit renames every file of the batch into place. An interrupt (RemovePending) waits for it.
// If a file's temporary copy is gone (RemovePending ran first) or a rename fails, the files not
// yet renamed are removed and the error names the file.
func (b *Batch) Commit() error {
	b.fs.commit.Lock()
	defer b.fs.commit.Unlock()
	for i, f := range b.files {
		if _, ok := b.fs.pending.Load(f.tmp); !ok {
			b.removeFrom(i)
			return fmt.Errorf("writing %s: interrupted before it was in place", f.path)
		}
		if err := os.Rename(f.tmp, f.path); err != nil {
			b.removeFrom(i)
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		b.fs.pending.Delete(f.tmp)
	}
	b.files = nil
	return nil
}

// Abort removes the batch's temporary files; nothing at the destinations changes.
func (b *Batch) Abort() {
	b.fs.commit.Lock()
	defer b.fs.commit.Unlock()
	b.removeFrom(0)
}

func (b *Batch) removeFrom(i int) {
	for _, f := range b.files[i:] {
		os.Remove(f.tmp)
		b.fs.pending.Delete(f.tmp)
	}
	b.files = nil
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
	if err := checkOutput(path); err != nil {
		return err
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
