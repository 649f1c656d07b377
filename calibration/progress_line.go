package calibration

import "github.com/servesim/servesim/internal/progress"

// StatusLine shows a fit's stage, evaluations and best loss on pr (progress.Reporter.Status: in
// place on a terminal, a line every ten seconds elsewhere).
func StatusLine(pr *progress.Reporter) func(Progress) {
	return func(p Progress) {
		pr.Status("%-14s %5d evaluations  best loss %.4f  %5.1f s", p.Stage, p.Evaluations, p.Best, p.Elapsed.Seconds())
	}
}
