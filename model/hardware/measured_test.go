package hardware

import (
	"strings"
	"testing"
)

// A generation says its priors rest on measured data exactly when some of its kernel priors cite
// a kernel profile (Vidur), so that the table and MeasuredData cannot drift apart.
func TestMeasuredDataMatchesSources(t *testing.T) {
	for _, d := range generations() {
		profiled := false
		for _, p := range d.kernel {
			if strings.HasPrefix(p.Source, "Vidur") {
				profiled = true
			}
		}
		if got := d.gen.MeasuredData() != ""; got != profiled {
			t.Errorf("%s: MeasuredData %q, but kernel priors citing Vidur profiles: %v", d.gen, d.gen.MeasuredData(), profiled)
		}
	}
}
