//go:build linux

package server

import (
	"syscall"
	"time"
)

// preciseSleep sleeps d on the calling thread with the kernel's nanosecond timer (Go's own timers
// wake through epoll, whose timeout is in whole milliseconds, so they fire up to 1 ms late).
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
