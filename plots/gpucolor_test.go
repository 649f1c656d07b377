package plots

import (
	"fmt"
	"regexp"
	"testing"
)

// TestCostChartColorsEveryGPU: a plan over 18 GPU kinds draws each kind in its own colour (the
// 10-colour palette repeated after 10).
func TestCostChartColorsEveryGPU(t *testing.T) {
	var pts []CostPoint
	for i := 0; i < 18; i++ {
		pts = append(pts, CostPoint{Label: fmt.Sprintf("1 x G%d", i), GPU: fmt.Sprintf("G%d", i), X: float64(100 + 10*i), Y: float64(1 + i), Met: true, Color: i})
	}
	c := NewCostChart(Header{Name: "cost", Title: "cost"}, pts)
	svg, err := c.Figure().Bytes(SVG)
	if err != nil {
		t.Fatal(err)
	}
	fills := map[string]bool{}
	for _, m := range regexp.MustCompile(`fill:(#[0-9a-fA-F]{6}|rgb\([^)]*\))`).FindAllStringSubmatch(string(svg), -1) {
		fills[m[1]] = true
	}
	seen := map[string]bool{}
	for i := 0; i < 18; i++ {
		c := GPUColor(i)
		k := fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
		if seen[k] {
			t.Errorf("GPU %d: colour %s repeats", i, k)
		}
		seen[k] = true
	}
	if len(fills) < 18 {
		t.Errorf("the figure has %d fill colours for 18 GPU kinds: %v", len(fills), fills)
	}
}
