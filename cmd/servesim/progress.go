package main

import (
	"time"

	"github.com/servesim/servesim/internal/progress"
)

// newProgress starts a progress reporter on e's stderr (silent with --quiet).
func newProgress(e *env, after time.Duration) *progress.Reporter {
	return progress.New(e.stderr, e.quiet, after)
}
