package report

import (
	"bytes"
	"os"
	"testing"
)

// FuzzReadFit: any input either parses into a report with parameters, whose fit section
// renders, or fails with an error naming the file; it never panics.
func FuzzReadFit(f *testing.F) {
	if data, err := os.ReadFile("testdata/fit_report.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"parameters": {"x": {"value": 1, "stderr": -1}}, "cv": [{"name": "a"}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[params]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ReadFit(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			if !bytes.HasPrefix([]byte(err.Error()), []byte("fuzz.json: ")) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(rep.Parameters) == 0 {
			t.Fatal("accepted a report without parameters")
		}
		var buf bytes.Buffer
		if err := pageTemplate().ExecuteTemplate(&buf, "table", buildFit(rep, "fuzz.json").Params); err != nil {
			t.Fatal(err)
		}
	})
}
