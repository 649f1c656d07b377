// Package hugepages asks the kernel to back the Go heap with transparent huge pages.
//
// A fleet simulation keeps a hundred replicas' state live and visits it a step at a time, so a
// step's reads spread over many pages: with 4 KiB pages most of them miss the processor's
// address-translation cache as well as its data caches. Linux backs a mapping with 2 MiB pages
// when its transparent_hugepage setting is "always", or when it is "madvise" (a common default)
// and the program asks for that mapping (madvise MADV_HUGEPAGE) before touching it. The Go runtime
// does not ask, and maps its heap in pieces it touches at once; so Reserve has it map a stretch
// of heap untouched (a large allocation, dropped at once: fresh memory needs no clearing), asks
// for that stretch, and leaves it to the allocations that follow, whose first touches then take
// huge pages.
//
// Nothing a program computes changes; where the kernel refuses or huge pages are off, nothing
// happens at all. Outside Linux Reserve does nothing.
package hugepages

import "runtime"

// maxReserve caps the stretch Reserve maps: enough for the state of a few hundred replicas, far
// from what a machine would refuse to map.
const maxReserve = 256 << 20

// Reserve has the heap map about n bytes (at most 256 MiB) and asks for huge pages over every
// large anonymous mapping the process then has. A program calls it once, at its start, before
// the heap holds memory it has freed (a large allocation reusing such memory clears it, touching
// every page).
func Reserve(n int) {
	b := make([]byte, min(max(n, 0), maxReserve))
	advise()
	runtime.KeepAlive(b) // (the allocation is not dropped before advise)
}
