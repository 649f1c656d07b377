//go:build !linux

package hugepages

import "runtime"

func advise() {}

func keep(b []byte) { runtime.KeepAlive(b) }
