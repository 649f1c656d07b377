package validate

import (
	"bytes"
	"strings"
	"testing"
)

// smallExcerpt is the excerpt with at most n requests per row (stages included), so that a run
// takes a moment.
func smallExcerpt(t *testing.T, n int) []Row {
	t.Helper()
	rows, err := ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].NumRequests = min(rows[i].NumRequests, n)
	}
	return rows
}

func render(t *testing.T, rep *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, f := range []func(*bytes.Buffer) error{
		func(w *bytes.Buffer) error { return rep.WriteTable(w) },
		func(w *bytes.Buffer) error { return rep.WriteCSV(w) },
		func(w *bytes.Buffer) error { return rep.WriteJSON(w) },
	} {
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// TestDeterminism: 1 and 3 workers give byte-identical reports.
func TestDeterminism(t *testing.T) {
	var out [2][]byte
	for i, w := range []int{1, 3} {
		cases := Map(smallExcerpt(t, 40), nil)
		rep := NewReport(Run(cases, Options{Workers: w}))
		if n, total := rep.Expressed(); n != total || total != 11 {
			for _, c := range rep.Cases {
				if !c.Expressed {
					t.Errorf("%s: %s", c.ID, c.Reason)
				}
			}
			t.Fatalf("%d of %d expressed", n, total)
		}
		out[i] = render(t, rep)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("reports differ between 1 and 3 workers (%d and %d bytes)", len(out[0]), len(out[1]))
	}
	s := string(out[0])
	for _, want := range []string{"11 of 11 rows expressed", "gpu-count", "shape", "inference-sim-training", "dstack-benchmarks", "overload"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
