package hugepages

import (
	"bytes"
	"os"
	"testing"
)

func TestLargeAnonymous(t *testing.T) {
	for _, c := range []struct {
		line       string
		start, end uint64
		ok         bool
	}{
		{"6f50f000000-6f517800000 rw-p 00000000 00:00 0 ", 0x6f50f000000, 0x6f517800000, true},
		{"c000000000-c000400000 rw-p 00000000 00:00 0", 0xc000000000, 0xc000400000, true},
		// Exactly one huge page, one byte short of it, a thread's stack.
		{"7f0000000000-7f0000200000 rw-p 00000000 00:00 0", 0x7f0000000000, 0x7f0000200000, true},
		{"7f0000000000-7f00001ff000 rw-p 00000000 00:00 0", 0, 0, false},
		{"7fff0304d000-7fff0306e000 rw-p 00000000 00:00 0                          [stack]", 0, 0, false},
		// A file's mapping, shared or read-only memory, the process's own brk heap.
		{"7f0000000000-7f0010000000 rw-p 00000000 fd:01 1234 /usr/lib/libc.so.6", 0, 0, false},
		{"7f0000000000-7f0010000000 rw-s 00000000 00:00 0", 0, 0, false},
		{"7f0000000000-7f0010000000 r--p 00000000 00:00 0", 0, 0, false},
		{"1f8a3000-2f8c4000 rw-p 00000000 00:00 0 [heap]", 0, 0, false},
		// Malformed.
		{"7f0000000000 rw-p 00000000 00:00 0", 0, 0, false},
		{"zz-7f0010000000 rw-p 00000000 00:00 0", 0, 0, false},
		{"", 0, 0, false},
	} {
		start, end, ok := largeAnonymous([]byte(c.line))
		if ok != c.ok || start != c.start || end != c.end {
			t.Errorf("%q: %x-%x %v, want %x-%x %v", c.line, start, end, ok, c.start, c.end, c.ok)
		}
	}
}

// TestReserve: where the kernel has transparent huge pages (not "never"), a mapping of the
// process is marked for them after Reserve (its VmFlags name "hg").
func TestReserve(t *testing.T) {
	Reserve(64 << 20)
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || bytes.Contains(mode, []byte("[never]")) {
		t.Skipf("no transparent huge pages here (%q, %v)", mode, err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range bytes.Split(smaps, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("VmFlags:")) && bytes.Contains(append(l, ' '), []byte(" hg ")) {
			return
		}
	}
	t.Error("no mapping marked for huge pages after Reserve")
}
