package report

import (
	"strings"
	"testing"
)

// The report says how sure it is: the seed's calibrated provenance and its interval factors.
func TestReportHowSure(t *testing.T) {
	page, err := Render(seedInput(t))
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	for _, want := range []string{"How sure", "80 % intervals: throughput ×/÷ 1.09", "calibrated: gpu compute"} {
		if !strings.Contains(s, want) {
			t.Errorf("report without %q", want)
		}
	}
}
