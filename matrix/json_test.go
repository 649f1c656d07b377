package matrix

import (
	"bytes"
	"strings"
	"testing"
)

func TestJSONRoundTripSeed(t *testing.T) {
	m := loadSeed(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, m); err != nil {
		t.Fatal(err)
	}
	got, err := ParseJSON(bytes.NewReader(b.Bytes()), "seed.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.Info != m.Info {
		t.Errorf("Info: got %+v, want %+v", got.Info, m.Info)
	}
	requireSameCells(t, got, m)
	var again bytes.Buffer
	if err := WriteJSON(&again, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), b.Bytes()) {
		t.Errorf("WriteJSON(ParseJSON(WriteJSON(m))) differs from WriteJSON(m)")
	}
}

func TestWriteJSONNulls(t *testing.T) {
	c := NewCell(Decode, "32K", 32768, 128)
	c.Status = OverCapacity
	var b bytes.Buffer
	if err := WriteJSON(&b, &Matrix{Decode: []Cell{c}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"prefill": []`, `"total_tok_s": null`, `"completed": null`, `"status": "Over capacity"`, "\n    {\n      \"phase\": \"decode\","} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteJSON output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestParseJSONErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "m.json: incomplete input"},
		{"syntax", "{\n\"info\": {},\n\"prefill\": [,]}", "m.json:3: want well-formed JSON"},
		{"type", "{\n\"info\": {\"gpu_count\": \"four\"}}", `m.json:2:info.gpu_count: a JSON string: want a int`},
		{"unknown field", `{"infos": {}}`, `m.json: want a matrix object: json: unknown field "infos"`},
		{"unknown cell field", `{"decode": [{"phase": "decode", "context": "8K", "concurrency": 1, "status": "Valid", "speed": 3}]}`, `m.json:decode[0]: want a cell: json: unknown field "speed"`},
		{"bad status", `{"decode": [{"phase": "decode", "context": "8K", "concurrency": 1, "status": "Fine"}]}`, `m.json:decode[0]: want a cell: unknown status "Fine"`},
		{"wrong phase", `{"decode": [{"phase": "prefill", "context": "8K", "concurrency": 1, "status": "Valid"}]}`, `m.json: want a consistent matrix: decode[0] (prefill 8K): phase "prefill": want "decode"`},
		{"no tokens", `{"decode": [{"phase": "decode", "context": "big", "concurrency": 1, "status": "Valid"}]}`, "context tokens 0: want > 0"},
		{"trailing", `{} {}`, "m.json:1: data after the matrix: want one JSON object"},
	}
	for _, tt := range tests {
		_, err := ParseJSON(strings.NewReader(tt.in), "m.json")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestParseJSONDefaults(t *testing.T) {
	m, err := ParseJSON(strings.NewReader(`{"decode": [{"phase": "decode", "context": "8K", "concurrency": 2, "status": "Valid", "total_tok_s": 242.6}]}`), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	c := m.Decode[0]
	if c.ContextTokens != 8192 || c.TotalTokS != 242.6 || c.Completed != -1 || !close(c.TTFTms, nan(), 0) {
		t.Errorf("got %+v: want tokens from the label, missing values absent", c)
	}
}
