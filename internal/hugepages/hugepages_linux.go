package hugepages

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// hugePage is the size of a transparent huge page with 4 KiB base pages (x86-64, arm64): a
// smaller mapping cannot hold one.
const hugePage = 2 << 20

// advise marks the process's private read-write anonymous mappings of a huge page or more (the
// Go heap's, and the runtime's larger metadata) for transparent huge pages.
func advise() {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if start, end, ok := largeAnonymous(sc.Bytes()); ok {
			// (An error, such as a kernel without huge pages, leaves the mapping as it was.)
			syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_HUGEPAGE)
		}
	}
}

// largeAnonymous parses a line of /proc/self/maps ("start-end perms offset dev inode [path]")
// and reports the range of a private read-write anonymous mapping (no path) of a huge page or
// more.
func largeAnonymous(line []byte) (start, end uint64, ok bool) {
	f := bytes.Fields(line)
	if len(f) != 5 || string(f[1]) != "rw-p" || string(f[4]) != "0" {
		return 0, 0, false
	}
	a, b, found := bytes.Cut(f[0], []byte("-"))
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseUint(string(a), 16, 64)
	end, err2 := strconv.ParseUint(string(b), 16, 64)
	if err1 != nil || err2 != nil || end < start+hugePage {
		return 0, 0, false
	}
	return start, end, true
}
