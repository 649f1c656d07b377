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
	// The answer a buyer reads first says it too, not only the configuration at the end.
	if a, b := strings.Index(s, `id="answer"`), strings.Index(s, `id="capacity"`); a < 0 || b < a || !strings.Contains(s[a:b], "How sure") {
		t.Errorf("the answer section lacks the How sure line")
	}
}
