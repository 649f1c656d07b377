package matrix

import (
	"bytes"
	"strings"
	"testing"
)

// requireCSVRoundTrip checks that a parsed matrix survives WriteCSV and ParseCSV within the
// printed precision (prefill concurrency is always written as 1).
func requireCSVRoundTrip(t *testing.T, m *Matrix) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCSV(&b, m); err != nil {
		t.Fatalf("WriteCSV: %v", err)
	}
	got, err := ParseCSV(bytes.NewReader(b.Bytes()), "round.csv")
	if err != nil {
		t.Fatalf("ParseCSV(WriteCSV(m)): %v\n%s", err, b.String())
	}
	want := *m
	want.Prefill = append([]Cell(nil), m.Prefill...)
	for i := range want.Prefill {
		want.Prefill[i].Concurrency = 1
	}
	requireSameCells(t, got, &want)
}

// requireJSONRoundTrip checks that WriteJSON, ParseJSON, WriteJSON gives the same bytes.
func requireJSONRoundTrip(t *testing.T, m *Matrix) {
	t.Helper()
	var first, second bytes.Buffer
	if err := WriteJSON(&first, m); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	back, err := ParseJSON(bytes.NewReader(first.Bytes()), "round.json")
	if err != nil {
		t.Fatalf("ParseJSON(WriteJSON(m)): %v\n%s", err, first.String())
	}
	if err := WriteJSON(&second, back); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatalf("JSON round trip differs:\n%s\n%s", first.String(), second.String())
	}
}

// requireUsable checks what every parsed matrix must allow: validation, comparison, rendering.
func requireUsable(t *testing.T, m *Matrix) {
	t.Helper()
	if err := m.Validate(); err != nil {
		t.Fatalf("parsed matrix does not validate: %v", err)
	}
	Compare(m, m)
	if len(m.Cells()) <= 16 { // keeps fuzzing fast; TestRender* cover the full seed
		for _, f := range []string{"table", "markdown"} {
			if err := Render(&bytes.Buffer{}, m, m, f); err != nil {
				t.Fatalf("Render(%s): %v", f, err)
			}
		}
	}
}

// maxFuzzInput caps a fuzz input: the targets stay cheap (thousands of executions a second) and
// a new interesting input minimises quickly. The full seed matrix is covered by the Test* tests.
const maxFuzzInput = 8 << 10

// smallSeed is the seed matrix cut to its first prefill and decode cells, a small corpus entry.
func smallSeed(f *testing.F) *Matrix {
	m := *loadSeed(f)
	m.Prefill, m.Decode = m.Prefill[:min(3, len(m.Prefill))], m.Decode[:min(5, len(m.Decode))]
	return &m
}

func FuzzParseText(f *testing.F) {
	f.Add(page(rowPrefill, rowDecode))
	f.Add(page(strings.Replace(rowDecode, "| 8K |", "| 1019K |", 1)))
	f.Add("- GPU count\n- 4\n| Phase | Context | Requests at once | Status |\n|---|---|---|---|\n| Prefill | 8K | 1 | Valid |")
	f.Add("Launch command\nvllm serve m --max-model-len 1kPrefill\n| Phase | Context | Requests at once | Status | TTFT |\n| Sustained decode | 1K | 2 | Over capacity | 1.5K ms |")
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > maxFuzzInput {
			return
		}
		m, err := ParseText(strings.NewReader(in), "fuzz.txt")
		if err != nil {
			return
		}
		requireUsable(t, m)
		requireCSVRoundTrip(t, m)
		requireJSONRoundTrip(t, m)
	})
}

func FuzzParseCSV(f *testing.F) {
	var b bytes.Buffer
	if err := WriteCSV(&b, smallSeed(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	header := strings.Join(CSVHeader(), ",") + "\n"
	f.Add(header + "decode,8K,8192,1,Valid,179.7,184.7,746.0,5.4,1.00,1,5391,30.00\n")
	f.Add(header + "prefill,8K,,,valid,1.2e4,,682,,,1,,\n")
	f.Add(header + "decode,\"8,192\",,64,queued,\"1,224.5\",NaN,-0,0x1p3,32,0,36734.0,30\n")
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > maxFuzzInput {
			return
		}
		m, err := ParseCSV(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			return
		}
		requireUsable(t, m)
		requireCSVRoundTrip(t, m)
		requireJSONRoundTrip(t, m)
	})
}

func FuzzParseJSON(f *testing.F) {
	var b bytes.Buffer
	if err := WriteJSON(&b, smallSeed(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	f.Add(`{"decode": [{"phase": "decode", "context": "8K", "concurrency": 2, "status": "Valid", "total_tok_s": 242.6}]}`)
	f.Add(`{"info": {"gpu_count": 4}, "prefill": [{"phase": "Prefill", "context": "1024K", "context_tokens": 1048511, "concurrency": 1, "status": "valid", "completed": null}]}`)
	f.Add(`{} {}`)
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > maxFuzzInput {
			return
		}
		m, err := ParseJSON(strings.NewReader(in), "fuzz.json")
		if err != nil {
			return
		}
		requireUsable(t, m)
		requireJSONRoundTrip(t, m)
		requireCSVRoundTrip(t, m)
	})
}

func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"179.7", "8,174.0", "12K", "13.2K", "—", "682 ms", "30.0 s", "1,2", "-0.5M"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseNumber(s); err == nil && v != v && !isAbsent(strings.TrimSpace(s)) {
			t.Fatalf("ParseNumber(%q) = NaN without an absent mark", s)
		}
		_, _ = ParseMillis(s)
		_, _ = ParseSeconds(s)
		_, _ = parseCount(s)
		if n, err := ParseContext(s); err == nil && n <= 0 {
			t.Fatalf("ParseContext(%q) = %d", s, n)
		}
		_, _ = LabelTokens(s, Decode, 1<<20, 4096)
	})
}
