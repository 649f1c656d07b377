package matrix_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/servesim/servesim/matrix"
)

func ExampleParseCSV() {
	in := `phase,context,context_tokens,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,avg_active,completed,output_tokens,measured_s
prefill,8K,8192,1,Valid,12000.0,,682.0,,,1,,
decode,8K,8192,1,Valid,179.7,184.7,746.0,5.4,1.00,1,5391,30.00
decode,32K,32768,128,Over capacity,,,,,,,,
`
	m, err := matrix.ParseCSV(strings.NewReader(in), "example.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range m.Cells() {
		fmt.Printf("%s: %s, %.1f tok/s, TTFT %.0f ms\n", c.Key(), c.Status, c.TotalTokS, c.TTFTms)
	}
	_, err = matrix.ParseCSV(strings.NewReader(strings.Replace(in, "746.0", "soon", 1)), "example.csv")
	fmt.Println(err)
	// Output:
	// prefill 8K: Valid, 12000.0 tok/s, TTFT 682 ms
	// decode 8K x 1: Valid, 179.7 tok/s, TTFT 746 ms
	// decode 32K x 128: Over capacity, NaN tok/s, TTFT NaN ms
	// example.csv:3:ttft_ms: "soon": want a number or blank
}

func ExampleCompare() {
	cell := func(conc int, s matrix.Status, totalTokS float64) matrix.Cell {
		c := matrix.NewCell(matrix.Decode, "8K", 8192, conc)
		c.Status, c.TotalTokS = s, totalTokS
		return c
	}
	meas := &matrix.Matrix{Decode: []matrix.Cell{
		cell(1, matrix.Valid, 100), cell(2, matrix.Valid, 200), cell(64, matrix.RequestsQueued, 1200),
	}}
	pred := &matrix.Matrix{Decode: []matrix.Cell{
		cell(1, matrix.Valid, 110), cell(2, matrix.Valid, 190), cell(64, matrix.OverCapacity, math.NaN()),
	}}
	s := matrix.Compare(pred, meas).Summary
	fmt.Printf("statuses %d/%d\n", s.StatusMatched, s.DecodeCells)
	total := s.Columns[matrix.DecodeTotalTokS]
	// APEs 10% (110 vs 100) and 5% (190 vs 200); 8K x 64 did not run in the prediction.
	fmt.Printf("%s: n %d, MAPE %.1f%%, MdAPE %.1f%%, worst %s\n", total.Column, total.N, total.MAPEPct, total.MdAPEPct, total.Worst[0].Key)
	// Output:
	// statuses 2/3
	// decode total tok/s: n 2, MAPE 7.5%, MdAPE 7.5%, worst decode 8K x 1
}

func ExampleRender() {
	m, err := matrix.Load("testdata/seed.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	var b strings.Builder
	if err := matrix.Render(&b, m, m, "table"); err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "Statuses:") || strings.HasPrefix(line, "decode total tok/s:") {
			fmt.Println(line)
		}
	}
	// Output:
	// Statuses: 64/64 decode cells match
	// decode total tok/s: n 43, MAPE 0.0%, MdAPE 0.0%, worst 8K x 1 +0.0%, 8K x 2 +0.0%, 8K x 4 +0.0%
}
