package matrix

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func render(t *testing.T, pred, meas *Matrix, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, pred, meas, format); err != nil {
		t.Fatalf("Render(%s): %v", format, err)
	}
	var again bytes.Buffer
	if err := Render(&again, pred, meas, format); err != nil || !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Errorf("Render(%s) is not deterministic", format)
	}
	return b.String()
}

func requireContains(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestRenderSingle(t *testing.T) {
	m := loadSeed(t)
	out := render(t, m, nil, "table")
	requireContains(t, out,
		"nvidia/GLM-5.3-Flash-NVFP4 on 4 x RTX PRO 6000 Blackwell Server Edition · vllm 0.32.1rc1.dev96+g8c60cf07b · NVFP4",
		"Context     Tokens  Prefill tok/s  TTFT ms\n",
		"1019K    1,044,416        9,641.0  106,315\n",
		"8K       179.7  242.6  397.4  599.9  946.9  1,335.7  1,217.8 Q  1,207.7 Q\n",
		"1019K    148.5  229.8     OC     OC     OC       OC         OC         OC\n",
		"decode   8K           8,192            1  Valid                  179.7              184.7      746     5.4        1.00          1          5,391        30.0\n",
	)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing space in %q", line)
		}
	}
	md := render(t, m, nil, "markdown")
	requireContains(t, md, "## Prefill\n", "| Context | 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128 |\n|---|---:|",
		"| 32K | 176.1 | 249.6 | 376.2 | 619.6 | 931.4 | 1,333.3 | 1,228.7 Q | OC |\n")
}

func TestRenderSeedWithItself(t *testing.T) {
	m := loadSeed(t)
	for _, format := range []string{"table", "markdown"} {
		out := render(t, m, m, format)
		requireContains(t, out, "Statuses: 64/64 decode cells match",
			"decode total tok/s: n 43, MAPE 0.0%, MdAPE 0.0%, worst 8K x 1 +0.0%",
			"prefill TTFT ms: n 9, MAPE 0.0%, MdAPE 0.0%",
			"1,336 / 1,336 +0.0%", "1,218 / 1,218 +0.0% Q")
	}
}

func TestRenderCompared(t *testing.T) {
	pred, meas := smallPair()
	out := render(t, pred, meas, "table")
	requireContains(t, out,
		"Statuses: 2/4 decode cells match",
		"Statuses differ (pred/meas): 8K x 4 (Q/V), 8K x 8 (OC/V)",
		"decode total tok/s: n 3, MAPE 16.7%, MdAPE 10.0%, worst 8K x 4 +30.0%, 8K x 1 +10.0%, 8K x 2 -10.0%",
		"decode TBT ms: n 2, MAPE 12.5%, MdAPE 12.5%, worst 8K x 4 +25.0%, 8K x 1 +0.0%",
		"390 / 300 +30.0% !Q/V", "OC / 500 !OC/V",
		"Only in predicted: decode 16K x 1", "Only in measured: decode 8K x 16",
		"8K        8,192    11,000.0    10,000.0     +10.0%           700           800    -12.5%\n",
	)
	md := render(t, pred, meas, "markdown")
	requireContains(t, md, "- Statuses: 2/4 decode cells match\n", "| 8K | 110 / 100 +10.0% | 180 / 200 -10.0% | 390 / 300 +30.0% !Q/V | OC / 500 !OC/V | — / OC |\n", "| 16K | 100 / — |  |  |  |  |\n")
}

func TestRenderCSVAndJSON(t *testing.T) {
	pred, meas := smallPair()
	csvOut := render(t, pred, nil, "csv")
	if !strings.HasPrefix(csvOut, strings.Join(CSVHeader(), ",")+"\n") {
		t.Errorf("csv: got %q", csvOut)
	}
	cmpCSV := render(t, pred, meas, "csv")
	requireContains(t, cmpCSV, "phase,context,context_tokens,concurrency,pred_status,meas_status,pred_total_tok_s",
		"decode,8K,8192,4,Requests queued,Valid,390.0,300.0,30.00,50.0,50.0,0.00,1000.0,1000.0,0.00,10.0,8.0,25.00\n",
		"decode,16K,16384,1,Valid,,100.0,,,")
	js := render(t, pred, meas, "json")
	var got struct {
		Predicted, Measured Matrix
		Summary             struct {
			DecodeCells   int `json:"decode_cells"`
			StatusMatched int `json:"status_matched"`
			Metrics       []struct {
				Metric  string
				N       int
				MAPEPct *float64 `json:"mape_pct"`
			}
		}
		OnlyPredicted []struct{ Cell string } `json:"only_predicted"`
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	if got.Summary.StatusMatched != 2 || got.Summary.DecodeCells != 4 || len(got.Summary.Metrics) != NumColumns ||
		got.Summary.Metrics[3].Metric != "decode TBT ms" || *got.Summary.Metrics[3].MAPEPct != 12.5 ||
		len(got.Measured.Decode) != 5 || got.OnlyPredicted[0].Cell != "decode 16K x 1" {
		t.Errorf("json summary: got %+v", got)
	}
}

func TestRenderErrors(t *testing.T) {
	m := loadSeed(t)
	if err := Render(&bytes.Buffer{}, m, nil, "html"); err == nil || !strings.Contains(err.Error(), `format "html": want table, markdown, csv or json`) {
		t.Errorf("unknown format: got %v", err)
	}
	if err := Render(&bytes.Buffer{}, nil, m, "table"); err == nil {
		t.Errorf("nil prediction: want an error")
	}
}

func TestNumberText(t *testing.T) {
	tests := []struct {
		v        float64
		decimals int
		want     string
	}{
		{1335.7, 1, "1,335.7"},
		{179.7, 1, "179.7"},
		{106315, 0, "106,315"},
		{1044416, 0, "1,044,416"},
		{-1234.5, 1, "-1,234.5"},
		{999.96, 1, "1,000.0"},
		{nan(), 1, "—"},
	}
	for _, tt := range tests {
		if got := numberText(tt.v, tt.decimals); got != tt.want {
			t.Errorf("numberText(%v, %d) = %q, want %q", tt.v, tt.decimals, got, tt.want)
		}
	}
	for _, tt := range []struct {
		p    float64
		want string
	}{{-2.6, "-2.6%"}, {0, "+0.0%"}, {-0.04, "+0.0%"}, {12.345, "+12.3%"}, {nan(), "—"}} {
		if got := pctText(tt.p); got != tt.want {
			t.Errorf("pctText(%v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestRenderSparseDecodeOmitsGrid(t *testing.T) {
	// 400 cells on a diagonal would make a 400 x 400 matrix: over maxGridEntries.
	m := &Matrix{}
	for i := 1; i <= 400; i++ {
		c := NewCell(Decode, strconv.Itoa(i)+"K", i*1024, i)
		c.Status = OverCapacity
		m.Decode = append(m.Decode, c)
	}
	for _, meas := range []*Matrix{nil, m} {
		out := render(t, m, meas, "table")
		requireContains(t, out, "(Decode matrices omitted: 400 contexts x 400 concurrency levels.)")
		if strings.Contains(out, "Sustained decode: total tok/s") {
			t.Errorf("the decode matrix was drawn")
		}
	}
}
