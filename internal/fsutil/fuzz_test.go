package fsutil

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzLineLimitReader: the reader passes input through unchanged when every line is within the
// limit, and otherwise fails naming the first long line (1-based), after giving only bytes that
// precede the offending one.
func FuzzLineLimitReader(f *testing.F) {
	f.Add([]byte("a,b\nccc\n"), 3)
	f.Add([]byte("abcd"), 3)
	f.Add([]byte("\n\n\nxxxxxxx\n"), 2)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 1 || max > 64 || len(in) > 4096 {
			return
		}
		got, err := io.ReadAll(LineLimitReader(bytes.NewReader(in), "f", max))
		long := 0
		for i, l := range bytes.Split(in, []byte("\n")) {
			if len(l) > max {
				long = i + 1
				break
			}
		}
		var tl *TooLargeError
		switch {
		case long == 0 && (err != nil || !bytes.Equal(got, in)):
			t.Fatalf("lines within %d: got %q, %v", max, got, err)
		case long > 0 && (!errors.As(err, &tl) || tl.Line != long || !bytes.HasPrefix(in, got)):
			t.Fatalf("line %d longer than %d: got %q, %v", long, max, got, err)
		}
	})
}
