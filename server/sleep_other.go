//go:build !linux

package server

import "time"

// preciseSleep sleeps d (Go's timer; on Linux, the kernel's nanosecond sleep).
func preciseSleep(d time.Duration) { time.Sleep(d) }
