package workload

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCSV(t *testing.T) {
	cases := []struct {
		name, in string
		opt      TraceOptions
		want     []TraceRow // Line ignored
	}{
		{"canonical", "arrival_s,input_tokens,output_tokens\n0.5,100,10\n0,200,20\n",
			TraceOptions{}, []TraceRow{{0, 200, 20, 0, 0, 0}, {500_000_000, 100, 10, 0, 0, 0}}},
		{"milliseconds and comments", "# a trace\narrival_ms,prompt_tokens,max_tokens\n10,5,6\n# mid\n30,7,8\n",
			TraceOptions{}, []TraceRow{{0, 5, 6, 0, 0, 0}, {20_000_000, 7, 8, 0, 0, 0}}},
		{"bare timestamp in seconds", "timestamp,input_tokens,output_tokens\n100,1,1\n101.25,2,2\n",
			TraceOptions{}, []TraceRow{{0, 1, 1, 0, 0, 0}, {1_250_000_000, 2, 2, 0, 0, 0}}},
		{"bare timestamp with time_unit", "timestamp,input_tokens,output_tokens\n100,1,1\n101,2,2\n",
			TraceOptions{TimeUnit: "ms"}, []TraceRow{{0, 1, 1, 0, 0, 0}, {1_000_000, 2, 2, 0, 0, 0}}},
		{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n",
			TraceOptions{}, []TraceRow{{0, 374, 44, 0, 0, 0}, {4_314_579_000, 396, 109, 0, 0, 0}}},
		{"burstgpt", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n45,GPT-4,1087,230,1317,Conversation log\n",
			TraceOptions{}, []TraceRow{{0, 472, 18, 0, 0, 0}, {40_000_000_000, 1087, 230, 0, 0, 0}}},
		{"prefix and extra columns", "arrival_s,input_tokens,output_tokens,prefix_id,prefix_tokens,user\n0,1000,10,sys,800,a\n1,900,10,sys,800,b\n2,50,5,,,c\n",
			TraceOptions{}, []TraceRow{{0, 1000, 10, prefixHash("sys"), 800, 0}, {1e9, 900, 10, prefixHash("sys"), 800, 0}, {2e9, 50, 5, 0, 0, 0}}},
		{"stable order of ties", "arrival_s,input_tokens,output_tokens\n1,3,1\n0,1,1\n1,2,1\n",
			TraceOptions{}, []TraceRow{{0, 1, 1, 0, 0, 0}, {1e9, 3, 1, 0, 0, 0}, {1e9, 2, 1, 0, 0, 0}}},
		{"BOM and spaced header", "\ufeffArrival S , Input Tokens,Output-Tokens\n0,1,2\n",
			TraceOptions{}, []TraceRow{{0, 1, 2, 0, 0, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseCSV(strings.NewReader(c.in), "t.csv", c.opt)
			if err != nil {
				t.Fatalf("ParseCSV: %v", err)
			}
			for i := range got {
				got[i].Line = 0
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseJSONL(t *testing.T) {
	cases := []struct {
		name, in string
		want     []TraceRow
	}{
		{"canonical", `{"arrival_s": 1.5, "input_tokens": 10, "output_tokens": 2}` + "\n\n" + `{"arrival_s": 0, "input_tokens": 20, "output_tokens": 3}`,
			[]TraceRow{{0, 20, 3, 0, 0, 0}, {1_500_000_000, 10, 2, 0, 0, 0}}},
		{"mooncake (timestamp in ms; hash_ids apart)", `{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]}` + "\n" +
			`{"timestamp": 30535, "input_length": 6472, "output_length": 26, "hash_ids": [46]}`,
			[]TraceRow{{0, 6955, 52, 0, 0, 0}, {3_053_000_000, 6472, 26, 0, 0, 0}}},
		{"strings and numeric prefix id", `{"arrival_ms": "5", "input_tokens": "64", "output_tokens": 8, "prefix_id": 7, "prefix_tokens": 32}`,
			[]TraceRow{{0, 64, 8, prefixHash("7"), 32, 0}}},
		{"null fields skipped", `{"arrival_s": 0, "input_tokens": 4, "output_tokens": 4, "prefix_id": null}`,
			[]TraceRow{{0, 4, 4, 0, 0, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseJSONL(strings.NewReader(c.in), "t.jsonl", TraceOptions{})
			if err != nil {
				t.Fatalf("ParseJSONL: %v", err)
			}
			for i := range got {
				got[i].Line = 0
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestTraceErrors(t *testing.T) {
	csvCases := []struct{ in, want string }{
		{"", "empty"},
		{"arrival_s,input_tokens\n0,1\n", "lacks an arrival, input or output column"},
		{"arrival_s,input_tokens,output_tokens\n", "no requests"},
		{"arrival_s,input_tokens,output_tokens\n0,1,1\nx,2,2\n", "t.csv: line 3: arrival_s: \"x\" is not a number or a datetime"},
		{"arrival_s,input_tokens,output_tokens\n0,0,1\n", "line 2: input_tokens: 0: want a whole number of tokens"},
		{"arrival_s,input_tokens,output_tokens\n0,1.5,1\n", "line 2: input_tokens: 1.5"},
		{"arrival_s,input_tokens,output_tokens\n0,1,99999999\n", "line 2: output_tokens: 9.9999999e+07"},
		{"arrival_s,input_tokens,output_tokens\n0,1\n", "line 2: output_tokens: missing"},
		{"arrival_s,input_tokens,output_tokens,prefix_tokens\n0,10,1,5\n", "line 2: prefix_tokens: 5 without a prefix_id"},
		{"arrival_s,input_tokens,output_tokens,prefix_id,prefix_tokens\n0,10,1,a,20\n", "20 is more than the 10 input tokens"},
		{"arrival_s,input_tokens,output_tokens,prefix_id\n0,10,1,a\n", "without prefix_tokens"},
		{"arrival_s,arrival_ms,input_tokens,output_tokens\n", "both give the arrival time"},
		{"arrival_s,input_tokens,output_tokens\n0,1,1\n1e300,1,1\n", "not a usable time"},
		{"arrival_s,input_tokens,output_tokens\n0,\"1,1\n", "line 2"},
	}
	for _, c := range csvCases {
		_, err := ParseCSV(strings.NewReader(c.in), "t.csv", TraceOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCSV(%q): error %v, want it to contain %q", c.in, err, c.want)
		}
	}
	jsonCases := []struct{ in, want string }{
		{"", "no requests"},
		{"[1,2]\n", "t.jsonl: line 1: want a JSON object"},
		{`{"arrival_s": 0, "input_tokens": 1, "output_tokens": 1}` + "\n" + `{"arrival_s": 0, "input_tokens": 1}`, "line 2: output_tokens: missing"},
		{`{"arrival_s": 0, "input_tokens": [1], "output_tokens": 1}`, "line 1: input_tokens: want a number or a string"},
		{`{"arrival_s": 0, "arrival_ms": 0, "input_tokens": 1, "output_tokens": 1}`, "both give the arrival time"},
		{`{"input_tokens": 1, "output_tokens": 1}`, "line 1: arrival: missing"},
	}
	for _, c := range jsonCases {
		_, err := ParseJSONL(strings.NewReader(c.in), "t.jsonl", TraceOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseJSONL(%q): error %v, want it to contain %q", c.in, err, c.want)
		}
	}
	if _, err := ParseCSV(strings.NewReader("a"), "t.csv", TraceOptions{TimeUnit: "h"}); err == nil || !strings.Contains(err.Error(), `time unit "h"`) || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("bad time unit: %v", err)
	}
	if _, err := ParseCSV(strings.NewReader("a"), "t.csv", TraceOptions{TimeUnit: "mss"}); err == nil || !strings.Contains(err.Error(), `time unit "mss": did you mean "ms"?`) {
		t.Errorf("near-miss time unit: %v", err)
	}
}

// checkRows asserts the parsers' output invariants.
func checkRows(t *testing.T, rows []TraceRow) {
	t.Helper()
	for i, r := range rows {
		if r.ArrivalNS < 0 || r.ArrivalNS > maxArrivalNS {
			t.Fatalf("row %d: arrival %d ns out of range", i, r.ArrivalNS)
		}
		if i > 0 && r.ArrivalNS < rows[i-1].ArrivalNS {
			t.Fatalf("row %d: arrivals not sorted", i)
		}
		if r.InputTokens < 1 || r.InputTokens > maxTokens || r.OutputTokens < 1 || r.OutputTokens > maxTokens {
			t.Fatalf("row %d: token counts %d/%d out of range", i, r.InputTokens, r.OutputTokens)
		}
		if r.PrefixTokens < 0 || r.PrefixTokens > r.InputTokens || (r.PrefixTokens > 0) != (r.PrefixID != 0) {
			t.Fatalf("row %d: prefix %d/%d inconsistent", i, r.PrefixID, r.PrefixTokens)
		}
	}
	if len(rows) > 0 && rows[0].ArrivalNS != 0 {
		t.Fatalf("first arrival %d, want 0", rows[0].ArrivalNS)
	}
}

func FuzzParseCSV(f *testing.F) {
	for _, s := range []string{
		"arrival_s,input_tokens,output_tokens\n0.5,100,10\n0,200,20\n",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n",
		"Timestamp,Model,Request tokens,Response tokens\n5,x,472,18\n",
		"arrival_ms,input_tokens,output_tokens,prefix_id,prefix_tokens\n0,100,1,p,50\n3,100,1,p,50\n",
		"# c\ntimestamp,prompt_tokens,max_tokens\n1e3,1,1\n",
	} {
		f.Add(s, "")
		f.Add(s, "ms")
	}
	f.Fuzz(func(t *testing.T, in, unit string) {
		rows, err := ParseCSV(strings.NewReader(in), "f.csv", TraceOptions{TimeUnit: unit})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkRows(t, rows)
	})
}

func FuzzParseJSONL(f *testing.F) {
	for _, s := range []string{
		`{"arrival_s": 1.5, "input_tokens": 10, "output_tokens": 2}` + "\n" + `{"arrival_s": 0, "input_tokens": 20, "output_tokens": 3}`,
		`{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]}`,
		`{"arrival_ms": "5", "input_tokens": "64", "output_tokens": 8, "prefix_id": 7, "prefix_tokens": 32}`,
		`{"timestamp": "2023-11-16T18:15:46Z", "prompt_tokens": 3, "max_tokens": 4}`,
	} {
		f.Add(s, "")
		f.Add(s, "s")
	}
	f.Fuzz(func(t *testing.T, in, unit string) {
		rows, err := ParseJSONL(strings.NewReader(in), "f.jsonl", TraceOptions{TimeUnit: unit})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.jsonl: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkRows(t, rows)
	})
}
