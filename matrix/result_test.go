package matrix

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestResultJSONOneSchema: with or without measurements the result has the same keys, the
// parameter source among them, and reads back (ParseJSON) as its predicted matrix.
func TestResultJSONOneSchema(t *testing.T) {
	seed := loadSeed(t)
	pred := scaled(seed, 1.1)
	p := Parameters{Source: "calibrated", From: "built-in calibration"}
	keys := func(meas *Matrix) ([]string, map[string]json.RawMessage) {
		var b bytes.Buffer
		if err := WriteResultJSON(&b, pred, meas, p); err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		back, err := ParseJSON(bytes.NewReader(b.Bytes()), "result.json")
		if err != nil {
			t.Fatalf("ParseJSON of a result: %v", err)
		}
		requireSameCells(t, back, pred)
		return ks, m
	}
	with, wm := keys(seed)
	without, wo := keys(nil)
	want := []string{"measured", "only_measured", "only_predicted", "parameters", "predicted", "summary"}
	if !slices.Equal(with, want) || !slices.Equal(without, want) {
		t.Errorf("keys with measurements %v, without %v; want %v both", with, without, want)
	}
	if string(wo["measured"]) != "null" || string(wo["summary"]) != "null" || string(wo["only_measured"]) != "[]" {
		t.Errorf("without measurements: measured %s, summary %s, only_measured %s", wo["measured"], wo["summary"], wo["only_measured"])
	}
	if !strings.Contains(string(wm["summary"]), `"decode_cells"`) {
		t.Errorf("with measurements: summary %s", wm["summary"])
	}
	for _, m := range []map[string]json.RawMessage{wm, wo} {
		var got Parameters
		if err := json.Unmarshal(m["parameters"], &got); err != nil || got != p {
			t.Errorf("parameters %s (%v), want %+v", m["parameters"], err, p)
		}
	}
}

// TestResultCSV: the predicted CSV carries param_source and reads back; --compare adds the
// measured and error columns, blank without measurements.
func TestResultCSV(t *testing.T) {
	seed := loadSeed(t)
	pred := scaled(seed, 1.1)
	p := Parameters{Source: "prior"}
	read := func(meas *Matrix, compare bool) [][]string {
		var b bytes.Buffer
		if err := WriteResultCSV(&b, pred, meas, p, Band{}, compare); err != nil {
			t.Fatal(err)
		}
		if !compare {
			back, err := ParseCSV(bytes.NewReader(b.Bytes()), "pred.csv")
			if err != nil {
				t.Fatalf("ParseCSV of a predicted CSV with param_source: %v", err)
			}
			requireSameCells(t, back, pred)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	plain := read(seed, false)
	if h := plain[0]; !slices.Equal(h, slices.Concat(CSVHeader(), IntervalHeader(), []string{"param_source"})) {
		t.Errorf("header %v", h)
	}
	cmp := read(seed, true)
	blank := read(nil, true)
	col := func(recs [][]string, name string) int { return slices.Index(recs[0], name) }
	if !slices.Equal(cmp[0], blank[0]) || col(cmp, "meas_total_tok_s") < 0 || col(cmp, "err_total_pct") < 0 || col(cmp, "param_source") != len(cmp[0])-1 {
		t.Fatalf("compare header %v, without measurements %v", cmp[0], blank[0])
	}
	if len(blank) != 1+len(pred.Prefill)+len(pred.Decode) {
		t.Errorf("%d rows without measurements, want one per predicted cell", len(blank)-1)
	}
	for _, r := range blank[1:] {
		if r[col(blank, "meas_total_tok_s")] != "" || r[col(blank, "err_total_pct")] != "" || r[col(blank, "meas_status")] != "" || r[len(r)-1] != "prior" {
			t.Fatalf("row without measurements: %v", r)
		}
	}
	found := false
	for _, r := range cmp[1:] {
		if r[0] == "decode" && r[col(cmp, "err_total_pct")] == "10.00" {
			found = true
		}
	}
	if !found {
		t.Errorf("no decode row with err_total_pct 10.00 (predictions are the measurements x 1.1)")
	}
}

// scaled is m with every throughput x f (times as they are).
func scaled(m *Matrix, f float64) *Matrix {
	out := &Matrix{Info: m.Info, Prefill: slices.Clone(m.Prefill), Decode: slices.Clone(m.Decode)}
	for _, cs := range [][]Cell{out.Prefill, out.Decode} {
		for i := range cs {
			cs[i].TotalTokS *= f
			cs[i].PerRequestTokS *= f
		}
	}
	return out
}
