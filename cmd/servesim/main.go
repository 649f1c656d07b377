package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/servesim/servesim/internal/fsutil"
)

// outputs are the files this run writes: an interrupt removes the unfinished ones.
var outputs fsutil.Files

func main() {
	// An interrupted run removes its unfinished output files and exits 130; finished outputs are
	// complete because every file is written to a temporary name and renamed.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		outputs.RemovePending()
		fmt.Fprintf(os.Stderr, "\nservesim: %v: stopped; output files are either complete or untouched (unfinished ones removed)\n", s)
		os.Exit(130)
	}()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
