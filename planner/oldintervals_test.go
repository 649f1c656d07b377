package planner

import (
	"bytes"
	"regexp"
	"testing"
)

// TestReadJSONOldIntervals: a plan written when a row's interval was {"metric": "output_tok_s",
// "lo", "hi"} (no metric class, value or sigma) still reads, prints the same table and CSV, and
// gets each interval's metric class back from its name.
func TestReadJSONOldIntervals(t *testing.T) {
	p := mustRun(t, llamaH100MI300X(t), Options{})
	cur := planJSON(t, p)
	re := regexp.MustCompile(`\{"name":"([a-z_]+)","metric":"[a-z]*","value":[^,]+,("lo":[^,]+,"hi":[^,]+),"sigma":[^}]+\}`)
	old := re.ReplaceAll(cur, []byte(`{"metric":"$1",$2}`))
	if bytes.Equal(old, cur) {
		t.Fatalf("the sweep's plan has no interval to rewrite")
	}
	if bytes.Contains(old, []byte(`"sigma"`)) {
		t.Fatalf("an interval was not rewritten to the old shape")
	}
	back, err := ReadJSON(bytes.NewReader(old), "old.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []func(*Plan) string{
		func(q *Plan) string {
			var b bytes.Buffer
			q.WriteTable(&b, TableOptions{Top: 25, Wide: true})
			return b.String()
		},
		func(q *Plan) string { var b bytes.Buffer; q.WriteCSV(&b); return b.String() },
	} {
		if a, b := w(p), w(back); a != b {
			t.Errorf("an old plan file prints differently:\n--- current\n%s\n--- old\n%s", a, b)
		}
	}
	n := 0
	for _, r := range back.Results {
		for _, iv := range r.Intervals {
			if m, ok := planMetric(iv.Name); !ok || iv.Metric != m {
				t.Fatalf("row %d: interval %q read with class %q", r.Index, iv.Name, iv.Metric)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no interval read back")
	}
}
