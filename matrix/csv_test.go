package matrix

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestWriteCSVSeed(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, loadSeed(t)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if got, want := len(lines), 1+9+64; got != want {
		t.Fatalf("lines: got %d, want %d", got, want)
	}
	for i, want := range map[int]string{
		0:  "phase,context,context_tokens,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,avg_active,completed,output_tokens,measured_s",
		1:  "prefill,8K,8192,1,Valid,12000.0,,682.0,,,1,,",
		9:  "prefill,1024K,1048511,1,Valid,9596.0,,107335.0,,,1,,",
		10: "decode,8K,8192,1,Valid,179.7,184.7,746.0,5.4,1.00,1,5391,30.00",
		16: "decode,8K,8192,64,Requests queued,1217.8,38.9,4940.0,25.7,32.00,0,36464,29.90",
		33: "decode,32K,32768,128,Over capacity,,,,,,,,",
		73: "decode,1019K,1044416,128,Over capacity,,,,,,,,",
	} {
		if lines[i] != want {
			t.Errorf("line %d: got %q, want %q", i+1, lines[i], want)
		}
	}
}

func TestCSVRoundTripSeed(t *testing.T) {
	m := loadSeed(t)
	var b bytes.Buffer
	if err := WriteCSV(&b, m); err != nil {
		t.Fatal(err)
	}
	got, err := ParseCSV(&b, "seed.csv")
	if err != nil {
		t.Fatal(err)
	}
	requireSameCells(t, got, m)
}

func TestCSVRoundTripPrecision(t *testing.T) {
	c := NewCell(Decode, "1019K", 1044416, 3)
	c.Status = RequestsQueued
	c.TotalTokS, c.PerRequestTokS, c.TTFTms, c.TBTms = 1234.5678, 0.04, 98765.4321, 5.45
	c.AvgActive, c.Completed, c.OutputTokens, c.MeasuredS = 2.996, 0, 123456, 29.987654
	p := NewCell(Prefill, "8K", 8192, 1)
	p.Status, p.TotalTokS, p.TTFTms = Valid, 12011.7, 682.04
	e := NewCell(Decode, "8K", 8192, 7)
	e.Status = Error
	m := &Matrix{Prefill: []Cell{p}, Decode: []Cell{c, e}}
	var b bytes.Buffer
	if err := WriteCSV(&b, m); err != nil {
		t.Fatal(err)
	}
	got, err := ParseCSV(&b, "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	requireSameCells(t, got, m) // within half a unit of each column's last printed digit
}

func TestParseCSVLenient(t *testing.T) {
	in := "\ufeffstatus,phase,context,context_tokens,concurrency,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,avg_active,completed,output_tokens,measured_s\n" +
		"Valid,prefill,8K,,,1.2e4,,682,,,1,,\n" +
		"requests queued,Sustained decode,16K,16384,64,\"1,224.5\",NaN,3773,25.1,32,0,36734.0,30\n"
	m, err := ParseCSV(strings.NewReader(in), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	p, d := m.Prefill[0], m.Decode[0]
	if p.ContextTokens != 8192 || p.Concurrency != 1 || p.TotalTokS != 12000 || p.Completed != 1 {
		t.Errorf("prefill: got %+v", p)
	}
	if d.Status != RequestsQueued || d.TotalTokS != 1224.5 || !math.IsNaN(d.PerRequestTokS) || d.OutputTokens != 36734 {
		t.Errorf("decode: got %+v", d)
	}
}

func TestParseCSVErrors(t *testing.T) {
	header := strings.Join(CSVHeader(), ",") + "\n"
	row := "decode,8K,8192,1,Valid,179.7,184.7,746.0,5.4,1.00,1,5391,30.00"
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "m.csv: empty input: want a header row"},
		{"unknown column", strings.Replace(header, "tbt_ms", "itl_ms", 1), `m.csv:1: column "itl_ms": want the columns phase,context`},
		{"missing column", strings.Replace(header, ",measured_s", "", 1), "m.csv:1: no measured_s column"},
		{"duplicate column", strings.Replace(header, "tbt_ms", "ttft_ms", 1), `m.csv:1:ttft_ms: a second "ttft_ms" column`},
		{"short row", header + "decode,8K\n", "m.csv:2: 2 fields: want 13 fields like the header"},
		{"bad phase", header + strings.Replace(row, "decode", "warmup", 1), `m.csv:2:phase: "warmup": want prefill or decode`},
		{"bad status", header + strings.Replace(row, "Valid", "Fine", 1), `m.csv:2:status: "Fine": want Valid, Requests queued, Over capacity or Error`},
		{"bad number", header + strings.Replace(row, "746.0", "soon", 1), `m.csv:2:ttft_ms: "soon": want a number or blank`},
		{"bad count", header + strings.Replace(row, ",5391,", ",53.5,", 1), `m.csv:2:output_tokens: "53.5": want a whole number >= 0 or blank`},
		{"bad concurrency", header + strings.Replace(row, ",8192,1,", ",8192,0,", 1), `m.csv:2:concurrency: "0": want a whole number >= 1`},
		{"bad tokens", header + strings.Replace(row, ",8192,", ",-5,", 1), `m.csv:2:context_tokens: "-5"`},
		{"no context", header + strings.Replace(row, ",8K,", ",,", 1), `m.csv:2:context: "": want a context label`},
		{"duplicate", header + row + "\n" + row + "\n", "m.csv:3: second row for decode 8K x 1: want one row per cell (first at line 2)"},
		{"bad quotes", header + `decode,"8K,8192` + "\n", "m.csv:2: want well-formed CSV"},
	}
	for _, tt := range tests {
		_, err := ParseCSV(strings.NewReader(tt.in), "m.csv")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}
