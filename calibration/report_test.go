package calibration

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestReportJSONRoundTrip: the report file `servesim fit --report` writes reads back unchanged.
func TestReportJSONRoundTrip(t *testing.T) {
	rep := Report{NParameters: 1, Parameters: map[string]ParamEstimate{"mem_bw_eff": {Value: 0.7, Unit: "", Lo: 0.3, Hi: 1, StdErr: 0.01, Prior: 0.75, Fitted: true}},
		Train: Errors{Cells: 3, DecodeTotalMAPE: 1.5}, TrainFilter: "concurrency<=8", Loss: 0.25, Evaluations: 12, Starts: 1, Seed: 1, Converged: true, Status: "ok"}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "}\n") || !strings.Contains(buf.String(), "\n  \"n_parameters\": 1,") {
		t.Errorf("not indented JSON ending in a newline:\n%s", buf.String())
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rep) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, rep)
	}
	if got, want := rep.Note("seed.txt"), `servesim fit on seed.txt: 3 cells, train "concurrency<=8", loss 0.2500`; got != want {
		t.Errorf("Note = %q, want %q", got, want)
	}
}

// TestWeightsString: the printed weights read back as the same weights.
func TestWeightsString(t *testing.T) {
	w := DefaultWeights()
	w.Status = 0.3
	back, err := ParseWeights(w.String())
	if err != nil || back != w {
		t.Errorf("ParseWeights(%q) = %+v, %v; want %+v", w.String(), back, err, w)
	}
}
