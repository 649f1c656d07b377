package calibration

import (
	"testing"

	"github.com/servesim/servesim/matrix"
)

func TestFilter(t *testing.T) {
	pre := matrix.NewCell(matrix.Prefill, "64K", 65536, 1)
	d8 := matrix.NewCell(matrix.Decode, "8K", 8192, 8)
	d16 := matrix.NewCell(matrix.Decode, "128K", 131072, 16)
	big := matrix.NewCell(matrix.Decode, "1019K", 1044416, 2)
	for _, c := range []struct {
		expr string
		cell matrix.Cell
		want bool
	}{
		{"", d16, true},
		{"concurrency<=8", pre, true}, // prefill rows have concurrency 1
		{"concurrency<=8", d8, true},
		{"concurrency<=8", d16, false},
		{"concurrency>=16", d16, true},
		{"context<=64K", pre, true},
		{"context<=64K", d16, false},
		{"context>=128K", big, true},
		{"context>=128K", d16, true},
		{"phase=decode,concurrency<16", d8, true},
		{"phase=decode,concurrency<16", pre, false},
		{"phase!=decode", pre, true},
		{"context=8192", d8, true},
		{"ctx!=8K", d8, false},
		{"c>1", big, true},
	} {
		f, err := ParseFilter(c.expr)
		if err != nil {
			t.Fatalf("ParseFilter(%q): %v", c.expr, err)
		}
		if got := f.Match(&c.cell); got != c.want {
			t.Errorf("%q on %v = %v, want %v", c.expr, c.cell.Key(), got, c.want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	for _, s := range []string{"concurrency", "speed>3", "concurrency<=x", "context<=8Q", "phase<decode", "phase=train", "concurrency=>8", ",", "concurrency<=0"} {
		if _, err := ParseFilter(s); err == nil {
			t.Errorf("ParseFilter(%q): want an error", s)
		}
	}
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"concurrency<=8", "context<=64K", "phase=decode,concurrency>=16", "context>=128K,c!=2", ""} {
		f.Add(s)
	}
	cells := []matrix.Cell{matrix.NewCell(matrix.Prefill, "8K", 8192, 1), matrix.NewCell(matrix.Decode, "1019K", 1044416, 2)}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		if err != nil {
			return
		}
		for i := range cells {
			flt.Match(&cells[i])
		}
	})
}

// TestExclude: the seed scenario's exclusion takes out the 16K prefill row and nothing else, and
// excluded cells neither train nor count as test cells.
func TestExclude(t *testing.T) {
	ex, err := ParseExclude([]string{"phase=prefill,context=16K", "none"})
	if err != nil || len(ex) != 1 {
		t.Fatalf("ParseExclude: %v, %d filters; want 1", err, len(ex))
	}
	if _, err := ParseExclude([]string{"phase=x"}); err == nil {
		t.Error("ParseExclude(phase=x): nil error")
	}
	train, _ := ParseFilter("concurrency<=8")
	p := &Problem{Train: train, Exclude: ex}
	pre16 := matrix.NewCell(matrix.Prefill, "16K", 16384, 1)
	pre32 := matrix.NewCell(matrix.Prefill, "32K", 32768, 1)
	d16 := matrix.NewCell(matrix.Decode, "16K", 16384, 1)
	for _, c := range []struct {
		cell             matrix.Cell
		excluded, trains bool
	}{{pre16, true, false}, {pre32, false, true}, {d16, false, true}} {
		if got := p.excluded(&c.cell); got != c.excluded {
			t.Errorf("%v excluded = %v, want %v", c.cell.Key(), got, c.excluded)
		}
		if got := p.trains(&c.cell); got != c.trains {
			t.Errorf("%v trains = %v, want %v", c.cell.Key(), got, c.trains)
		}
	}
}
