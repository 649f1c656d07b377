package workload

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestTraceStreamStats: the streamed excerpts of the public traces summarise to the statistics
// a separate implementation (the traces' own Python script, run on the same excerpts) printed:
// counts, span, mean and p99 60-second rate, nearest-rank token percentiles, and for Mooncake
// the unbounded-cache prefix reuse. Rates and means within 0.1 %, integers exactly.
func TestTraceStreamStats(t *testing.T) {
	for _, c := range []struct {
		file             string
		rows             int
		span, mean, p99w float64
		inMean           float64
		inMed, inP99     int
		outMean          float64
		outMed, outP99   int
		reuse            float64
	}{
		{"azure_code_300.csv", 300, 216.838, 1.3835, 3.95, 2091.8, 1364, 7436, 23.8, 13, 155, 0},
		{"azure_conv_300.csv", 300, 84.029, 3.5702, 3.1833, 900.0, 972, 4085, 256.2, 217, 575, 0},
		{"mooncake_conversation_400.jsonl", 400, 141, 2.8369, 2.95, 14276.3, 8974, 89867, 365.2, 370, 906, 0.137},
		{"mooncake_synthetic_300.jsonl", 300, 86.790, 3.4566, 3.4667, 12843.9, 5891, 56397, 191.1, 161, 790, 0.049},
	} {
		s, err := OpenTrace(filepath.Join("testdata", "traces", c.file), StreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := StreamStats(s)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		near := func(name string, got, want, tol float64) {
			if math.Abs(got-want) > tol*math.Abs(want) {
				t.Errorf("%s: %s %.6g, want %.6g", c.file, name, got, want)
			}
		}
		if st.Requests != c.rows {
			t.Errorf("%s: %d rows, want %d", c.file, st.Requests, c.rows)
		}
		// The script prints 3 to 5 significant digits: the tolerance covers its rounding.
		near("span", st.SpanS, c.span, 1e-4)
		near("mean rate", st.MeanReqS, c.mean, 1e-3)
		near("p99 60 s rate", st.P99Window60ReqS, c.p99w, 1e-3)
		// Means are printed to 0.1 token, the reuse to 0.1 %: half a unit of the last digit.
		if math.Abs(st.Input.Mean-c.inMean) > 0.05 || math.Abs(st.Output.Mean-c.outMean) > 0.05 {
			t.Errorf("%s: input mean %.4f, output mean %.4f, want %.1f and %.1f", c.file, st.Input.Mean, st.Output.Mean, c.inMean, c.outMean)
		}
		if st.Input.Median != c.inMed || st.Input.P99 != c.inP99 || st.Output.Median != c.outMed || st.Output.P99 != c.outP99 {
			t.Errorf("%s: input median/p99 %d/%d output %d/%d, want %d/%d %d/%d", c.file, st.Input.Median, st.Input.P99,
				st.Output.Median, st.Output.P99, c.inMed, c.inP99, c.outMed, c.outP99)
		}
		if math.Abs(st.PrefixReuseShare-c.reuse) > 0.0005 {
			t.Errorf("%s: prefix reuse %.5f, want %.3f", c.file, st.PrefixReuseShare, c.reuse)
		}
	}
}

// TestTraceStreamMatchesLoadedTrace: a streamed trace gives the requests a trace workload loads
// whole (same arrivals, lengths, prompt ids and block ids), for both formats.
func TestTraceStreamMatchesLoadedTrace(t *testing.T) {
	for _, f := range []string{"azure_conv_300.csv", "mooncake_conversation_400.jsonl"} {
		path := filepath.Join("testdata", "traces", f)
		spec := &Spec{Name: "t", Kind: KindTrace, Trace: Trace{File: path, Speedup: 2}}
		whole, err := spec.Requests(1)
		if err != nil {
			t.Fatal(err)
		}
		s, err := OpenTrace(path, StreamOptions{Speed: 2})
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for q, ok := s.Next(); ok; q, ok = s.Next() {
			w := whole[i]
			if !reflect.DeepEqual(q, w) {
				t.Fatalf("%s: request %d streamed %+v, loaded %+v", f, i, q, w)
			}
			i++
		}
		s.Close()
		if s.Err() != nil || i != len(whole) {
			t.Fatalf("%s: %d streamed, %d loaded, err %v", f, i, len(whole), s.Err())
		}
	}
}

// TestTraceStreamWindowAndScale: --from/--to keep the rows in the window and start it at 0;
// --speed divides times; --rate-scale thins (0.5 keeps about half) or copies (3 sends every row
// three times, each copy with its own block ids).
func TestTraceStreamWindowAndScale(t *testing.T) {
	path := filepath.Join("testdata", "traces", "mooncake_conversation_400.jsonl")
	count := func(o StreamOptions) (n int, first, last int64, ids map[uint64]bool) {
		s, err := OpenTrace(path, o)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ids = map[uint64]bool{}
		first = -1
		for q, ok := s.Next(); ok; q, ok = s.Next() {
			if first < 0 {
				first = int64(q.At)
			}
			last = int64(q.At)
			ids[q.Blocks[0]] = true
			n++
		}
		if s.Err() != nil {
			t.Fatal(s.Err())
		}
		return
	}
	all, _, lastAll, idsAll := count(StreamOptions{})
	win, first, last, _ := count(StreamOptions{FromS: 30, ToS: 90})
	if first != 0 || last >= 60e9 || win == 0 || win >= all {
		t.Errorf("window 30-90 s: %d of %d rows, first at %d ns, last at %d ns", win, all, first, last)
	}
	_, _, lastFast, _ := count(StreamOptions{Speed: 4})
	if lastFast != int64(math.Round(float64(lastAll)/4)) {
		t.Errorf("speed 4: last arrival %d, want %d / 4", lastFast, lastAll)
	}
	half, _, _, _ := count(StreamOptions{RateScale: 0.5, Seed: 3})
	if half < all*4/10 || half > all*6/10 {
		t.Errorf("rate scale 0.5: %d of %d rows", half, all)
	}
	triple, _, _, ids3 := count(StreamOptions{RateScale: 3})
	if triple != 3*all || len(ids3) != 3*len(idsAll) {
		t.Errorf("rate scale 3: %d requests (want %d), %d distinct first block ids (want %d)", triple, 3*all, len(ids3), 3*len(idsAll))
	}
}

// TestTraceStreamErrors: a malformed row stops the stream with the file and line; nothing is
// skipped silently.
func TestTraceStreamErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, body, want string }{
		{"bad.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,10,5\n2023-11-16 18:17:04.00,x,5\n", "bad.csv: line 3: ContextTokens"},
		{"order.csv", "arrival_s,input_tokens,output_tokens\n1,10,5\n0.5,10,5\n", "order.csv: line 3: arrival"},
		{"hash.jsonl", "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 5, \"hash_ids\": [1, 2, 3]}\n", "hash.jsonl: line 1: hash_ids: 3 ids for 1000 input tokens: want at most 2"},
		{"json.jsonl", "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5}\n{\"timestamp\": 1,\n", "json.jsonl: line 2"},
		{"neg.jsonl", "{\"timestamp\": 0, \"input_length\": -3, \"output_length\": 5}\n", "neg.jsonl: line 1: input_length"},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenTrace(p, StreamOptions{})
		if err == nil {
			for _, ok := s.Next(); ok; _, ok = s.Next() {
			}
			err = s.Err()
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// FuzzTraceStream: whatever the bytes, a streamed trace returns requests in arrival order or an
// error naming the file; it never panics.
func FuzzTraceStream(f *testing.F) {
	for _, s := range []string{
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,3180,8\n",
		"{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 5, \"hash_ids\": [0, 1]}\n{\"timestamp\": 3000, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 2]}\n",
		"arrival_s,input_tokens,output_tokens,session_id\n0,10,5,a\n1,20,5,a\n",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, body string, csv bool) {
		name := "f.jsonl"
		if csv {
			name = "f.csv"
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenTrace(p, StreamOptions{})
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		defer s.Close()
		var last int64 = -1
		for q, ok := s.Next(); ok; q, ok = s.Next() {
			if int64(q.At) < last || q.InputTokens < 1 || q.OutputTokens < 1 {
				t.Fatalf("request %+v after %d", q, last)
			}
			last = int64(q.At)
		}
		if err := s.Err(); err != nil && !strings.Contains(err.Error(), name) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
