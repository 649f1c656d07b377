package report_test

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/servesim/servesim/matrix"
	"github.com/servesim/servesim/report"
	"github.com/servesim/servesim/scenario"
)

// A report of a tiny predicted matrix (no measurements, no fit): the page's sections and
// figures, by id.
func ExampleWrite() {
	r, err := scenario.Default().Resolve(scenario.ResolveOptions{Uncalibrated: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	pred := &matrix.Matrix{}
	for i, c := range []int{1, 2} {
		p := matrix.NewCell(matrix.Decode, "8K", 8192, c)
		p.Status, p.TotalTokS, p.PerRequestTokS, p.TTFTms, p.TBTms = matrix.Valid, 180*float64(i+1), 180, 200, 5.5
		pred.Decode = append(pred.Decode, p)
	}
	pre := matrix.NewCell(matrix.Prefill, "8K", 8192, 1)
	pre.Status, pre.TotalTokS, pre.TTFTms = matrix.Valid, 15000, 546
	pred.Prefill = append(pred.Prefill, pre)

	var page bytes.Buffer
	if err := report.Write(&page, &report.Input{Resolved: r, Predicted: pred}); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range regexp.MustCompile(`<(section|figure) id="([^"]+)"`).FindAllSubmatch(page.Bytes(), -1) {
		fmt.Printf("%s %s\n", m[1], m[2])
	}
	// Output:
	// section answer
	// section matrix
	// section figures
	// figure fig-decode-total-toks
	// figure fig-decode-per-request-toks
	// figure fig-decode-ttft
	// figure fig-prefill-toks
	// figure fig-prefill-ttft
	// figure fig-status-map
	// section scenario
}
