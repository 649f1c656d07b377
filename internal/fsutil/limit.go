package fsutil

import (
	"fmt"
	"io"
)

// Size limits of the files servesim reads. Every file read goes through ReadFile or Open with
// one of them, so that no input (a huge file, a file that keeps growing) grows memory or time
// without bound, and only regular files are read (a device never ends, a named pipe without a
// writer blocks); line-based readers also cap one line with MaxLineBytes.
const (
	// MaxConfigBytes bounds TOML scenarios, workloads, GPU catalogs, parameter files, model
	// descriptions, Hugging Face config.json and fit reports (real ones are kilobytes).
	MaxConfigBytes = 16 << 20
	// MaxMatrixBytes bounds a measured matrix (published text page, CSV or JSON).
	MaxMatrixBytes = 64 << 20
	// MaxPlanBytes bounds a plan JSON read by merge (a shard of a large sweep is tens of MB).
	MaxPlanBytes = 1 << 30
	// MaxTraceBytes bounds a request trace (CSV or JSONL; at most 10 million requests).
	MaxTraceBytes = 2 << 30
	// MaxLineBytes bounds one line of a line-based file (trace CSV and JSONL, matrix text and CSV).
	MaxLineBytes = 1 << 20
)

// TooLargeError is a file (or a line of it) beyond its limit.
type TooLargeError struct {
	Name  string
	Limit int64
	// Line is the 1-based line that is too long, or 0 when the whole file is too large.
	Line int
}

func (e *TooLargeError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: longer than %s: servesim reads lines of at most that length", e.Name, e.Line, Size(e.Limit))
	}
	return fmt.Sprintf("%s: larger than %s: servesim reads at most that much from such a file", e.Name, Size(e.Limit))
}

// Size writes a byte count in the largest binary unit that divides it ("16 MiB", "1 GiB").
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads at most limit bytes of path, a regular file. A larger file (or one that grows
// past the limit while read) is a *TooLargeError naming the file and the limit; a named pipe, a
// device or a directory is a *NotRegularError; the open and read errors are those of os.ReadFile.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, &TooLargeError{Name: path, Limit: limit}
	}
	data, err := io.ReadAll(LimitReader(f, path, limit))
	if err != nil {
		return nil, err
	}
	return data, nil
}

// Open opens path, a regular file (else a *NotRegularError), for reading; the reader fails with a
// *TooLargeError once it has given limit bytes and more remain (a file larger than limit fails at
// once).
func Open(path string, limit int64) (io.ReadCloser, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		f.Close()
		return nil, &TooLargeError{Name: path, Limit: limit}
	}
	return struct {
		io.Reader
		io.Closer
	}{LimitReader(f, path, limit), f}, nil
}

// LimitReader reads r, failing with a *TooLargeError (naming name and limit) when r holds more
// than limit bytes. Unlike io.LimitReader it does not end quietly at the limit.
func LimitReader(r io.Reader, name string, limit int64) io.Reader {
	return &limitReader{r: r, name: name, left: limit, limit: limit}
}

type limitReader struct {
	r           io.Reader
	name        string
	left, limit int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// At the limit: one more byte means the input is too large.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, &TooLargeError{Name: l.name, Limit: l.limit}
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// LineLimitReader reads r, failing with a *TooLargeError naming name, the 1-based line and
// maxLine when a line (bytes between newlines, the newline excluded) is longer than maxLine.
// Line-based parsers wrap their input in it so that one huge line costs at most maxLine bytes.
func LineLimitReader(r io.Reader, name string, maxLine int) io.Reader {
	return &lineLimitReader{r: r, name: name, max: maxLine, line: 1}
}

type lineLimitReader struct {
	r    io.Reader
	name string
	max  int
	line int // current line, 1-based
	cur  int // bytes of the current line so far
	err  error
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			l.line++
			l.cur = 0
			continue
		}
		l.cur++
		if l.cur > l.max {
			l.err = &TooLargeError{Name: l.name, Limit: int64(l.max), Line: l.line}
			return i, l.err
		}
	}
	return n, err
}
