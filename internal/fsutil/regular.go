package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// NotRegularError is a path that is not a regular file where servesim reads or writes one: a
// named pipe (which blocks a reader until a writer comes), a device, a socket, a directory, or (for
// an output) a symbolic link.
type NotRegularError struct {
	Name string
	// Kind says what it is instead ("a named pipe", "a device", ...).
	Kind string
	// Output: the path was to be written.
	Output bool
}

func (e *NotRegularError) Error() string {
	if e.Output {
		return fmt.Sprintf("cannot write %s: it is %s: servesim writes only over a regular file or a new path", e.Name, e.Kind)
	}
	return fmt.Sprintf("%s: it is %s, not a regular file: servesim reads only regular files", e.Name, e.Kind)
}

// kind names a non-regular file mode.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// CheckRegular returns a *NotRegularError when info (of the file named name) is not a regular
// file. Readers of a file system (fs.FS) call it with fs.Stat before opening a file.
func CheckRegular(name string, info fs.FileInfo) error {
	if info.Mode().IsRegular() {
		return nil
	}
	return &NotRegularError{Name: name, Kind: kind(info.Mode())}
}

// openRegular opens path for reading after checking that it is a regular file (symbolic links
// followed), so that a named pipe with no writer is refused rather than blocking the open. The
// open file is checked again (the path may have changed in between).
func openRegular(path string) (*os.File, os.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // the error os.Open gives
		}
		return nil, nil, err
	}
	if err := CheckRegular(path, st); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if err := CheckRegular(path, st); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// checkOutput fails when something other than a regular file is at path (a device, a named pipe,
// a socket, a directory or a symbolic link): an output replaces only a regular file, or creates
// a new one.
func checkOutput(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return nil // nothing there (or not visible): the write itself reports real errors
	}
	if st.Mode().IsRegular() {
		return nil
	}
	return &NotRegularError{Name: path, Kind: kind(st.Mode()), Output: true}
}
